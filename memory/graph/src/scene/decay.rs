//! Scene refs fade: a scene not entered for a while lets go of its facts by halves.

use rusqlite::params;

use crate::error::SqlContext;
use crate::{GraphError, GraphStore};

/// Refs lighter than this are deleted by [`GraphStore::decay_scene_refs`] unless told otherwise.
pub const DEFAULT_REF_FLOOR: f64 = 0.05;

/// What one decay pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SceneDecay {
    /// Refs whose weight was halved.
    pub halved: usize,
    /// Refs deleted for falling below the floor (a ref halved below it counts in both).
    pub deleted: usize,
}

impl GraphStore {
    /// Halves the weight of every scene ref (to relations and to entities) whose weight was
    /// last set more than `half_life_ms` before `now_ms`, except the refs of scenes entered
    /// within that window, then deletes refs lighter than `floor` (see [`DEFAULT_REF_FLOOR`]).
    ///
    /// Each ref keeps `decayed_ms`, when its weight was last set (tagged, tagged again, or
    /// halved), apart from `created_ms`: halving moves `decayed_ms` to now, so a ref is halved
    /// once per half-life however often this runs, and when it was first tagged stays true.
    /// A half-life that is not positive, or a floor outside (0, 1), is
    /// [`GraphError::InvalidDecay`].
    pub fn decay_scene_refs(
        &mut self,
        half_life_ms: i64,
        floor: f64,
        now_ms: i64,
    ) -> Result<SceneDecay, GraphError> {
        const OP: &str = "decay_scene_refs";
        if half_life_ms <= 0 {
            return Err(GraphError::InvalidDecay {
                reason: "the half-life must be positive",
            });
        }
        // A floor of 0 would keep halving a ref forever (until its weight underflowed).
        if !(floor > 0.0 && floor < 1.0) {
            return Err(GraphError::InvalidDecay {
                reason: "the floor must be in (0, 1)",
            });
        }
        let before = now_ms.saturating_sub(half_life_ms);
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let mut out = SceneDecay::default();
        for table in ["scene_relation_refs", "scene_entity_refs"] {
            out.halved += tx
                .execute(
                    &format!(
                        "UPDATE {table} SET weight = weight / 2, decayed_ms = ?2 \
                         WHERE decayed_ms < ?1 AND scene_key IN \
                         (SELECT key FROM scenes WHERE updated_ms < ?1)"
                    ),
                    params![before, now_ms],
                )
                .ctx(OP, &self.path)?;
            out.deleted += tx
                .execute(&format!("DELETE FROM {table} WHERE weight < ?1"), [floor])
                .ctx(OP, &self.path)?;
        }
        tx.commit().ctx(OP, &self.path)?;
        Ok(out)
    }
}
