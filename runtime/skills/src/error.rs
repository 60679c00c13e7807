//! Why a skill was not loaded.

use std::path::PathBuf;

/// A skill that was skipped, with where and why.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// `SKILL.md` breaks the format at `line` (1-based).
    #[error("{}:{line}: {problem}", file.display())]
    Malformed {
        /// The `SKILL.md`.
        file: PathBuf,
        /// The line at fault.
        line: usize,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// A file or folder could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}
