//! The one error type of the durable store. Every variant names the operation and the database
//! file; SQLite's own error type is turned into text here and never reaches a caller.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// What went wrong in a store operation. `op` is the store method (`"journal_accept"`, …) and
/// `path` the database file, so a log line alone says where to look.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// SQLite reported damage while an operation ran (`SQLITE_CORRUPT`, `SQLITE_NOTADB`). The
    /// store changes nothing on its own because of it; a damaged file found at open is
    /// [`StoreError::Damaged`] instead.
    #[error(
        "{op}: SQLite reports {path} as damaged ({detail}); stop Hearth and run `hearth store check`"
    )]
    Corrupt {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// SQLite's report of the damage.
        detail: String,
    },
    /// The integrity check at open found the store damaged, or its database file missing or
    /// empty beside a WAL that holds writes. Nothing was opened for writing: the files are
    /// byte-for-byte as they were, and a copy of each is in `backup` (when it could be made).
    #[error(
        "{op}: the memory store {path} is damaged: {detail}. Hearth did not open it for writing \
         and changed none of its files{note}. Run `hearth store check --data-dir {dir}` for the \
         findings and `hearth store recover --data-dir {dir}` to salvage the readable rows into \
         a fresh store (the damaged files are kept)",
        note = backup_note(backup.as_deref()),
        dir = path.parent().unwrap_or(Path::new(".")).display()
    )]
    Damaged {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// What the integrity check found.
        detail: String,
        /// The directory holding copies of the files, when they could be made.
        backup: Option<PathBuf>,
    },
    /// Recovery could not produce a store that passes the integrity check; the damaged files
    /// are where they were.
    #[error("{op}: could not recover {path}: {detail}; the damaged files were left in place")]
    Unrecoverable {
        /// The store method that failed.
        op: &'static str,
        /// The file recovery could not use: the database or its WAL.
        path: PathBuf,
        /// What stopped the recovery.
        detail: String,
    },
    /// A SQLite database that is not a Hearth memory store (it has tables but no
    /// `schema_version`, or another application id). Left untouched.
    #[error(
        "{op}: {path} is a SQLite database but not a Hearth memory store ({detail}); it was left untouched"
    )]
    Foreign {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// What gave it away (no `schema_version`, another application id).
        detail: String,
    },
    /// The disk (or the page limit) is full. The transaction was rolled back: nothing of the
    /// operation was written.
    #[error("{op}: disk full writing {path}; the operation was rolled back, nothing was written")]
    DiskFull {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
    },
    /// Another [`Store`](super::Store) in this process already has the file open for writing.
    /// One file has one writer; everything else sends its writes to that one.
    #[error("{op}: {path} is already open for writing in this process; send writes to its owner")]
    AlreadyOpen {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
    },
    /// SQLite rolled the open group commit back on its own (after a full disk or an I/O
    /// error): none of the group's writes is in the store.
    #[error("{op}: SQLite rolled back the group of writes to {path}; none of them was written")]
    GroupLost {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
    },
    /// The database was written by a newer Hearth.
    #[error(
        "{op}: {path} has schema version {found}, newer than this build knows ({known}); upgrade Hearth"
    )]
    TooNew {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The file's schema version.
        found: u32,
        /// The newest version this build knows ([`STORE_SCHEMA_VERSION`](super::STORE_SCHEMA_VERSION)).
        known: u32,
    },
    /// A read connection found a database that the writer has not migrated yet.
    #[error(
        "{op}: {path} has schema version {found}, older than {known}; open it with Store::open first"
    )]
    NotMigrated {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The file's schema version.
        found: u32,
        /// The version this build expects ([`STORE_SCHEMA_VERSION`](super::STORE_SCHEMA_VERSION)).
        known: u32,
    },
    /// Another connection held a lock longer than the busy timeout.
    #[error("{op}: {path} stayed locked past the busy timeout ({detail})")]
    Busy {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// SQLite's error text.
        detail: String,
    },
    /// `journal_accept` of a request id that is already journaled.
    #[error("{op}: request {request_id} is already in the journal of {path}")]
    DuplicateRequest {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The request id already journaled.
        request_id: String,
    },
    /// `journal_reply` for a request that was never accepted.
    #[error("{op}: request {request_id} was never accepted in {path}")]
    UnknownRequest {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The request id with no accepted input.
        request_id: String,
    },
    /// `journal_reply` for a request that already has its one terminal reply.
    #[error("{op}: request {request_id} already has a reply in {path}")]
    AlreadyReplied {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The request id that already has its reply.
        request_id: String,
    },
    /// An event or cold entry id that is not there.
    #[error("{op}: no {what} with id {id} in {path}")]
    Missing {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// What kind of row was looked for (`window event`, `cold entry`, …).
        what: &'static str,
        /// The row id that was not found.
        id: i64,
    },
    /// A value that cannot be stored or a stored value that cannot be read back (bad JSON, a
    /// vector blob whose length is not a multiple of 4, a number out of range).
    #[error("{op}: bad data for {path}: {detail}")]
    Data {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// Which value was bad, and how.
        detail: String,
    },
    /// Any other SQLite failure (I/O error, permission, constraint).
    #[error("{op}: {path}: {detail}")]
    Sqlite {
        /// The store method that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// SQLite's error text.
        detail: String,
    },
    /// A file-system operation around the database (creating it, setting its mode, syncing its
    /// directory, copying it aside).
    #[error("{op}: {path}: {source}")]
    Io {
        /// The store method that failed.
        op: &'static str,
        /// The file or directory the failing call touched.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// Classifies a SQLite error by its primary result code.
    pub(super) fn sql(op: &'static str, path: &Path, err: rusqlite::Error) -> Self {
        let path = path.to_path_buf();
        let detail = err.to_string();
        match err.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => StoreError::DiskFull { op, path },
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
                StoreError::Corrupt { op, path, detail }
            }
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                StoreError::Busy { op, path, detail }
            }
            _ => StoreError::Sqlite { op, path, detail },
        }
    }

    pub(super) fn data(op: &'static str, path: &Path, detail: impl Into<String>) -> Self {
        StoreError::Data {
            op,
            path: path.to_path_buf(),
            detail: detail.into(),
        }
    }

    /// The store operation that failed.
    pub fn op(&self) -> &'static str {
        match self {
            StoreError::Corrupt { op, .. }
            | StoreError::Damaged { op, .. }
            | StoreError::Unrecoverable { op, .. }
            | StoreError::Foreign { op, .. }
            | StoreError::DiskFull { op, .. }
            | StoreError::AlreadyOpen { op, .. }
            | StoreError::GroupLost { op, .. }
            | StoreError::TooNew { op, .. }
            | StoreError::NotMigrated { op, .. }
            | StoreError::Busy { op, .. }
            | StoreError::DuplicateRequest { op, .. }
            | StoreError::UnknownRequest { op, .. }
            | StoreError::AlreadyReplied { op, .. }
            | StoreError::Missing { op, .. }
            | StoreError::Data { op, .. }
            | StoreError::Sqlite { op, .. }
            | StoreError::Io { op, .. } => op,
        }
    }

    /// The database file the operation was on.
    pub fn path(&self) -> &Path {
        match self {
            StoreError::Corrupt { path, .. }
            | StoreError::Damaged { path, .. }
            | StoreError::Unrecoverable { path, .. }
            | StoreError::Foreign { path, .. }
            | StoreError::DiskFull { path, .. }
            | StoreError::AlreadyOpen { path, .. }
            | StoreError::GroupLost { path, .. }
            | StoreError::TooNew { path, .. }
            | StoreError::NotMigrated { path, .. }
            | StoreError::Busy { path, .. }
            | StoreError::DuplicateRequest { path, .. }
            | StoreError::UnknownRequest { path, .. }
            | StoreError::AlreadyReplied { path, .. }
            | StoreError::Missing { path, .. }
            | StoreError::Data { path, .. }
            | StoreError::Sqlite { path, .. }
            | StoreError::Io { path, .. } => path,
        }
    }
}

/// Where the copies of a damaged store's files went, for its error message.
fn backup_note(backup: Option<&Path>) -> String {
    match backup {
        Some(dir) => format!("; a copy of them is in {}", dir.display()),
        None => String::new(),
    }
}

/// Attaches the operation and path to a SQLite result.
pub(super) trait SqlContext<T> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T, StoreError>;
}

impl<T> SqlContext<T> for rusqlite::Result<T> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T, StoreError> {
        self.map_err(|e| StoreError::sql(op, path, e))
    }
}
