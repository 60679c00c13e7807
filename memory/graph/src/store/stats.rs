//! Counts of what the graph holds, for `hearth status` and the benches.

use super::GraphStore;
use crate::GraphError;
use crate::error::SqlContext;

/// What the graph holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphStats {
    /// Entities.
    pub entities: u64,
    /// Relations valid now.
    pub current: u64,
    /// Relations that held in the past.
    pub past: u64,
    /// Relations superseded by a correction.
    pub superseded: u64,
    /// Dated events.
    pub events: u64,
    /// Forgotten (cold item, fact) pairs.
    pub tombstones: u64,
    /// Cold items distilled with a result.
    pub items_done: u64,
    /// Cold items that gave nothing yet and wait for a retry.
    pub items_waiting: u64,
    /// Scenes, declared and emergent.
    pub scenes: u64,
    /// Scene refs, to relations and to entities.
    pub scene_refs: u64,
}

impl GraphStore {
    /// Counts of what the graph holds.
    pub fn stats(&self) -> Result<GraphStats, GraphError> {
        self.conn()
            .query_row(
                "SELECT (SELECT count(*) FROM entities), \
                 (SELECT count(*) FROM relations WHERE superseded_ms IS NULL AND valid_to_ms IS NULL), \
                 (SELECT count(*) FROM relations WHERE superseded_ms IS NULL AND valid_to_ms IS NOT NULL), \
                 (SELECT count(*) FROM relations WHERE superseded_ms IS NOT NULL), \
                 (SELECT count(*) FROM events), (SELECT count(*) FROM tombstones), \
                 (SELECT count(*) FROM distilled WHERE state = 'done'), \
                 (SELECT count(*) FROM distilled WHERE state = 'empty'), \
                 (SELECT count(*) FROM scenes), \
                 (SELECT count(*) FROM scene_relation_refs) + (SELECT count(*) FROM scene_entity_refs)",
                [],
                |r| {
                    let n = |i| r.get::<_, i64>(i).map(|v| v.max(0) as u64);
                    Ok(GraphStats {
                        entities: n(0)?,
                        current: n(1)?,
                        past: n(2)?,
                        superseded: n(3)?,
                        events: n(4)?,
                        tombstones: n(5)?,
                        items_done: n(6)?,
                        items_waiting: n(7)?,
                        scenes: n(8)?,
                        scene_refs: n(9)?,
                    })
                },
            )
            .ctx("stats", self.path())
    }
}
