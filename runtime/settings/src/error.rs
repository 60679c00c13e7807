//! The crate-boundary error.

use std::path::PathBuf;

/// Everything a settings operation can refuse or fail with; each names the key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// Not `core.<name>` or `plugin.<plugin>.<name>` with names of `[a-z0-9_-]` and dots.
    #[error("settings key {key:?} is invalid: {reason}")]
    BadKey {
        /// The key as given.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The caller may not touch the key.
    #[error("{who} may not access settings key {key:?}: {reason}")]
    Denied {
        /// `plugin NAME` or `the kernel`.
        who: String,
        /// The full key.
        key: String,
        /// Why not.
        reason: &'static str,
    },
    /// A value (or a definition's default) does not have the definition's type.
    #[error("settings key {key:?} takes {expected}, not {found}")]
    WrongType {
        /// The full key.
        key: String,
        /// The definition's type.
        expected: &'static str,
        /// The value given.
        found: String,
    },
    /// The key has no definition, so there is nothing to check a value against.
    #[error("unknown settings key {key:?}: nothing defines it ({hint})")]
    Unknown {
        /// The full key.
        key: String,
        /// Where the known keys are listed.
        hint: &'static str,
    },
    /// The settings file is held by another process (one owner at a time).
    #[error("{}: held by another process (the settings file has one owner, the running daemon)", path.display())]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// SQLite failed.
    #[error("{}: {source}", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The error.
        source: rusqlite::Error,
    },
    /// The directory could not be created.
    #[error("{}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}
