use std::{io, path::PathBuf};

/// Why the embedded LLM server is not available.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbeddedError {
    /// `make setup` has not (completely) run: a required file is missing.
    #[error("embedded LLM not installed: run `make setup` (missing {})", missing.display())]
    NotInstalled {
        /// The first required file that is not there.
        missing: PathBuf,
    },
    /// Neither HEARTH_CACHE_DIR, XDG_CACHE_HOME nor HOME says where the cache dir is.
    #[error("embedded LLM: no cache dir (set HEARTH_CACHE_DIR, XDG_CACHE_HOME or HOME)")]
    NoCacheDir,
    /// An I/O operation failed (writing the launcher script, spawning the server).
    #[error("embedded LLM: {op} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `write`, `rename into`, `spawn`.
        op: &'static str,
        /// The file it was done to.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The launcher ran but the server never became healthy; `log` holds its last stderr lines.
    #[error("embedded LLM server did not start: {reason}{}", log_suffix(log))]
    Start {
        /// Why it counts as not started (exited, timed out, could not be supervised).
        reason: String,
        /// The server's last stderr lines; empty when there were none.
        log: String,
    },
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
