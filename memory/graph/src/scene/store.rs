//! The scene tables: scenes, their refs to relations and entities, and recall by scene.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::key::normalize_scene_key;
use crate::error::SqlContext;
use crate::{FactHit, FactId, GraphError, GraphStore};

/// How many relations and how many entities recall by scene returns unless told otherwise.
pub const DEFAULT_SCENE_RECALL_LIMIT: usize = 8;

/// Where a scene came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SceneOrigin {
    /// Named by the caller (a channel, a tool, a project key).
    Declared,
    /// Found by the graph: a situation seen often enough to be one.
    Emergent,
}

impl SceneOrigin {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SceneOrigin::Declared => "declared",
            SceneOrigin::Emergent => "emergent",
        }
    }

    fn parse(s: &str) -> SceneOrigin {
        if s == "emergent" {
            SceneOrigin::Emergent
        } else {
            SceneOrigin::Declared
        }
    }
}

/// One scene, as [`GraphStore::scenes`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SceneInfo {
    /// Its normalised key.
    pub key: String,
    /// Declared or emergent.
    pub origin: SceneOrigin,
    /// How often it was entered (1 when created).
    pub strength: u64,
    /// When it was last entered (Unix ms).
    pub updated_ms: i64,
}

/// An entity recalled by scene.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneEntity {
    /// Its display name.
    pub name: String,
    /// Its kind (`person`, `place`, …).
    pub kind: String,
    /// The largest weight of its refs in the scenes asked for.
    pub weight: f64,
    /// How often it was mentioned.
    pub mentions: u64,
}

/// What recall by scene found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneRecall {
    /// The scene keys recalled by, normalised (for recall by situation, the matching emergent
    /// scenes, most similar first).
    pub scenes: Vec<String>,
    /// Open relations tagged with those scenes, heaviest ref first; `score` is that weight.
    pub relations: Vec<FactHit>,
    /// Entities tagged with those scenes, heaviest ref first, then most mentioned.
    pub entities: Vec<SceneEntity>,
}

/// Creates scene `key` with `origin`, strength 1, when it does not exist; an existing scene is
/// left as it is.
pub(crate) fn ensure_scene(
    conn: &Connection,
    path: &Path,
    key: &str,
    origin: SceneOrigin,
    now: i64,
) -> Result<(), GraphError> {
    conn.prepare_cached(
        "INSERT INTO scenes (key, origin, strength, created_ms, updated_ms) \
         VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (key) DO NOTHING",
    )
    .ctx("ensure_scene", path)?
    .execute(params![key, origin.as_str(), now])
    .ctx("ensure_scene", path)
    .map(drop)
}

/// Tags relation `relation` (and its two ends) with scene `key` at `weight`: refs are upserted
/// with weight = max(existing, `weight`), and a ref tagged again starts a new half-life.
pub(crate) fn tag_relation(
    conn: &Connection,
    path: &Path,
    key: &str,
    relation: i64,
    weight: f64,
    now: i64,
) -> Result<(), GraphError> {
    const OP: &str = "tag_scene";
    ensure_scene(conn, path, key, SceneOrigin::Declared, now)?;
    let weight = weight.clamp(f64::MIN_POSITIVE, 1.0);
    conn.prepare_cached(
        "INSERT INTO scene_relation_refs (scene_key, relation_id, weight, created_ms, decayed_ms) \
         VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (scene_key, relation_id) DO UPDATE SET \
         weight = max(weight, excluded.weight), decayed_ms = excluded.decayed_ms",
    )
    .ctx(OP, path)?
    .execute(params![key, relation, weight, now])
    .ctx(OP, path)?;
    conn.prepare_cached(
        "INSERT INTO scene_entity_refs (scene_key, entity_id, weight, created_ms, decayed_ms) \
         SELECT ?1, e, ?3, ?4, ?4 FROM (SELECT subject_id AS e FROM relations WHERE id = ?2 \
         UNION SELECT object_id FROM relations WHERE id = ?2) WHERE true \
         ON CONFLICT (scene_key, entity_id) DO UPDATE SET \
         weight = max(weight, excluded.weight), decayed_ms = excluded.decayed_ms",
    )
    .ctx(OP, path)?
    .execute(params![key, relation, weight, now])
    .ctx(OP, path)?;
    Ok(())
}

/// Removes every ref relation `relation` left, before it is deleted: its own refs, and the
/// entity refs of its ends in the scenes it was tagged with unless another relation of that
/// scene still touches the entity. Without this, "user" would stay in a scene whose only fact
/// about them was forgotten.
pub(crate) fn drop_relation_refs(
    conn: &Connection,
    path: &Path,
    relation: i64,
) -> Result<(), GraphError> {
    const OP: &str = "forget_scene_refs";
    conn.prepare_cached(
        "DELETE FROM scene_entity_refs AS er WHERE \
         er.entity_id IN (SELECT subject_id FROM relations WHERE id = ?1 \
                          UNION SELECT object_id FROM relations WHERE id = ?1) \
         AND er.scene_key IN (SELECT scene_key FROM scene_relation_refs WHERE relation_id = ?1) \
         AND NOT EXISTS (SELECT 1 FROM scene_relation_refs o JOIN relations r ON r.id = o.relation_id \
             WHERE o.scene_key = er.scene_key AND o.relation_id != ?1 \
             AND (r.subject_id = er.entity_id OR r.object_id = er.entity_id))",
    )
    .ctx(OP, path)?
    .execute([relation])
    .ctx(OP, path)?;
    conn.prepare_cached("DELETE FROM scene_relation_refs WHERE relation_id = ?1")
        .ctx(OP, path)?
        .execute([relation])
        .ctx(OP, path)?;
    Ok(())
}

/// Moves the refs of relation `from` onto `to` (a merge folds one into the other), keeping
/// the larger weight where both had one.
pub(crate) fn move_relation_refs(
    conn: &Connection,
    path: &Path,
    from: i64,
    to: i64,
) -> Result<(), GraphError> {
    const OP: &str = "merge_scene_refs";
    conn.execute(
        "INSERT INTO scene_relation_refs (scene_key, relation_id, weight, created_ms, decayed_ms) \
         SELECT scene_key, ?2, weight, created_ms, decayed_ms FROM scene_relation_refs \
         WHERE relation_id = ?1 AND true ON CONFLICT (scene_key, relation_id) DO UPDATE SET \
         weight = max(weight, excluded.weight), decayed_ms = max(decayed_ms, excluded.decayed_ms)",
        params![from, to],
    )
    .ctx(OP, path)?;
    conn.execute(
        "DELETE FROM scene_relation_refs WHERE relation_id = ?1",
        [from],
    )
    .ctx(OP, path)?;
    Ok(())
}

/// Moves the refs of entity `from` onto `to` (a merge folds one name into another).
pub(crate) fn move_entity_refs(
    conn: &Connection,
    path: &Path,
    from: i64,
    to: i64,
) -> Result<(), GraphError> {
    const OP: &str = "merge_scene_refs";
    conn.execute(
        "INSERT INTO scene_entity_refs (scene_key, entity_id, weight, created_ms, decayed_ms) \
         SELECT scene_key, ?2, weight, created_ms, decayed_ms FROM scene_entity_refs \
         WHERE entity_id = ?1 AND true ON CONFLICT (scene_key, entity_id) DO UPDATE SET \
         weight = max(weight, excluded.weight), decayed_ms = max(decayed_ms, excluded.decayed_ms)",
        params![from, to],
    )
    .ctx(OP, path)?;
    conn.execute("DELETE FROM scene_entity_refs WHERE entity_id = ?1", [from])
        .ctx(OP, path)?;
    Ok(())
}

/// The first key below `prefix/` in byte order and the first past it: `k/…` is the range
/// [`k/`, `k0`) since `0` follows `/`. A range keeps `_` (a `LIKE` wildcard) literal and uses
/// the primary key.
fn child_range(prefix: &str) -> (String, String) {
    (format!("{prefix}/"), format!("{prefix}0"))
}

/// `keys` normalised, each once, in the order given.
pub(crate) fn normalized_keys(keys: &[&str]) -> Result<Vec<String>, GraphError> {
    let mut scenes = Vec::with_capacity(keys.len());
    for key in keys {
        let key = normalize_scene_key(key)?;
        if !scenes.contains(&key) {
            scenes.push(key);
        }
    }
    Ok(scenes)
}

impl GraphStore {
    /// Tags relation `id` with scene `key` (normalised; created as a declared scene when new):
    /// a ref to the relation and to both its ends, weight = max(existing, the relation's
    /// confidence). The scene's strength and `updated_ms` are not touched: tagging is not
    /// entering. An event id is [`GraphError::NotARelation`]; an unknown one `NotFound`.
    pub fn tag_scene(&mut self, key: &str, id: FactId, now_ms: i64) -> Result<(), GraphError> {
        const OP: &str = "tag_scene";
        let FactId::Relation(rid) = id else {
            return Err(GraphError::NotARelation { id: id.to_string() });
        };
        let key = normalize_scene_key(key)?;
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let confidence: f64 = tx
            .query_row(
                "SELECT confidence FROM relations WHERE id = ?1",
                [rid],
                |r| r.get(0),
            )
            .optional()
            .ctx(OP, &self.path)?
            .ok_or_else(|| GraphError::NotFound { id: id.to_string() })?;
        tag_relation(&tx, &self.path, &key, rid, confidence, now_ms)?;
        tx.commit().ctx(OP, &self.path)
    }

    /// Facts of the scenes `keys` (each normalised) and of the scenes below them: `k` matches
    /// `k` and `k/…`, never `k2`. Open relations only (past, superseded and forgotten facts
    /// never), ordered by their heaviest ref, then newest recorded, then newest id; entities by
    /// their heaviest ref, then mentions. `limit` (see [`DEFAULT_SCENE_RECALL_LIMIT`]) bounds
    /// relations and entities separately. A hit's status is as of `now_ms`.
    pub fn recall_by_scene(
        &self,
        keys: &[&str],
        limit: usize,
        now_ms: i64,
    ) -> Result<SceneRecall, GraphError> {
        let scenes = normalized_keys(keys)?;
        self.recall_scenes(scenes, limit, now_ms)
    }

    /// [`GraphStore::recall_by_scene`] over keys already normalised.
    pub(crate) fn recall_scenes(
        &self,
        scenes: Vec<String>,
        limit: usize,
        now_ms: i64,
    ) -> Result<SceneRecall, GraphError> {
        let relations = self.scene_relations(&scenes, limit, now_ms)?;
        let entities = self.scene_entities(&scenes, limit)?;
        Ok(SceneRecall {
            scenes,
            relations,
            entities,
        })
    }

    /// The open relations of `scenes` (normalised keys, each with the keys below it), heaviest
    /// ref first, then newest recorded, then newest id; at most `limit`, status as of `now_ms`.
    pub(crate) fn scene_relations(
        &self,
        scenes: &[String],
        limit: usize,
        now_ms: i64,
    ) -> Result<Vec<FactHit>, GraphError> {
        const OP: &str = "recall_by_scene";
        let path = self.path.as_path();
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        // Each key's own top `limit` holds every item of the union's top `limit`: an item's
        // score is its best key's weight, and the tie-breaks are the item's own.
        let mut relations: HashMap<i64, (f64, i64)> = HashMap::new();
        let mut rel = self
            .conn
            .prepare_cached(
                "SELECT r.id, max(sr.weight) AS w, r.recorded_ms FROM scene_relation_refs sr \
                 JOIN relations r ON r.id = sr.relation_id \
                 WHERE (sr.scene_key = ?1 OR (sr.scene_key >= ?2 AND sr.scene_key < ?3)) \
                 AND r.superseded_ms IS NULL AND r.valid_to_ms IS NULL \
                 GROUP BY r.id ORDER BY w DESC, r.recorded_ms DESC, r.id DESC LIMIT +?4",
            )
            .ctx(OP, path)?;
        for key in scenes {
            let (low, high) = child_range(key);
            let rows = rel
                .query_map(params![key, low, high, n], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, f64>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .ctx(OP, path)?;
            for row in rows {
                let (id, w, recorded) = row.ctx(OP, path)?;
                let e = relations.entry(id).or_insert((w, recorded));
                e.0 = e.0.max(w);
            }
        }
        let mut relations: Vec<(i64, (f64, i64))> = relations.into_iter().collect();
        relations.sort_by(|(ia, (wa, ra)), (ib, (wb, rb))| {
            wb.total_cmp(wa).then(rb.cmp(ra)).then(ib.cmp(ia))
        });
        relations.truncate(limit);
        let mut hits = Vec::with_capacity(relations.len());
        for (id, (w, _)) in relations {
            hits.extend(self.hit(FactId::Relation(id), now_ms, w, 0)?);
        }
        Ok(hits)
    }

    /// The entities of `scenes` (as [`GraphStore::scene_relations`] reads keys), heaviest ref
    /// first, then most mentioned; at most `limit`.
    fn scene_entities(
        &self,
        scenes: &[String],
        limit: usize,
    ) -> Result<Vec<SceneEntity>, GraphError> {
        const OP: &str = "recall_by_scene";
        let path = self.path.as_path();
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut entities: HashMap<i64, (f64, i64, String, String)> = HashMap::new();
        let mut ent = self
            .conn
            .prepare_cached(
                "SELECT e.id, max(er.weight) AS w, e.mentions, e.name, e.kind FROM scene_entity_refs er \
                 JOIN entities e ON e.id = er.entity_id \
                 WHERE (er.scene_key = ?1 OR (er.scene_key >= ?2 AND er.scene_key < ?3)) \
                 GROUP BY e.id ORDER BY w DESC, e.mentions DESC, e.id LIMIT +?4",
            )
            .ctx(OP, path)?;
        for key in scenes {
            let (low, high) = child_range(key);
            let rows = ent
                .query_map(params![key, low, high, n], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, f64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                })
                .ctx(OP, path)?;
            for row in rows {
                let (id, w, mentions, name, kind) = row.ctx(OP, path)?;
                let e = entities.entry(id).or_insert((w, mentions, name, kind));
                e.0 = e.0.max(w);
            }
        }
        let mut entities: Vec<(i64, (f64, i64, String, String))> = entities.into_iter().collect();
        entities.sort_by(|(ia, (wa, ma, ..)), (ib, (wb, mb, ..))| {
            wb.total_cmp(wa).then(mb.cmp(ma)).then(ia.cmp(ib))
        });
        entities.truncate(limit);
        Ok(entities
            .into_iter()
            .map(|(_, (weight, mentions, name, kind))| SceneEntity {
                name,
                kind,
                weight,
                mentions: mentions.max(0) as u64,
            })
            .collect())
    }

    /// Up to `limit` scenes, most recently entered first (then by key): for listing them.
    pub fn scenes(&self, limit: usize) -> Result<Vec<SceneInfo>, GraphError> {
        const OP: &str = "scenes";
        let n = i64::try_from(limit).unwrap_or(i64::MAX);
        self.conn
            .prepare_cached(
                "SELECT key, origin, strength, updated_ms FROM scenes \
                 ORDER BY updated_ms DESC, key LIMIT +?1",
            )
            .ctx(OP, &self.path)?
            .query_map([n], |r| {
                Ok(SceneInfo {
                    key: r.get(0)?,
                    origin: SceneOrigin::parse(&r.get::<_, String>(1)?),
                    strength: r.get::<_, i64>(2)?.max(0) as u64,
                    updated_ms: r.get(3)?,
                })
            })
            .ctx(OP, &self.path)?
            .collect::<Result<_, _>>()
            .ctx(OP, &self.path)
    }
}
