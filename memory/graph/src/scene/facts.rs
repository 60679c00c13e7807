//! The facts a turn's scenes hold, as the prompt reads them: relations only, and nothing read
//! past one lookup while no scene holds a fact.

use rusqlite::OptionalExtension;

use super::features::SceneFeature;
use super::store::normalized_keys;
use crate::error::SqlContext;
use crate::{FactHit, GraphError, GraphStore};

impl GraphStore {
    /// The open facts of the scenes `keys` (normalised; each with the keys below it, as
    /// [`GraphStore::recall_by_scene`]), then those of the emergent scenes `features` resemble
    /// (as [`GraphStore::recall_by_situation`], counting only scenes that hold a fact): up to
    /// `limit` of each, each fact once, the keys' first. Status as of `now_ms`.
    ///
    /// Entities are not read (the prompt shows facts), and while no scene holds a ref to any
    /// relation — a young graph, or one whose refs all faded — this is one indexed lookup, not
    /// a scan of every emergent scene's fingerprint.
    pub fn scene_facts(
        &self,
        keys: &[&str],
        features: &[SceneFeature],
        limit: usize,
        now_ms: i64,
    ) -> Result<Vec<FactHit>, GraphError> {
        if limit == 0 || !self.any_scene_fact()? {
            return Ok(Vec::new());
        }
        let mut out = self.scene_relations(&normalized_keys(keys)?, limit, now_ms)?;
        let similar = self.similar_scenes(features, limit, true)?;
        for hit in self.scene_relations(&similar, limit, now_ms)? {
            if out.iter().all(|h| h.id != hit.id) {
                out.push(hit);
            }
        }
        Ok(out)
    }

    /// Whether any scene holds a ref to a relation.
    fn any_scene_fact(&self) -> Result<bool, GraphError> {
        const OP: &str = "scene_facts";
        self.conn
            .prepare_cached("SELECT 1 FROM scene_relation_refs LIMIT 1")
            .ctx(OP, &self.path)?
            .query_row([], |_| Ok(()))
            .optional()
            .ctx(OP, &self.path)
            .map(|found| found.is_some())
    }
}
