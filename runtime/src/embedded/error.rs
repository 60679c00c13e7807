use std::{io, path::PathBuf};

/// Why the embedded LLM server is not available.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddedError {
    /// `make setup` has not (completely) run: a required file is missing.
    #[error("embedded LLM not installed: run `make setup` (missing {})", missing.display())]
    NotInstalled { missing: PathBuf },
    /// Neither HEARTH_CACHE_DIR, XDG_CACHE_HOME nor HOME says where the cache dir is.
    #[error("embedded LLM: no cache dir (set HEARTH_CACHE_DIR, XDG_CACHE_HOME or HOME)")]
    NoCacheDir,
    #[error("embedded LLM: {op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The launcher ran but the server never became healthy; `log` holds its last stderr lines.
    #[error("embedded LLM server did not start: {reason}{}", log_suffix(log))]
    Start { reason: String, log: String },
    /// Stopped while a server was starting.
    #[error("embedded LLM server start cancelled")]
    Cancelled,
}

fn log_suffix(log: &str) -> String {
    if log.is_empty() {
        String::new()
    } else {
        format!("; last log lines:\n{log}")
    }
}
