//! The derived index: one SQLite file (WAL, mode `0600`) holding each document's stat and hash,
//! its passages with their search tokens and vectors, and an FTS5 index over the tokens.
//!
//! Nothing in it is original: every row can be rebuilt from the files. So a file that is damaged,
//! foreign or from a newer Hearth is moved aside (kept for inspection, never deleted) and a new
//! index is built, instead of the knowledge base refusing to start. `synchronous = NORMAL`: in
//! WAL mode that never corrupts the file, and a commit lost to a power cut is redone by the next
//! sync.

mod rows;
mod schema;

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::KnowledgeError;
use crate::error::{IoContext, SqlContext};

pub(crate) use rows::{DocRow, NewPassage, Stat};
pub use schema::{KNOWLEDGE_APPLICATION_ID, KNOWLEDGE_SCHEMA_VERSION};

/// How long a write waits for another connection's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The open index file.
pub(crate) struct Index {
    conn: Connection,
    path: PathBuf,
}

/// Why a try at opening failed.
enum OpenProblem {
    /// The file is not usable as an index; moving it aside and starting over will help.
    Damaged(String),
    /// Anything else (permissions, a lock held by another process): moving the file aside would
    /// not help, or would take it from under its other user.
    Fatal(KnowledgeError),
}

impl Index {
    /// Opens the index at `path`, creating it when missing and rebuilding it (after moving the
    /// old file aside) when it is damaged or foreign. Returns where an old file was moved to.
    pub(crate) fn open(path: &Path) -> Result<(Index, Option<PathBuf>), KnowledgeError> {
        match Index::try_open(path) {
            Ok(index) => Ok((index, None)),
            Err(OpenProblem::Fatal(e)) => Err(e),
            Err(OpenProblem::Damaged(reason)) => {
                let aside = move_aside(path)?;
                tracing::warn!(
                    index = %path.display(),
                    moved_to = %aside.display(),
                    %reason,
                    "knowledge index unusable: moved aside, rebuilding from the files"
                );
                match Index::try_open(path) {
                    Ok(index) => Ok((index, Some(aside))),
                    Err(OpenProblem::Fatal(e)) => Err(e),
                    Err(OpenProblem::Damaged(reason)) => Err(KnowledgeError::Sqlite {
                        op: "open",
                        path: path.to_path_buf(),
                        detail: format!("a new index is unusable too: {reason}"),
                    }),
                }
            }
        }
    }

    fn try_open(path: &Path) -> Result<Index, OpenProblem> {
        const OP: &str = "open";
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .io_ctx(OP, path)
            .map_err(OpenProblem::Fatal)?;
        let classify = |e: rusqlite::Error| classify(e, OP, path);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(classify)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(classify)?;
        hearth_memory::keep_statements(&conn).map_err(classify)?;
        if let Some(reason) = schema::identity_problem(&conn).map_err(classify)? {
            return Err(OpenProblem::Damaged(reason));
        }
        if let Some(detail) = hearth_memory::switch_to_wal(&conn).map_err(classify)? {
            return Err(OpenProblem::Fatal(KnowledgeError::Sqlite {
                op: OP,
                path: path.to_path_buf(),
                detail,
            }));
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(classify)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(classify)?;
        schema::create_if_new(&mut conn).map_err(classify)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The index file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` in one transaction, committed when it returns `Ok`.
    pub(crate) fn write<T>(
        &mut self,
        op: &'static str,
        f: impl FnOnce(&rusqlite::Transaction<'_>, &Path) -> Result<T, KnowledgeError>,
    ) -> Result<T, KnowledgeError> {
        let tx = self.conn.transaction().ctx(op, &self.path)?;
        let out = f(&tx, &self.path)?;
        tx.commit().ctx(op, &self.path)?;
        Ok(out)
    }
}

/// Damage and foreign formats are worth a rebuild; a lock or a full disk is not.
fn classify(e: rusqlite::Error, op: &'static str, path: &Path) -> OpenProblem {
    let damaged = matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
    );
    if damaged {
        OpenProblem::Damaged(e.to_string())
    } else {
        OpenProblem::Fatal(KnowledgeError::Sqlite {
            op,
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
    }
}

/// Renames `path` (and its WAL and shared-memory files, which belong to it) to
/// `<path>.corrupt-<ms>`; returns the new name.
fn move_aside(path: &Path) -> Result<PathBuf, KnowledgeError> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(format!(".corrupt-{}", hearth_engine::now_ms()));
    let aside = PathBuf::from(aside);
    std::fs::rename(path, &aside).io_ctx("move aside", path)?;
    for suffix in ["-wal", "-shm"] {
        let mut from = path.as_os_str().to_owned();
        from.push(suffix);
        let mut to = aside.as_os_str().to_owned();
        to.push(suffix);
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(KnowledgeError::io("move aside", Path::new(&from), e)),
        }
    }
    Ok(aside)
}
