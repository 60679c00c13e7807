//! Group commit: many writes in one transaction and one fsync. Every write method runs in a
//! savepoint, which is its own transaction when alone and nests when a group is open, so a
//! write that fails inside a group rolls back only itself. The group's writes become durable
//! together at [`Store::commit_group`], and not one of them before: whoever waits for one of
//! them must be answered only after that commit.
//!
//! A group nobody waits for (the working window's appends, a prune) may commit without an
//! fsync ([`Store::begin_group_unsynced`], `synchronous = NORMAL` for that commit): every commit
//! appends to the one WAL file, so the next synced commit's fsync makes it durable too, in
//! order, and [`Store::sync_wal`] does so when no such commit follows. A process crash loses
//! nothing either way (the WAL is in the page cache); a power loss can roll back only unsynced
//! commits, whole and newest first.

use super::error::SqlContext;
use super::{Store, StoreError};

impl Store {
    /// Opens a group: the writes that follow are committed together by
    /// [`commit_group`](Self::commit_group).
    pub fn begin_group(&mut self) -> Result<(), StoreError> {
        // An unsynced group whose end could not restore FULL (its transaction outlived a failed
        // COMMIT and ROLLBACK) must not leave this one unsynced.
        if self.sync_normal {
            self.restore_full_sync()?;
        }
        let (conn, path) = self.conn_mut();
        conn.execute_batch("BEGIN IMMEDIATE")
            .ctx("begin_group", path)
    }

    /// `synchronous = FULL` again; only outside a transaction, as SQLite requires.
    fn restore_full_sync(&mut self) -> Result<(), StoreError> {
        let (conn, path) = self.conn_mut();
        conn.execute_batch("PRAGMA synchronous = FULL")
            .ctx("begin_group", path)?;
        self.sync_normal = false;
        Ok(())
    }

    /// Opens a group whose commit is not fsynced: durable with the next synced commit or
    /// [`sync_wal`](Self::sync_wal). Only for writes nobody is answered about.
    pub fn begin_group_unsynced(&mut self) -> Result<(), StoreError> {
        const OP: &str = "begin_group";
        let (conn, path) = self.conn_mut();
        conn.execute_batch("PRAGMA synchronous = NORMAL")
            .ctx(OP, path)?;
        self.sync_normal = true;
        let (conn, path) = self.conn_mut();
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE").ctx(OP, path) {
            let _ = self.restore_full_sync();
            return Err(e);
        }
        self.group_unsynced = true;
        Ok(())
    }

    /// Whether a commit since the last fsync of the WAL was not synced.
    pub fn has_unsynced(&self) -> bool {
        self.unsynced
    }

    /// Makes every unsynced commit durable: a passive checkpoint, which fsyncs the WAL first
    /// (and the database file after the pages it copied). Nothing to do when none is pending.
    pub fn sync_wal(&mut self) -> Result<(), StoreError> {
        if !self.unsynced {
            return Ok(());
        }
        let (conn, path) = self.conn_mut();
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .ctx("sync_wal", path)?;
        self.unsynced = false;
        Ok(())
    }

    /// Back to synced commits after an unsynced group ends, however it ended.
    fn end_unsynced(&mut self, committed: bool) {
        if std::mem::take(&mut self.group_unsynced) {
            self.unsynced |= committed;
            // On failure `sync_normal` stays set and the next synced group restores FULL.
            let _ = self.restore_full_sync();
        } else if committed {
            // A synced commit's fsync covered every earlier frame of the WAL.
            self.unsynced = false;
        }
    }

    /// Whether the open group still stands. SQLite rolls a whole transaction back on its own
    /// after some failures (`SQLITE_FULL`, an I/O error); every write of the group since
    /// [`begin_group`](Self::begin_group) is then gone, and later writes would each commit alone.
    pub fn group_intact(&self) -> bool {
        !self.db.conn.is_autocommit()
    }

    /// Commits the group, with one fsync unless it was opened unsynced. `Err` means none of its
    /// writes is in the store: a group SQLite rolled back by itself fails with
    /// [`StoreError::GroupLost`], a commit that fails is rolled back.
    pub fn commit_group(&mut self) -> Result<(), StoreError> {
        const OP: &str = "commit_group";
        if !self.group_intact() {
            self.end_unsynced(false);
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
        self.end_unsynced(committed.is_ok());
        committed
    }

    /// Drops the open group, if any, with all its writes.
    pub fn rollback_group(&mut self) {
        let (conn, _) = self.conn_mut();
        if !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        self.end_unsynced(false);
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
