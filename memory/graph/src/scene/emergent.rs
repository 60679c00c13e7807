//! Entering scenes: a turn's situation joins the emergent scene it resembles, or becomes
//! evidence for a new one; declared scenes are entered by name.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::features::{LEARNED_KINDS, MAX_FEATURES, SceneFeature, fingerprint, scene_similarity};
use super::key::{normalize_scene_key, without_suffix};
use super::store::{SceneOrigin, SceneRecall, ensure_scene, normalized_keys};
use super::turns::{MAX_TURN_SCENES, note_in};
use crate::error::SqlContext;
use crate::{GraphError, GraphStore};

/// A situation at least this similar to an emergent scene joins it.
pub const JOIN_THRESHOLD: f64 = 0.5;
/// Emergent scenes at least this similar to a situation are recalled by it.
pub const RECALL_THRESHOLD: f64 = 0.35;
/// Sightings of a new situation (same label) before it becomes an emergent scene.
pub const MIN_EVIDENCE: i64 = 2;
/// Labels of unjoined situations remembered at most; the least recently seen go first. A
/// situation seen once and never again is noise, and without a bound every such sighting
/// would stay forever.
pub const MAX_EVIDENCE: i64 = 4_096;

/// The scenes one turn is in, from [`GraphStore::enter_scene_with_hint`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SceneEntry {
    /// The emergent scene when there is one, else the first declared scene.
    pub primary: Option<String>,
    /// Declared scenes first (in the order given, each once), then the emergent one.
    pub keys: Vec<String>,
}

/// Every emergent scene with its fingerprint, by key. Linear in the emergent scenes: there are
/// as many as recurring situations, not as many as turns.
///
/// A scene entered more than once is matched on the features it saw at least twice: one turn's
/// own topic words are noise once the scene has a history, and counting them would make every
/// join dilute the scene until no situation resembled it and a new look-alike scene was made
/// every few turns (a history of "turn number N" messages did exactly that).
///
/// With `with_facts_only`, only scenes that hold a ref to a relation: recall has nothing to
/// read from the others, and on a young graph that is nearly all of them.
fn emergent_scenes(
    conn: &Connection,
    path: &Path,
    with_facts_only: bool,
) -> Result<Vec<(String, Vec<SceneFeature>)>, GraphError> {
    const OP: &str = "emergent_scenes";
    let mut stmt = if with_facts_only {
        conn.prepare_cached(
            "SELECT s.key, f.feature, f.weight FROM scenes s \
             JOIN scene_features f ON f.scene_key = s.key \
             WHERE s.origin = 'emergent' AND (s.strength < 2 OR f.hits >= 2) \
             AND EXISTS (SELECT 1 FROM scene_relation_refs r WHERE r.scene_key = s.key) \
             ORDER BY s.key, f.weight DESC, f.feature",
        )
    } else {
        conn.prepare_cached(
            "SELECT s.key, f.feature, f.weight FROM scenes s \
             JOIN scene_features f ON f.scene_key = s.key \
             WHERE s.origin = 'emergent' AND (s.strength < 2 OR f.hits >= 2) \
             ORDER BY s.key, f.weight DESC, f.feature",
        )
    }
    .ctx(OP, path)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
            ))
        })
        .ctx(OP, path)?;
    let mut out: Vec<(String, Vec<SceneFeature>)> = Vec::new();
    for row in rows {
        let (key, feature, weight) = row.ctx(OP, path)?;
        let feature = SceneFeature::stored(feature, weight);
        match out.last_mut() {
            Some((last, features)) if *last == key => features.push(feature),
            _ => out.push((key, vec![feature])),
        }
    }
    Ok(out)
}

/// Scene `?1`'s features past its `?2` most often seen (heaviest first among equals): the
/// ones a trim drops. Picked by a read and dropped one by one by their key, because the one
/// statement that does both (`DELETE … WHERE feature NOT IN (SELECT … ORDER BY … LIMIT ?2)`)
/// took ~100 µs for a 24-feature scene against ~10 µs for this read and under 1 µs per keyed
/// delete (bundled SQLite, same rows), and it ran on every turn. Parsed once per connection
/// only because the connection plans without bound values (`hearth_memory::keep_statements`):
/// its `= ?1 … ORDER BY` was otherwise parsed again on every run.
const FEATURES_PAST: &str = "SELECT feature FROM scene_features WHERE scene_key = ?1 \
     ORDER BY hits DESC, weight DESC, feature LIMIT -1 OFFSET +?2";

/// Drops all but the `?1` most recently seen labels of unjoined situations; among labels seen
/// in the same millisecond the one later in byte order stays. That tie order is the index's
/// (`scene_evidence_updated` holds `label` after `updated_ms`), so the newest are read off the
/// index: sorting the table on every unjoined turn instead took ~1.3 ms at [`MAX_EVIDENCE`]
/// labels against ~0.1 ms (bundled SQLite, same rows).
const TRIM_EVIDENCE: &str = "DELETE FROM scene_evidence WHERE label IN (SELECT label FROM \
     scene_evidence ORDER BY updated_ms DESC, label DESC LIMIT -1 OFFSET +?1)";

/// Stores `features` on scene `key`, each at max(stored, its weight) with one more sighting,
/// then keeps the scene's [`MAX_FEATURES`] most often seen (heaviest first among equals): a
/// scene's stored fingerprint stays bounded however often it is entered.
pub(crate) fn upsert_features(
    conn: &Connection,
    path: &Path,
    key: &str,
    features: &[SceneFeature],
) -> Result<(), GraphError> {
    const OP: &str = "scene_features";
    let mut stmt = conn
        .prepare_cached(
            "INSERT INTO scene_features (scene_key, feature, weight) VALUES (?1, ?2, ?3) \
             ON CONFLICT (scene_key, feature) DO UPDATE SET weight = max(weight, excluded.weight), \
             hits = hits + 1",
        )
        .ctx(OP, path)?;
    for f in features {
        stmt.execute(params![key, f.key(), f.weight()])
            .ctx(OP, path)?;
    }
    let past: Vec<String> = conn
        .prepare_cached(FEATURES_PAST)
        .ctx(OP, path)?
        .query_map(params![key, MAX_FEATURES as i64], |r| r.get(0))
        .ctx(OP, path)?
        .collect::<Result<_, _>>()
        .ctx(OP, path)?;
    if past.is_empty() {
        return Ok(());
    }
    let mut drop = conn
        .prepare_cached("DELETE FROM scene_features WHERE scene_key = ?1 AND feature = ?2")
        .ctx(OP, path)?;
    for feature in &past {
        drop.execute(params![key, feature]).ctx(OP, path)?;
    }
    Ok(())
}

/// Enters the declared scenes `keys`: each made when new, reinforced, and taught the features
/// its own key names ([`key_features`]).
pub(crate) fn enter_declared(
    conn: &Connection,
    path: &Path,
    keys: &[String],
    now: i64,
) -> Result<(), GraphError> {
    for key in keys {
        ensure_scene(conn, path, key, SceneOrigin::Declared, now)?;
        reinforce(conn, path, key, now)?;
        upsert_features(conn, path, key, &key_features(key))?;
    }
    Ok(())
}

/// Strength + 1 and `updated_ms` = `now` for scene `key`.
pub(crate) fn reinforce(
    conn: &Connection,
    path: &Path,
    key: &str,
    now: i64,
) -> Result<(), GraphError> {
    conn.prepare_cached(
        "UPDATE scenes SET strength = strength + 1, updated_ms = max(updated_ms, ?2) WHERE key = ?1",
    )
    .ctx("enter_scene", path)?
    .execute(params![key, now])
    .ctx("enter_scene", path)
    .map(drop)
}

/// The features a declared key teaches its scene: its `kind:value` segments whose kind is one
/// of [`LEARNED_KINDS`]. Never the turn's whole fingerprint: a declared scene is what its name
/// says, and absorbing every situation it was entered in would make every declared scene look
/// like every other.
pub fn key_features(key: &str) -> Vec<SceneFeature> {
    without_suffix(key)
        .split('/')
        .filter_map(|segment| segment.split_once(':'))
        .filter(|(kind, _)| LEARNED_KINDS.contains(kind))
        .filter_map(|(kind, value)| SceneFeature::new(kind, value).ok())
        .collect()
}

/// A key for a new emergent scene: `base`, or `base#2`, `base#3`, … when taken.
fn free_key(conn: &Connection, path: &Path, base: &str) -> Result<String, GraphError> {
    const OP: &str = "enter_scene";
    let mut taken = conn
        .prepare_cached("SELECT 1 FROM scenes WHERE key = ?1")
        .ctx(OP, path)?;
    let mut candidate = base.to_owned();
    let mut n = 1u32;
    while taken
        .query_row([&candidate], |_| Ok(()))
        .optional()
        .ctx(OP, path)?
        .is_some()
    {
        n += 1;
        candidate = normalize_scene_key(&format!("{base}#{n}"))?;
    }
    Ok(candidate)
}

/// [`GraphStore::enter_scene`] inside the caller's transaction, on a fingerprint already made
/// canonical.
fn enter_in(
    conn: &Connection,
    path: &Path,
    features: &[SceneFeature],
    now: i64,
) -> Result<Option<String>, GraphError> {
    const OP: &str = "enter_scene";
    if features.is_empty() {
        return Ok(None);
    }
    let best = emergent_scenes(conn, path, false)?
        .into_iter()
        .map(|(key, stored)| (scene_similarity(features, &stored), key))
        // Most similar; among equals the first key, so the choice does not depend on order.
        .reduce(|a, b| if b.0 > a.0 { b } else { a });
    if let Some((similarity, key)) = best
        && similarity >= JOIN_THRESHOLD
    {
        upsert_features(conn, path, &key, features)?;
        reinforce(conn, path, &key, now)?;
        return Ok(Some(key));
    }
    let label = features
        .iter()
        .take(2)
        .map(SceneFeature::key)
        .collect::<Vec<_>>()
        .join("+");
    let count: i64 = conn
        .prepare_cached(
            "INSERT INTO scene_evidence (label, count, updated_ms) VALUES (?1, 1, ?2) \
             ON CONFLICT (label) DO UPDATE SET count = count + 1, updated_ms = excluded.updated_ms \
             RETURNING count",
        )
        .ctx(OP, path)?
        .query_row(params![label, now], |r| r.get(0))
        .ctx(OP, path)?;
    if count < MIN_EVIDENCE {
        conn.prepare_cached(TRIM_EVIDENCE)
            .ctx(OP, path)?
            .execute([MAX_EVIDENCE])
            .ctx(OP, path)?;
        return Ok(None);
    }
    let key = free_key(conn, path, &normalize_scene_key(&format!("auto:{label}"))?)?;
    ensure_scene(conn, path, &key, SceneOrigin::Emergent, now)?;
    upsert_features(conn, path, &key, features)?;
    // Only this situation's sightings are spent. Hearth differs from the original, which
    // deleted all evidence here and so forgot every other situation's first sighting.
    conn.prepare_cached("DELETE FROM scene_evidence WHERE label = ?1")
        .ctx(OP, path)?
        .execute([&label])
        .ctx(OP, path)?;
    Ok(Some(key))
}

impl GraphStore {
    /// Enters the emergent scene a situation resembles, as of `now_ms`. The most similar
    /// emergent scene (weighted Jaccard, [`crate::scene_similarity`]) at or above
    /// [`JOIN_THRESHOLD`] is reinforced (features upserted at max weight, strength + 1,
    /// updated now) and its key returned. Otherwise the sighting is evidence under a label
    /// made of the two heaviest features' keys; at [`MIN_EVIDENCE`] sightings it becomes scene
    /// `auto:<label>` (normalised; `#2`, `#3`, … when the key is taken), strength 1, with this
    /// fingerprint, and that label's evidence is spent. `None` when no scene was entered.
    ///
    /// `features` are made a fingerprint first ([`crate::scene_fingerprint`]: deduplicated,
    /// heaviest first, capped). Every call counts as a sighting: call it once per turn. A turn
    /// under a `scene_policy` of "none" does not call it (nor
    /// [`GraphStore::enter_scene_with_hint`] or [`GraphStore::note_turn_scenes`]): it has no
    /// scene keys and no features.
    pub fn enter_scene(
        &mut self,
        features: &[SceneFeature],
        now_ms: i64,
    ) -> Result<Option<String>, GraphError> {
        let features = fingerprint(features.iter().cloned());
        let tx = self.conn.transaction().ctx("enter_scene", &self.path)?;
        let key = enter_in(&tx, &self.path, &features, now_ms)?;
        tx.commit().ctx("enter_scene", &self.path)?;
        Ok(key)
    }

    /// Enters a turn's scenes: the `declared` ones (normalised; each created as declared,
    /// strength 1, when new, then strength + 1 and updated now, and taught only the features
    /// its own key names — [`key_features`]), and the emergent one [`GraphStore::enter_scene`]
    /// finds for `features`. One transaction; a declared key that normalises to nothing is
    /// [`GraphError::InvalidSceneKey`] and nothing is entered. Meant to run once per turn:
    /// each run adds strength.
    pub fn enter_scene_with_hint(
        &mut self,
        features: &[SceneFeature],
        declared: &[&str],
        now_ms: i64,
    ) -> Result<SceneEntry, GraphError> {
        self.enter_with_hint(None, features, declared, now_ms)
    }

    /// [`GraphStore::enter_scene_with_hint`], then [`GraphStore::note_turn_scenes`] of the
    /// entered keys for `turn_id`, in one transaction: a turn's scene bookkeeping costs one
    /// durable commit, not two.
    pub fn enter_turn_scenes(
        &mut self,
        turn_id: &str,
        features: &[SceneFeature],
        declared: &[&str],
        now_ms: i64,
    ) -> Result<SceneEntry, GraphError> {
        self.enter_with_hint(Some(turn_id), features, declared, now_ms)
    }

    fn enter_with_hint(
        &mut self,
        turn_id: Option<&str>,
        features: &[SceneFeature],
        declared: &[&str],
        now_ms: i64,
    ) -> Result<SceneEntry, GraphError> {
        const OP: &str = "enter_scene";
        let mut keys = normalized_keys(declared)?;
        let features = fingerprint(features.iter().cloned());
        // Scene bookkeeping, not a fact: its commit need not wait for the disk (`unsynced`).
        let primary = self.unsynced(OP, |store| {
            store.enter_keys(turn_id, &mut keys, &features, now_ms)
        })?;
        Ok(SceneEntry { primary, keys })
    }

    /// The transaction of [`GraphStore::enter_with_hint`]: `keys` holds the declared keys on
    /// the way in and gains the emergent scene entered; returns the primary scene.
    fn enter_keys(
        &mut self,
        turn_id: Option<&str>,
        keys: &mut Vec<String>,
        features: &[SceneFeature],
        now_ms: i64,
    ) -> Result<Option<String>, GraphError> {
        const OP: &str = "enter_scene";
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        enter_declared(&tx, &self.path, keys, now_ms)?;
        let emergent = enter_in(&tx, &self.path, features, now_ms)?;
        let primary = emergent.clone().or_else(|| keys.first().cloned());
        if let Some(key) = emergent
            && !keys.contains(&key)
        {
            keys.push(key);
        }
        if let Some(turn_id) = turn_id
            && !keys.is_empty()
        {
            note_in(&tx, &self.path, turn_id, keys, now_ms, MAX_TURN_SCENES)?;
        }
        tx.commit().ctx(OP, &self.path)?;
        Ok(primary)
    }

    /// Facts of the emergent scenes a situation resembles: those at or above
    /// [`RECALL_THRESHOLD`], most similar first (then by key), recalled as by
    /// [`GraphStore::recall_by_scene`] with `limit`, status as of `now_ms`. Reads only; a
    /// situation is not entered.
    pub fn recall_by_situation(
        &self,
        features: &[SceneFeature],
        limit: usize,
        now_ms: i64,
    ) -> Result<SceneRecall, GraphError> {
        let scenes = self.similar_scenes(features, limit, false)?;
        self.recall_scenes(scenes, limit, now_ms)
    }

    /// The keys of the `limit` emergent scenes most similar to `features` (at or above
    /// [`RECALL_THRESHOLD`]; then by key), only those holding a fact with `with_facts_only`.
    pub(crate) fn similar_scenes(
        &self,
        features: &[SceneFeature],
        limit: usize,
        with_facts_only: bool,
    ) -> Result<Vec<String>, GraphError> {
        let features = fingerprint(features.iter().cloned());
        let mut matched: Vec<(f64, String)> =
            emergent_scenes(&self.conn, &self.path, with_facts_only)?
                .into_iter()
                .map(|(key, stored)| (scene_similarity(&features, &stored), key))
                .filter(|(similarity, _)| *similarity >= RECALL_THRESHOLD)
                .collect();
        matched.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        // The `limit` most similar scenes at most: each costs two indexed reads, and a scene
        // further down could only add items the nearer ones outweigh in the prompt.
        matched.truncate(limit);
        Ok(matched.into_iter().map(|(_, key)| key).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_teaches_only_its_kind_value_segments() {
        let keys: Vec<String> = key_features("chan:telegram/project:x/topic:rust/peer_group:fam#2")
            .iter()
            .map(|f| f.key().to_owned())
            .collect();
        assert_eq!(keys, ["chan:telegram", "topic:rust", "peer_group:fam"]);
        assert!(key_features("work/home").is_empty());
    }

    #[test]
    fn the_per_turn_feature_trim_is_parsed_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut g = GraphStore::open(dir.path().join("graph.db")).expect("open");
        for i in 0..12 {
            let features = [
                SceneFeature::new("topic", &format!("t{}", i % 3)).expect("feature"),
                SceneFeature::new("word", &format!("w{}", i % 5)).expect("feature"),
            ];
            g.enter_turn_scenes(&format!("turn{i}"), &features, &["chan:cli"], 1_000 + i)
                .expect("enter");
        }
        let trim = g.conn.prepare_cached(FEATURES_PAST).expect("cached");
        assert!(trim.get_status(rusqlite::StatementStatus::Run) >= 12);
        assert_eq!(trim.get_status(rusqlite::StatementStatus::RePrepare), 0);
    }

    /// How SQLite runs `sql` on `g`'s connection, one line per step.
    fn plan(g: &GraphStore, sql: &str) -> Vec<String> {
        let mut stmt = g
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("explain");
        let count = stmt.parameter_count();
        let nulls = vec![rusqlite::types::Null; count];
        stmt.query_map(rusqlite::params_from_iter(nulls), |r| r.get(3))
            .expect("plan")
            .collect::<Result<_, _>>()
            .expect("steps")
    }

    #[test]
    fn the_evidence_trim_reads_the_newest_labels_off_the_index_and_keeps_the_bound() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut g = GraphStore::open(dir.path().join("graph.db")).expect("open");
        let steps = plan(&g, TRIM_EVIDENCE);
        assert!(
            steps.iter().all(|s| !s.contains("TEMP B-TREE")),
            "the trim sorts: {steps:?}"
        );
        // Situations seen once each, never joined: only the newest MAX_EVIDENCE stay. (Not
        // synced: four thousand fsyncs would only slow the test.)
        g.conn
            .execute_batch("PRAGMA synchronous = OFF")
            .expect("pragma");
        let extra = 3;
        for n in 0..MAX_EVIDENCE + extra {
            let features = [
                SceneFeature::new("topic", &format!("a{n}")).expect("feature"),
                SceneFeature::new("topic", &format!("b{n}")).expect("feature"),
            ];
            assert_eq!(g.enter_scene(&features, n).expect("enter"), None);
        }
        let (rows, oldest): (i64, i64) = g
            .conn
            .query_row(
                "SELECT count(*), min(updated_ms) FROM scene_evidence",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("count");
        assert_eq!((rows, oldest), (MAX_EVIDENCE, extra));
    }
}
