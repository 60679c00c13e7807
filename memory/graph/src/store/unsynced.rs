//! Writes whose commit need not wait for the disk: the per-turn scene bookkeeping.
//!
//! Every `graph.db` commit is synced (`synchronous = FULL`) because a fact, a correction or a
//! forget the user was told about must survive a power cut. Entering a turn's scenes is not
//! such a write: it adds strength to a scene and notes the turn, and a power cut that drops the
//! last few entries costs a scene a few points of strength, nothing the user was told. So it
//! commits with `synchronous = NORMAL`: in WAL mode that is still atomic and never corrupts
//! the file; the commit is on disk once the next synced commit or checkpoint syncs the WAL,
//! which carries every frame before it. A process crash loses nothing (the frames are in the
//! OS's cache). The sync of that commit was ~6 % of the store thread's CPU per turn.

use crate::error::SqlContext;
use crate::{GraphError, GraphStore};

impl GraphStore {
    /// Runs `write` with its commits unsynced (see the module docs), then restores synced
    /// commits whatever `write` returned. Failing to restore them is an error: a later fact
    /// must never be committed unsynced by mistake.
    pub(crate) fn unsynced<T>(
        &mut self,
        op: &'static str,
        write: impl FnOnce(&mut GraphStore) -> Result<T, GraphError>,
    ) -> Result<T, GraphError> {
        self.set_synchronous(op, "PRAGMA synchronous = NORMAL")?;
        let result = write(self);
        self.set_synchronous(op, "PRAGMA synchronous = FULL")?;
        result
    }

    /// Runs one of the two pragmas. Not from the statement cache: SQLite compiles a
    /// `PRAGMA synchronous` again on every run of a cached one (9 of 10 runs measured with
    /// `get_status(RePrepare)`, with or without the planner setting of
    /// `hearth_memory::keep_statements`), so a cache slot would buy nothing.
    fn set_synchronous(&self, op: &'static str, pragma: &str) -> Result<(), GraphError> {
        self.conn.execute_batch(pragma).ctx(op, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synchronous(store: &GraphStore) -> i64 {
        store
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .expect("pragma")
    }

    #[test]
    fn commits_are_synced_again_after_an_unsynced_write_whether_it_failed_or_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut store = GraphStore::open(dir.path().join("graph.db")).expect("open");
        const FULL: i64 = 2;
        const NORMAL: i64 = 1;
        assert_eq!(synchronous(&store), FULL);
        let inside = store
            .unsynced("test", |s| Ok(synchronous(s)))
            .expect("write");
        assert_eq!(inside, NORMAL);
        assert_eq!(synchronous(&store), FULL);
        let failed: Result<(), GraphError> = store.unsynced("test", |_| {
            Err(GraphError::InvalidSceneKey { key: String::new() })
        });
        assert!(failed.is_err());
        assert_eq!(synchronous(&store), FULL);
    }
}
