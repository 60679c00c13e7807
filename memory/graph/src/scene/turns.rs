//! Turns carry their scenes: the kernel knows a turn's scenes when the turn happens, but its
//! facts are distilled much later (the heartbeat, the model distiller), so the keys are noted
//! by turn id and every relation stored or merged from that turn is tagged with them.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::key::normalize_scene_key;
use super::store::tag_relation;
use crate::error::SqlContext;
use crate::{GraphError, GraphStore};

/// Turns whose scene keys are kept: the newest this many notes. Dropping a turn's row when it
/// is distilled would not do: the model distiller reads the same items again hours later, and a
/// turn may span several cold items. 100,000 turns is months of conversation; a turn older
/// than that which is distilled for the first time is simply not tagged.
pub const MAX_TURN_SCENES: i64 = 100_000;

/// Keys are stored on one row, joined by a character a normal key never contains.
const SEPARATOR: char = '\n';

/// [`GraphStore::note_turn_scenes`] inside the caller's transaction, keeping the newest `cap`.
pub(crate) fn note_in(
    conn: &Connection,
    path: &Path,
    turn_id: &str,
    keys: &[String],
    now: i64,
    cap: i64,
) -> Result<(), GraphError> {
    const OP: &str = "note_turn_scenes";
    let mut all = turn_keys(conn, path, turn_id)?;
    for key in keys {
        if !all.contains(key) {
            all.push(key.clone());
        }
    }
    let joined = all.join(&SEPARATOR.to_string());
    conn.prepare_cached(
        "INSERT INTO turn_scenes (turn_id, keys, noted_ms) VALUES (?1, ?2, ?3) \
         ON CONFLICT (turn_id) DO UPDATE SET keys = excluded.keys, noted_ms = excluded.noted_ms",
    )
    .ctx(OP, path)?
    .execute(params![turn_id, joined, now])
    .ctx(OP, path)?;
    // Ids only grow, so the newest `cap` notes are the ids within `cap` of the largest: a
    // range delete on the primary key, whatever the table's size.
    conn.prepare_cached(
        "DELETE FROM turn_scenes WHERE id <= (SELECT max(id) FROM turn_scenes) - ?1",
    )
    .ctx(OP, path)?
    .execute([cap])
    .ctx(OP, path)?;
    Ok(())
}

/// The scene keys noted for `turn_id` (none when it was never noted or has aged out).
pub(crate) fn turn_keys(
    conn: &Connection,
    path: &Path,
    turn_id: &str,
) -> Result<Vec<String>, GraphError> {
    let joined: Option<String> = conn
        .prepare_cached("SELECT keys FROM turn_scenes WHERE turn_id = ?1")
        .ctx("turn_scenes", path)?
        .query_row([turn_id], |r| r.get(0))
        .optional()
        .ctx("turn_scenes", path)?;
    Ok(joined
        .map(|j| {
            j.split(SEPARATOR)
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default())
}

/// Tags relation `relation`, just stored or merged from a statement of turn `turn_id`, with the
/// scenes noted for that turn, at the relation's confidence.
pub(crate) fn tag_from_turn(
    conn: &Connection,
    path: &Path,
    turn_id: &str,
    relation: i64,
    now: i64,
) -> Result<(), GraphError> {
    let keys = turn_keys(conn, path, turn_id)?;
    if keys.is_empty() {
        return Ok(());
    }
    let confidence: f64 = conn
        .prepare_cached("SELECT confidence FROM relations WHERE id = ?1")
        .ctx("tag_scene", path)?
        .query_row([relation], |r| r.get(0))
        .ctx("tag_scene", path)?;
    for key in &keys {
        tag_relation(conn, path, key, relation, confidence, now)?;
    }
    Ok(())
}

impl GraphStore {
    /// Notes that turn `turn_id` happened in scenes `keys` (normalised; added to any noted
    /// before), so relations distilled from it later are tagged with them. Only the newest
    /// [`MAX_TURN_SCENES`] turns are kept. Empty `keys` note nothing. A key that normalises to
    /// nothing is [`GraphError::InvalidSceneKey`] and nothing is noted.
    pub fn note_turn_scenes(
        &mut self,
        turn_id: &str,
        keys: &[&str],
        now_ms: i64,
    ) -> Result<(), GraphError> {
        const OP: &str = "note_turn_scenes";
        let keys = keys
            .iter()
            .map(|k| normalize_scene_key(k))
            .collect::<Result<Vec<_>, _>>()?;
        if keys.is_empty() {
            return Ok(());
        }
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        note_in(&tx, &self.path, turn_id, &keys, now_ms, MAX_TURN_SCENES)?;
        tx.commit().ctx(OP, &self.path)
    }

    /// The scene keys noted for `turn_id`.
    pub fn turn_scenes(&self, turn_id: &str) -> Result<Vec<String>, GraphError> {
        turn_keys(&self.conn, &self.path, turn_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_notes_are_kept_and_keys_accumulate() {
        let dir = tempfile::tempdir().unwrap();
        let mut g = GraphStore::open(dir.path().join("g.db")).unwrap();
        let path = g.path().to_path_buf();
        let tx = g.conn.transaction().unwrap();
        for i in 0..10 {
            note_in(&tx, &path, &format!("t{i}"), &[format!("k{i}")], i, 4).unwrap();
        }
        note_in(&tx, &path, "t9", &["extra".to_owned()], 10, 4).unwrap();
        tx.commit().unwrap();
        let kept: Vec<bool> = (0..10)
            .map(|i| !g.turn_scenes(&format!("t{i}")).unwrap().is_empty())
            .collect();
        assert_eq!(
            kept,
            [
                false, false, false, false, false, false, true, true, true, true
            ]
        );
        assert_eq!(g.turn_scenes("t9").unwrap(), ["k9", "extra"]);
    }
}
