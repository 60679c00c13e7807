//! The crate's one error type. Every message names the operation and the document or file it
//! concerns, so a tool result shown to the model or the user says what went wrong and where.

use std::path::{Path, PathBuf};

/// Why a knowledge-base operation failed. The files on disk are never left half-written: a
/// document is replaced by an atomic rename, and index writes run in transactions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KnowledgeError {
    /// A document name breaks the naming rules (see [`validate_name`](crate::validate_name)).
    #[error("invalid document name {name:?}: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// An argument other than a name is unusable (an empty query, `k = 0`).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// No document has this name.
    #[error("no knowledge document named {name:?}")]
    NotFound {
        /// The name looked up.
        name: String,
    },
    /// A document of this name exists and replacing it was not asked for.
    #[error("knowledge document {name:?} already exists (pass replace to overwrite it)")]
    Exists {
        /// The name of the existing document.
        name: String,
    },
    /// A document's content is over the size limit.
    #[error("knowledge document {name:?} is {bytes} bytes, over the limit of {limit}")]
    TooLarge {
        /// The document.
        name: String,
        /// Its size in bytes.
        bytes: u64,
        /// The limit in bytes ([`MAX_DOCUMENT_BYTES`](crate::MAX_DOCUMENT_BYTES)).
        limit: u64,
    },
    /// The file system refused an operation.
    #[error("knowledge {op} on {path}: {source}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The file or directory it was applied to.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// SQLite refused an operation on the index.
    #[error("knowledge index {op} on {path}: {detail}")]
    Sqlite {
        /// The operation that failed.
        op: &'static str,
        /// The index file.
        path: PathBuf,
        /// SQLite's message.
        detail: String,
    },
    /// The embedder failed on a query.
    #[error("knowledge {op}: embedding failed: {detail}")]
    Embed {
        /// The operation that failed.
        op: &'static str,
        /// The embedder's message.
        detail: String,
    },
}

impl KnowledgeError {
    pub(crate) fn io(op: &'static str, path: &Path, source: std::io::Error) -> KnowledgeError {
        KnowledgeError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Converts SQLite errors at the crate edge, so rusqlite never appears in a public signature.
pub(crate) trait SqlContext<T> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T, KnowledgeError>;
}

impl<T> SqlContext<T> for Result<T, rusqlite::Error> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T, KnowledgeError> {
        self.map_err(|e| KnowledgeError::Sqlite {
            op,
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
    }
}

/// Attaches an operation and a path to an I/O result.
pub(crate) trait IoContext<T> {
    fn io_ctx(self, op: &'static str, path: &Path) -> Result<T, KnowledgeError>;
}

impl<T> IoContext<T> for Result<T, std::io::Error> {
    fn io_ctx(self, op: &'static str, path: &Path) -> Result<T, KnowledgeError> {
        self.map_err(|source| KnowledgeError::io(op, path, source))
    }
}
