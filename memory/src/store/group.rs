//! Group commit: many writes in one transaction and one fsync. Every write method runs in a
//! savepoint, which is its own transaction when alone and nests when a group is open, so a
//! write that fails inside a group rolls back only itself. The group's writes become durable
//! together at [`Store::commit_group`], and not one of them before: whoever waits for one of
//! them must be answered only after that commit.

use super::error::SqlContext;
use super::{Store, StoreError};

impl Store {
    /// Opens a group: the writes that follow are committed together by
    /// [`commit_group`](Self::commit_group).
    pub fn begin_group(&mut self) -> Result<(), StoreError> {
        let (conn, path) = self.conn_mut();
        conn.execute_batch("BEGIN IMMEDIATE")
            .ctx("begin_group", path)
    }

    /// Whether the open group still stands. SQLite rolls a whole transaction back on its own
    /// after some failures (`SQLITE_FULL`, an I/O error); every write of the group since
    /// [`begin_group`](Self::begin_group) is then gone, and later writes would each commit alone.
    pub fn group_intact(&self) -> bool {
        !self.db.conn.is_autocommit()
    }

    /// Commits the group with one fsync. `Err` means none of its writes is in the store: a
    /// group SQLite rolled back by itself fails with [`StoreError::GroupLost`], a commit that
    /// fails is rolled back.
    pub fn commit_group(&mut self) -> Result<(), StoreError> {
        const OP: &str = "commit_group";
        if !self.group_intact() {
            return Err(StoreError::GroupLost {
                op: OP,
                path: self.db.path.clone(),
            });
        }
        let (conn, path) = self.conn_mut();
        let committed = conn.execute_batch("COMMIT").ctx(OP, path);
        if committed.is_err() && !conn.is_autocommit() {
            // A failed COMMIT can leave the transaction open; nothing of it may survive.
            let _ = conn.execute_batch("ROLLBACK");
        }
        committed
    }

    /// Drops the open group, if any, with all its writes.
    pub fn rollback_group(&mut self) {
        let (conn, _) = self.conn_mut();
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
    }

    /// Caps the database at its current size plus `spare_pages` pages (SQLite's
    /// `max_page_count`, for this connection only): a write that needs more fails with
    /// [`StoreError::DiskFull`] as on a full disk. The cap on a quota-limited device, and how
    /// the full-disk paths are tested. Returns the cap.
    pub fn cap_pages(&mut self, spare_pages: i64) -> Result<i64, StoreError> {
        const OP: &str = "cap_pages";
        let (conn, path) = self.conn_mut();
        let pages: i64 = conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .ctx(OP, path)?;
        let cap = pages + spare_pages;
        conn.query_row(&format!("PRAGMA max_page_count = {cap}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .ctx(OP, path)
    }
}
