//! The crate's one error type. Every variant says what went wrong and on which digest or file,
//! so a log line alone is enough to find the problem.

use std::path::{Path, PathBuf};

/// Why a media operation failed. A failed `put` or `delete` leaves the store as it was, or in a
/// state the next `put` of the same bytes repairs (see `memory/media/DESIGN.md`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MediaError {
    /// `put` was given no bytes: an empty blob is never a meaningful memory.
    #[error("media put: empty data refused (nothing was stored)")]
    Empty,
    /// `put` was given more bytes than the store's limit.
    #[error("media put: {bytes} bytes is over the limit of {limit} bytes (nothing was stored)")]
    TooLarge {
        /// The size given.
        bytes: u64,
        /// The store's limit.
        limit: u64,
    },
    /// A digest string is not 64 lower-case hex characters.
    #[error("invalid media digest {digest:?}: expected 64 lower-case hex characters (sha256)")]
    InvalidDigest {
        /// The string as given.
        digest: String,
    },
    /// No media row has this digest.
    #[error("no media {digest}")]
    NotFound {
        /// The digest looked up.
        digest: String,
    },
    /// More than one item's digest begins with the prefix given.
    #[error("media {prefix}…: more than one item begins with it; give more of the digest")]
    Ambiguous {
        /// The prefix given.
        prefix: String,
    },
    /// The row exists but its blob file does not.
    #[error("media {digest}: blob {path} is missing")]
    Missing {
        /// The digest looked up.
        digest: String,
        /// Where the blob should be.
        path: PathBuf,
    },
    /// The blob's bytes no longer hash to its digest: content corrupted.
    #[error("media {digest}: content corrupted (blob {path} does not hash to its digest)")]
    Corrupted {
        /// The digest looked up.
        digest: String,
        /// The blob file.
        path: PathBuf,
    },
    /// `media.db` is not a Hearth media store, or was written by a newer Hearth.
    #[error("media store {path} is not usable: {reason}")]
    Foreign {
        /// The database file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A vector is empty, has a non-finite value, or has an empty fingerprint.
    #[error("media {digest}: invalid vector: {reason}")]
    InvalidVector {
        /// The media the vector was for.
        digest: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Vectors of one fingerprint must all have one dimension: they live in one space.
    #[error(
        "media {digest}: vector of dimension {got} does not match the {expected} of other \
         vectors with fingerprint {fingerprint:?}"
    )]
    DimensionMismatch {
        /// The media the vector was for.
        digest: String,
        /// The embedding space.
        fingerprint: String,
        /// The dimension already stored under this fingerprint.
        expected: usize,
        /// The dimension given.
        got: usize,
    },
    /// The file system refused an operation.
    #[error("media {op} on {path}: {source}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("media {op} on {path}: {detail}")]
    Sqlite {
        /// The operation that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// SQLite's message.
        detail: String,
    },
}

/// Converts SQLite errors at the crate edge, so rusqlite never appears in a public signature.
pub(crate) trait SqlContext<T> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T, MediaError>;
}

impl<T> SqlContext<T> for Result<T, rusqlite::Error> {
    fn ctx(self, op: &'static str, path: &Path) -> Result<T, MediaError> {
        self.map_err(|e| MediaError::Sqlite {
            op,
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
    }
}

/// Attaches the operation and path to an I/O error.
pub(crate) trait IoContext<T> {
    fn io(self, op: &'static str, path: &Path) -> Result<T, MediaError>;
}

impl<T> IoContext<T> for Result<T, std::io::Error> {
    fn io(self, op: &'static str, path: &Path) -> Result<T, MediaError> {
        self.map_err(|source| MediaError::Io {
            op,
            path: path.to_path_buf(),
            source,
        })
    }
}
