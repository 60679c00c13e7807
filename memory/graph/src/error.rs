//! The crate's one error type, with the operation and file it happened in.

use std::path::PathBuf;

/// Why a graph operation failed. Nothing is half-written when one is returned: every write runs
/// in one transaction, rolled back on error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// SQLite refused an operation.
    #[error("graph {op} on {path}: {detail}")]
    Sqlite {
        /// The operation that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// SQLite's message.
        detail: String,
    },
    /// The file system refused an operation on the database file.
    #[error("graph {op} on {path}: {source}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not a Hearth graph, or was written by a newer Hearth.
    #[error("graph {path} is not usable: {reason}")]
    Foreign {
        /// The database file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// An entity name is empty, overlong or contains control characters.
    #[error("invalid entity name {name:?}: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A predicate is not a short lower-case identifier.
    #[error("invalid predicate {predicate:?}: {reason}")]
    InvalidPredicate {
        /// The predicate as given.
        predicate: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A fact id that does not parse (`r<n>` or `e<n>`).
    #[error("invalid fact id {id:?}: expected r<number> or e<number>")]
    InvalidId {
        /// The id as given.
        id: String,
    },
    /// No fact has this id (it was never stored, or has been forgotten).
    #[error("no fact {id}")]
    NotFound {
        /// The id looked up.
        id: String,
    },
    /// No entity has this name or alias.
    #[error("nobody and nothing called {name:?} is known")]
    UnknownEntity {
        /// The name looked up.
        name: String,
    },
    /// A claim was refused as a whole (its name or predicate is invalid); nothing was written.
    #[error("not stored: {reason}")]
    Rejected {
        /// Why.
        reason: String,
    },
    /// A purge was asked for without any criterion.
    #[error("purge needs at least one criterion")]
    NoCriteria,
    /// A purge criterion matches nothing; the purge is refused rather than run without it.
    #[error("purge criterion {criterion} matches nothing; nothing was removed")]
    MatchesNothing {
        /// The criterion, as `field = value`.
        criterion: String,
    },
    /// A scene key with nothing left after normalisation (no letter, digit, CJK character,
    /// `:`, `-` or `.`): it names no scene.
    #[error("invalid scene key {key:?}: nothing is left of it after normalisation")]
    InvalidSceneKey {
        /// The key as given.
        key: String,
    },
    /// A scene ref was asked for a fact that is not a relation (dated events are not tagged).
    #[error("{id} is not a relation; only relations are tagged with scenes")]
    NotARelation {
        /// The id as given.
        id: String,
    },
    /// Scene refs decay with a half-life that must be positive and a floor in [0, 1).
    #[error("invalid scene decay: {reason}")]
    InvalidDecay {
        /// What is wrong.
        reason: &'static str,
    },
    /// The embedder failed on a query or a sentence.
    #[error("graph {op}: embedding failed: {detail}")]
    Embed {
        /// The operation that failed.
        op: &'static str,
        /// The embedder's message.
        detail: String,
    },
}

/// Converts SQLite errors at the crate edge, so rusqlite never appears in a public signature.
pub(crate) trait SqlContext<T> {
    fn ctx(self, op: &'static str, path: &std::path::Path) -> Result<T, GraphError>;
}

impl<T> SqlContext<T> for Result<T, rusqlite::Error> {
    fn ctx(self, op: &'static str, path: &std::path::Path) -> Result<T, GraphError> {
        self.map_err(|e| GraphError::Sqlite {
            op,
            path: path.to_path_buf(),
            detail: e.to_string(),
        })
    }
}
