//! The durable memory store: one SQLite file, `<data_dir>/memory.db`, that holds the working
//! window (L1 events), cold context (L2, with a full-text index), the journal of accepted inputs
//! and their replies, and the suspended scheduler frames.
//!
//! There is exactly one [`Store`] (the writer) per file in a process: it is not `Clone`, and
//! opening a second one on the same file fails with [`StoreError::AlreadyOpen`]. The runtime owns
//! it on one service thread, so no worker ever waits on SQLite. Readers that must not queue
//! behind the writer open a [`StoreReader`]; every read method is also available on the `Store`
//! itself (it derefs to its own reader). Every write is one transaction (a savepoint), committed
//! and synced before the method returns (WAL, `synchronous = FULL`) — unless a group is open
//! ([`Store::begin_group`]), which commits many writes with one fsync. See `memory/DESIGN.md` for
//! the schema and the durability rules.

mod claim;
mod cold;
mod cold_entries;
mod common_terms;
mod error;
mod events;
mod files;
mod forget_when_answered;
mod frames;
mod group;
mod integrity;
mod journal;
mod keyset;
mod recover;
mod redact;
mod schema;
mod statements;
mod wal;

#[cfg(test)]
mod cold_entry_tests;
#[cfg(test)]
mod cold_fts_tests;
#[cfg(test)]
mod cold_vector_tests;
#[cfg(test)]
mod corruption_tests;
#[cfg(test)]
mod disk_full_tests;
#[cfg(test)]
mod events_tests;
#[cfg(test)]
mod frames_tests;
#[cfg(test)]
mod group_commit_tests;
#[cfg(test)]
mod journal_tests;
#[cfg(test)]
mod migration_tests;
#[cfg(test)]
mod move_to_cold_tests;
#[cfg(test)]
mod open_tests;
#[cfg(test)]
mod side_vector_tests;
#[cfg(test)]
mod test_support;

use std::cell::Cell;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

pub(crate) use cold::VectorColumn;
pub use cold::{
    COLD_MAX_ACCESS, COLD_MAX_IDLE_MS, ColdEntry, ColdMove, ColdRecord, ColdVector, ColdVectors,
    KeywordHit,
};
pub use cold_entries::ColdEntries;
pub use error::StoreError;
pub use events::{DenseVector, EventRecord, RECALLED_PREFIX, StoredEvent, WindowStats};
pub use frames::FrameRecord;
pub use integrity::StoreHealth;
pub use journal::{JournalEntry, Replied};
pub use recover::{Recovery, TableSalvage};
pub use schema::{STORE_APPLICATION_ID, STORE_SCHEMA_VERSION};
pub use statements::{STATEMENT_CACHE_CAPACITY, keep_statements};
pub use wal::switch_to_wal;

use error::SqlContext;

/// How long a statement waits for another connection's lock before failing with
/// [`StoreError::Busy`]. Writes are short (one turn's rows), so a longer wait means trouble.
pub const STORE_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Past this size the WAL file is truncated back after a checkpoint, so a burst of writes does
/// not leave a large file behind on a small SD card.
const WAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// The single writer of a memory database. Write methods take `&mut self`: the borrow checker
/// is the single-writer lock. Reads are on [`StoreReader`], which this derefs to.
pub struct Store {
    db: StoreReader,
    /// Whether the open group commits without an fsync ([`Store::begin_group_unsynced`]).
    group_unsynced: bool,
    /// Whether a commit since the last fsync of the WAL was not synced.
    unsynced: bool,
    /// Whether the connection is at `synchronous = NORMAL` (only around an unsynced group).
    sync_normal: bool,
    /// Released after the connection closes (fields drop in order).
    _claim: claim::Claim,
}

/// A connection that only reads (opened `SQLITE_OPEN_READONLY`). In WAL mode it sees the last
/// committed state and never blocks the writer, nor is blocked by it.
pub struct StoreReader {
    conn: Connection,
    path: PathBuf,
    /// Whether this connection made its `temp.cold_fts_vocab` table (`common_terms.rs`).
    vocab_ready: Cell<bool>,
}

impl Store {
    /// Opens (creating when missing) the database at `path`, switches it to WAL and applies any
    /// pending migrations. Before anything may write, the files are checked without writing
    /// them (`memory/DESIGN.md` §1.4): a damaged store, or a missing or empty database beside a
    /// WAL with content, is refused with [`StoreError::Damaged`] after its files were copied to
    /// `<path>.damaged-<time>/`. A file that belongs to another application or was written by a
    /// newer Hearth is refused too, and so is a file another `Store` of this process has open
    /// ([`StoreError::AlreadyOpen`]). Refused files are left byte-for-byte as they were. The
    /// database, its WAL and shared-memory file are made 0600 whatever the umask.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        const OP: &str = "open";
        let path = path.as_ref().to_path_buf();
        let claim = claim::Claim::take(OP, &path)?;
        let files = files::StoreFiles::new(&path);
        let health = integrity::examine(&files, OP)?;
        if let StoreHealth::Damaged { detail } = health {
            return Err(refuse_damaged(&files, OP, detail));
        }
        // SQLite keeps an existing file's mode and gives `-wal` and `-shm` the database's mode,
        // so the database is made private before SQLite first touches it.
        let created = files.create_private_db(OP)?;
        files.make_private(OP)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&path, flags).ctx(OP, &path)?;
        conn.busy_timeout(STORE_BUSY_TIMEOUT).ctx(OP, &path)?;
        keep_statements(&conn).ctx(OP, &path)?;
        // Read the header before anything could write to the file: a foreign or newer database
        // must come back exactly as it was.
        schema::known_version(&conn, OP, &path)?;
        if let Some(detail) = switch_to_wal(&conn).ctx(OP, &path)? {
            return Err(StoreError::Sqlite {
                op: OP,
                path,
                detail,
            });
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .ctx(OP, &path)?;
        conn.pragma_update(None, "foreign_keys", true)
            .ctx(OP, &path)?;
        conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)
            .ctx(OP, &path)?;
        // A deleted row's bytes are zeroed inside the pages a delete writes anyway: what a
        // prune moved out of the window, or a forget rewrote, does not linger in their free
        // space (no extra I/O; freed pages are zeroed only during a redaction).
        conn.pragma_update(None, "secure_delete", "FAST")
            .ctx(OP, &path)?;
        schema::migrate(&mut conn, &path, schema::MIGRATIONS)?;
        // Files a store of an older build left readable to others, and any `-wal` or `-shm`
        // created with another mode, are closed now.
        files.make_private(OP)?;
        // A new file's directory entry is synced, so the file survives a power loss right after
        // creation without relying on SQLite syncing the directory when it creates the WAL.
        if created {
            files::sync_dir(OP, files.dir())?;
        }
        Ok(Store {
            db: StoreReader {
                conn,
                path,
                vocab_ready: Cell::new(false),
            },
            group_unsynced: false,
            unsynced: false,
            sync_normal: false,
            _claim: claim,
        })
    }

    /// Checks the store at `path` without writing any of its files: what `Store::open` checks
    /// before it opens for writing (`PRAGMA quick_check` through an immutable or read-only
    /// connection, and a missing or empty database beside a WAL). Safe to run while Hearth runs.
    pub fn check(path: impl AsRef<Path>) -> Result<StoreHealth, StoreError> {
        integrity::examine(&files::StoreFiles::new(path.as_ref()), "check")
    }

    /// Recovers a damaged store: salvages every readable row into a fresh database, checks it,
    /// and only then swaps it in, keeping the damaged files in `<path>.damaged-<time>/`. A
    /// healthy or empty store is left alone. Hearth must not be running on the store.
    pub fn recover(path: impl AsRef<Path>) -> Result<Recovery, StoreError> {
        recover::recover(&files::StoreFiles::new(path.as_ref()))
    }

    /// Opens a read-only connection to the same file.
    pub fn reader(&self) -> Result<StoreReader, StoreError> {
        StoreReader::open(&self.db.path)
    }

    /// Copies the WAL back into the database file and truncates it (for a clean shutdown or a
    /// backup). Not needed for durability: committed data is already synced in the WAL.
    pub fn checkpoint(&mut self) -> Result<(), StoreError> {
        let path = &self.db.path;
        let (busy, _, _): (i64, i64, i64) = self
            .db
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .ctx("checkpoint", path)?;
        if busy != 0 {
            return Err(StoreError::Busy {
                op: "checkpoint",
                path: path.clone(),
                detail: "a reader kept the checkpoint from completing".into(),
            });
        }
        Ok(())
    }

    /// Runs `delete` (one `?1` id) for each of `ids` in one savepoint; how many rows went.
    fn delete_each(
        &mut self,
        op: &'static str,
        delete: &str,
        ids: &[i64],
    ) -> Result<usize, StoreError> {
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(op, path)?;
        let mut gone = 0;
        {
            let mut stmt = tx.prepare_cached(delete).ctx(op, path)?;
            for id in ids {
                gone += stmt.execute([id]).ctx(op, path)?;
            }
        }
        tx.commit().ctx(op, path)?;
        Ok(gone)
    }

    fn conn_mut(&mut self) -> (&mut Connection, &Path) {
        (&mut self.db.conn, &self.db.path)
    }
}

impl Deref for Store {
    type Target = StoreReader;

    fn deref(&self) -> &StoreReader {
        &self.db
    }
}

impl StoreReader {
    /// Opens a read-only connection to a database that [`Store::open`] has already migrated.
    pub fn open(path: impl AsRef<Path>) -> Result<StoreReader, StoreError> {
        const OP: &str = "open_reader";
        let path = path.as_ref().to_path_buf();
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).ctx(OP, &path)?;
        conn.busy_timeout(STORE_BUSY_TIMEOUT).ctx(OP, &path)?;
        keep_statements(&conn).ctx(OP, &path)?;
        let found = schema::known_version(&conn, OP, &path)?;
        if found < STORE_SCHEMA_VERSION {
            return Err(StoreError::NotMigrated {
                op: OP,
                path,
                found,
                known: STORE_SCHEMA_VERSION,
            });
        }
        Ok(StoreReader {
            conn,
            path,
            vocab_ready: Cell::new(false),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version recorded in the file.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(schema::read_version(&self.conn, "schema_version", &self.path)?.unwrap_or(0))
    }

    /// Runs SQLite's full `PRAGMA integrity_check` (every page, index and constraint; cost grows
    /// with the file). `Ok` when SQLite reports `ok`, otherwise [`StoreError::Corrupt`] with its
    /// first findings.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        const OP: &str = "integrity_check";
        let mut stmt = self
            .conn
            .prepare("PRAGMA integrity_check(20)")
            .ctx(OP, &self.path)?;
        let findings = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)?;
        if findings.len() == 1 && findings[0] == "ok" {
            return Ok(());
        }
        Err(StoreError::Corrupt {
            op: OP,
            path: self.path.clone(),
            detail: findings.join("; "),
        })
    }
}

/// Serialises a value for a JSON column.
fn to_json<T: serde::Serialize + ?Sized>(
    op: &'static str,
    path: &Path,
    value: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::data(op, path, e.to_string()))
}

/// The refusal of a damaged store: its files are copied aside first, so whatever is done to them
/// next, the state Hearth found is kept.
fn refuse_damaged(files: &files::StoreFiles, op: &'static str, detail: String) -> StoreError {
    let (backup, detail) = match files.back_up(op) {
        Ok(dir) => (Some(dir), detail),
        Err(e) => (
            None,
            format!("{detail} (copying its files aside failed: {e})"),
        ),
    };
    tracing::error!(path = %files.db.display(), "memory store damaged: {detail}");
    StoreError::Damaged {
        op,
        path: files.db.clone(),
        detail,
        backup,
    }
}
