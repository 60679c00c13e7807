//! A turn's tools join its scenes once the turn has run: the pass that entered its scenes ran
//! before the model chose any tool, so the tools are added when its reply is recorded.

use rusqlite::OptionalExtension;

use super::emergent::{enter_declared, upsert_features};
use super::features::SceneFeature;
use super::key::tool_scene;
use super::store::SceneOrigin;
use super::turns::{MAX_TURN_SCENES, note_in, turn_keys};
use crate::error::SqlContext;
use crate::{GraphError, GraphStore};

impl GraphStore {
    /// Adds the tools turn `turn_id` used to its scenes: each becomes the declared scene
    /// `tool:<name>` (created, or strengthened, and taught its own `tool:` feature), the
    /// emergent scenes the turn entered learn the `tool:` features (a situation in which a tool
    /// is used recurs with it), and the tool keys are noted for the turn, so facts distilled
    /// from it later are tagged with them too. Only a turn whose scenes were noted is touched:
    /// one under `scene_policy: "none"`, or one older than [`MAX_TURN_SCENES`] turns, keeps no
    /// scenes and gets none. A tool name with nothing left after normalisation is skipped.
    /// Returns the tool keys added (empty: nothing was written). Scene bookkeeping, committed
    /// unsynced like the scene entry.
    pub fn note_turn_tools(
        &mut self,
        turn_id: &str,
        tools: &[&str],
        now_ms: i64,
    ) -> Result<Vec<String>, GraphError> {
        const OP: &str = "note_turn_tools";
        let mut keys: Vec<String> = Vec::new();
        let mut features: Vec<SceneFeature> = Vec::new();
        for tool in tools {
            let (Ok(key), Ok(feature)) = (tool_scene(tool), SceneFeature::new("tool", tool)) else {
                continue;
            };
            if !keys.contains(&key) {
                keys.push(key);
                features.push(feature);
            }
        }
        if keys.is_empty() {
            return Ok(keys);
        }
        self.unsynced(OP, |store| {
            let tx = store.conn.transaction().ctx(OP, &store.path)?;
            let entered = turn_keys(&tx, &store.path, turn_id)?;
            if entered.is_empty() {
                return Ok(Vec::new());
            }
            for key in &entered {
                let origin: Option<String> = tx
                    .prepare_cached("SELECT origin FROM scenes WHERE key = ?1")
                    .ctx(OP, &store.path)?
                    .query_row([key], |r| r.get(0))
                    .optional()
                    .ctx(OP, &store.path)?;
                if origin.as_deref() == Some(SceneOrigin::Emergent.as_str()) {
                    upsert_features(&tx, &store.path, key, &features)?;
                }
            }
            enter_declared(&tx, &store.path, &keys, now_ms)?;
            note_in(&tx, &store.path, turn_id, &keys, now_ms, MAX_TURN_SCENES)?;
            tx.commit().ctx(OP, &store.path)?;
            Ok(keys)
        })
    }
}
