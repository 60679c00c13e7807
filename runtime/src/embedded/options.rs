//! How the embedded server is run and where it answers: its options and its address, which a
//! restart may move.

use std::{path::PathBuf, sync::Arc, thread, time::Duration};

use parking_lot::RwLock;

/// Model name the server reports in `/v1/models` and accepts in requests.
pub const DEFAULT_ALIAS: &str = "smollm2-135m";
/// Context window in tokens; ~250 MB RSS with the default model.
pub const DEFAULT_CTX: u32 = 4096;
/// How long the server gets to stop after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// How the server is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedOptions {
    /// CPU threads for decode and prompt reading. More threads than free cores collapses
    /// throughput, so the default leaves one core to the rest of the daemon.
    pub threads: usize,
    /// Context window in tokens (default [`DEFAULT_CTX`]).
    pub ctx: u32,
    /// The model name the server reports and accepts (default [`DEFAULT_ALIAS`]).
    pub alias: String,
    /// A Jinja chat template replacing the launcher's ChatML-with-tools one.
    pub chat_template_file: Option<PathBuf>,
    /// Spawn → healthy, per start or restart (the model loads in 1–2 s on idle cores).
    pub start_timeout: Duration,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        let cores = thread::available_parallelism().map_or(1, usize::from);
        Self {
            threads: cores.saturating_sub(1).max(1),
            ctx: DEFAULT_CTX,
            alias: DEFAULT_ALIAS.to_string(),
            chat_template_file: None,
            start_timeout: Duration::from_secs(60),
        }
    }
}

/// The server's current OpenAI base URL (`http://127.0.0.1:PORT/v1`); a restart may move it to
/// another port, and every clone sees the new one.
#[derive(Debug, Clone, Default)]
pub struct BaseUrl(Arc<RwLock<String>>);

impl BaseUrl {
    /// The URL as of now.
    pub fn get(&self) -> String {
        self.0.read().clone()
    }

    pub(super) fn set(&self, url: String) {
        *self.0.write() = url;
    }
}

/// The OpenAI API under a server's origin.
pub(super) fn api_url(origin: &str) -> String {
    format!("{origin}/v1")
}

#[cfg(test)]
mod unit {
    use super::*;
    use std::thread;

    #[test]
    fn default_options_leave_a_core_free_but_use_at_least_one() {
        let opts = EmbeddedOptions::default();
        let cores = thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(opts.threads, (cores - 1).max(1));
        assert_eq!(opts.ctx, 4096);
        assert_eq!(opts.alias, "smollm2-135m");
    }
}
