//! The check a store passes before anything may write to it: the files are inspected first,
//! then the database is read through a read-only connection and `PRAGMA quick_check` runs.
//!
//! Nothing here writes the database or its WAL. That matters because SQLite's own open path
//! is destructive on exactly the files that need care: a database of zero pages beside a WAL
//! makes SQLite delete the WAL, and a read-write connection checkpoints the WAL into the
//! database file (and deletes it) when it closes, even after a failed open.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::STORE_BUSY_TIMEOUT;
use super::error::{SqlContext, StoreError};
use super::files::{StoreFiles, file_len};

/// How many findings of `quick_check` are kept in a report.
const FINDINGS: usize = 20;

/// What [`Store::check`](super::Store::check) found.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreHealth {
    /// `quick_check` reports `ok`.
    Healthy,
    /// No database yet (missing or empty, and no WAL with content): a new store.
    Empty,
    /// The files cannot be used as they are; `detail` says what was found.
    Damaged {
        /// What is wrong, in words (SQLite's findings, or the missing file).
        detail: String,
    },
}

impl StoreHealth {
    /// Whether the store may be opened for writing.
    pub fn is_usable(&self) -> bool {
        !matches!(self, StoreHealth::Damaged { .. })
    }
}

impl std::fmt::Display for StoreHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreHealth::Healthy => f.write_str("ok"),
            StoreHealth::Empty => f.write_str("empty (no database yet)"),
            StoreHealth::Damaged { detail } => write!(f, "damaged: {detail}"),
        }
    }
}

/// Examines the store's files without writing any of them.
pub(super) fn examine(files: &StoreFiles, op: &'static str) -> Result<StoreHealth, StoreError> {
    let db_len = file_len(op, &files.db)?;
    let wal_len = file_len(op, &files.wal)?.unwrap_or(0);
    match db_len {
        None | Some(0) if wal_len > 0 => {
            let db_state = if db_len.is_none() {
                "is missing"
            } else {
                "is empty (0 bytes)"
            };
            return Ok(StoreHealth::Damaged {
                detail: format!(
                    "the database file {db_state} but {} holds {wal_len} bytes of writes that \
                     belong to it; opening it would discard them",
                    files.wal.display()
                ),
            });
        }
        None | Some(0) => return Ok(StoreHealth::Empty),
        Some(_) => {}
    }
    // With neither `-wal` nor `-shm` (a cleanly closed store) no connection is open and the
    // database file is the whole store: an immutable open reads it without creating either file.
    // Otherwise a read-only connection is needed, to see the WAL's content and to take the
    // locks that keep a live writer's checkpoint from changing pages under the check (it may
    // create or rebuild `-shm`, an index SQLite derives from the WAL).
    let opened = if files.wal.exists() || files.shm.exists() {
        open_read_only(&files.db, op)
    } else {
        open_immutable(&files.db, op)
    };
    let conn = match opened {
        Ok(conn) => conn,
        Err(StoreError::Corrupt { detail, .. }) => {
            return Ok(StoreHealth::Damaged {
                detail: format!("the database cannot be opened: {detail}"),
            });
        }
        Err(e) => return Err(e),
    };
    match quick_check(&conn, &files.db, op) {
        Ok(findings) if findings.len() == 1 && findings[0] == "ok" => Ok(StoreHealth::Healthy),
        Ok(findings) => Ok(StoreHealth::Damaged {
            detail: format!("quick_check: {}", findings.join("; ")),
        }),
        Err(StoreError::Corrupt { detail, .. }) => Ok(StoreHealth::Damaged {
            detail: format!("quick_check stopped on a damaged page: {detail}"),
        }),
        Err(e) => Err(e),
    }
}

/// A read-only connection (it never checkpoints, so it never writes the database file nor
/// deletes the WAL) that still reads the committed pages in the WAL.
pub(super) fn open_read_only(path: &Path, op: &'static str) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).ctx(op, path)?;
    conn.busy_timeout(STORE_BUSY_TIMEOUT).ctx(op, path)?;
    Ok(conn)
}

/// A connection that takes the file as read-only media: no locks, no `-wal` or `-shm` files,
/// the WAL ignored.
fn open_immutable(path: &Path, op: &'static str) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let uri = format!("file:{}?immutable=1", uri_path(path));
    Connection::open_with_flags(uri, flags).ctx(op, path)
}

/// A path as the path part of a `file:` URI: every byte outside the unreserved set and `/` is
/// percent-encoded, so `?`, `#` and `%` in a directory name stay part of the path.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `PRAGMA quick_check`: every page and record is read (indexes are not cross-checked), so its
/// cost is one sequential read of the file.
pub(super) fn quick_check(
    conn: &Connection,
    path: &Path,
    op: &'static str,
) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA quick_check({FINDINGS})"))
        .ctx(op, path)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .ctx(op, path)?;
    rows.collect::<Result<Vec<_>, _>>().ctx(op, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_uri_path_escapes_what_a_uri_would_read_as_syntax() {
        assert_eq!(
            uri_path(Path::new("/data/my dir?#%/memory.db")),
            "/data/my%20dir%3F%23%25/memory.db"
        );
        assert_eq!(uri_path(Path::new("rel/ü.db")), "rel/%C3%BC.db");
    }
}
