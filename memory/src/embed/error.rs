//! What can go wrong while locating, loading or running an embedder. ONNX Runtime and tokenizer
//! errors are turned into text here so their types never reach a public signature.

use std::path::PathBuf;

/// Failure of a dense embedder. `NotInstalled` is the ordinary "no model" case: callers fall back
/// to sparse vectors (and say so) rather than treat it as fatal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The assets from `make setup` are absent or incomplete.
    #[error("embedding model not installed: run `make setup` ({what} in {})", dir.display())]
    NotInstalled {
        /// The `embedder/` directory that was looked in.
        dir: PathBuf,
        /// What is missing there (the `READY` marker, a file, the cache dir itself).
        what: String,
    },
    /// An asset file exists but cannot be used as it is.
    #[error("embedding asset {}: {message}", path.display())]
    Asset {
        /// The unusable file.
        path: PathBuf,
        /// Why it cannot be used.
        message: String,
    },
    /// ONNX Runtime refused an operation (`op` names it: load library, create session, run, ...).
    #[error("onnx runtime: {op}: {message}")]
    Runtime {
        /// The runtime operation that failed.
        op: &'static str,
        /// ONNX Runtime's own error text.
        message: String,
    },
    /// The tokenizer failed to load or to encode.
    #[error("tokenizer: {message}")]
    Tokenizer {
        /// The tokenizer's own error text.
        message: String,
    },
    /// The graph answered with something other than `f32[batch, dim]`.
    #[error("embedding model output: {message}")]
    Output {
        /// What the graph answered instead.
        message: String,
    },
}

impl EmbedError {
    pub(crate) fn runtime(op: &'static str, err: impl std::fmt::Display) -> Self {
        Self::Runtime {
            op,
            message: err.to_string(),
        }
    }

    pub(crate) fn tokenizer(err: impl std::fmt::Display) -> Self {
        Self::Tokenizer {
            message: err.to_string(),
        }
    }

    /// True when the model is simply not there (as opposed to present but broken).
    pub fn is_not_installed(&self) -> bool {
        matches!(self, Self::NotInstalled { .. })
    }
}
