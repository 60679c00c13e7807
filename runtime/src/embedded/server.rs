//! The embedded server's handle: its life under the daemon's supervisor (the same code that
//! runs every plugin and MCP server), publishing its address across restarts.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use hearth_plugin_host::supervisor::{StopTimeouts, Supervisor};
use hearth_plugin_host::{PluginState, PluginStatus, RestartPolicy};
use serde_json::Value;

use super::options::{BaseUrl, EmbeddedOptions, STOP_GRACE};
use super::process::{LlamaServer, SERVER_NAME};
use super::{EmbeddedAssets, EmbeddedError};

const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
/// Beyond `start_timeout`: the spawn, and the kill and reap of a start that failed.
const START_MARGIN: Duration = Duration::from_secs(10);

/// The embedded llama.cpp server, kept running until [`Self::stop`] or drop by the same
/// supervisor rules as a plugin: one wait per child, the parent-death signal, a restart after
/// 1 s, 2 s, 3 s, and no restart after the 4th crash within 5 minutes (said in the log and as a
/// `plugin_gave_up` event). Each restart publishes its new address through [`BaseUrl`].
pub struct EmbeddedServer {
    base_url: BaseUrl,
    supervisor: Arc<Supervisor>,
    stopped: bool,
}

impl std::fmt::Debug for EmbeddedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedServer")
            .field("base_url", &self.base_url.get())
            .field("pid", &self.pid())
            .finish()
    }
}

impl EmbeddedServer {
    /// Starts the server and returns once it answers `GET /health` with 200.
    pub fn start(assets: EmbeddedAssets, opts: EmbeddedOptions) -> Result<Self, EmbeddedError> {
        let began = Instant::now();
        let limit = opts.start_timeout + START_MARGIN;
        let threads = opts.threads;
        let model = assets.model().display().to_string();
        let base_url = BaseUrl::default();
        let server = Arc::new(LlamaServer::new(assets, opts, base_url.clone()));
        let supervisor = Arc::new(Supervisor::new(
            RestartPolicy::default(),
            Arc::new(log_event),
            // SIGTERM is how the server is asked; it has STOP_GRACE to go before SIGKILL.
            StopTimeouts {
                graceful: Duration::ZERO,
                term: STOP_GRACE,
            },
        ));
        supervisor.start(Arc::clone(&server) as _);
        let status = supervisor.wait_for(SERVER_NAME, limit, |s| {
            !matches!(s.state, PluginState::Starting)
        });
        let up = status.as_ref().is_some_and(|s| {
            matches!(
                s.state,
                PluginState::Running | PluginState::Restarting { .. }
            )
        });
        if !up {
            supervisor.forget(SERVER_NAME);
            let last = status.and_then(|s| s.last_error);
            return Err(server
                .take_start_error()
                .unwrap_or_else(|| EmbeddedError::Start {
                    reason: last.unwrap_or_else(|| format!("not ready within {limit:?}")),
                    log: String::new(),
                }));
        }
        tracing::info!(
            url = %base_url.get(),
            model = %model,
            threads,
            elapsed_ms = began.elapsed().as_millis() as u64,
            "embedded LLM server started"
        );
        Ok(Self {
            base_url,
            supervisor,
            stopped: false,
        })
    }

    /// `http://127.0.0.1:PORT/v1` of the current (or last) server.
    pub fn base_url(&self) -> String {
        self.base_url.get()
    }

    /// A handle that keeps following the address across restarts.
    pub fn base_url_source(&self) -> BaseUrl {
        self.base_url.clone()
    }

    /// The current server process, `None` while it is being restarted or after [`Self::stop`].
    pub fn pid(&self) -> Option<u32> {
        let status = self.supervisor.status(SERVER_NAME)?;
        (status.state == PluginState::Running)
            .then_some(status.pid)
            .flatten()
    }

    /// The supervisor's view: running, restarting in so many ms, or given up after too many
    /// crashes (with the last exit in words).
    pub fn status(&self) -> Option<PluginStatus> {
        self.supervisor.status(SERVER_NAME)
    }

    /// Restarts since [`Self::start`].
    pub fn restarts(&self) -> u64 {
        self.supervisor
            .status(SERVER_NAME)
            .map_or(0, |status| status.restarts)
    }

    /// Asks the server right now: `GET /health` answers 200 within 2 s.
    pub fn is_healthy(&self) -> bool {
        if self.stopped || self.pid().is_none() {
            return false;
        }
        let url = self.base_url();
        let origin = url.strip_suffix("/v1").unwrap_or(&url);
        super::process::http_status(&format!("{origin}/health"), HEALTH_TIMEOUT) == Some(200)
    }

    /// Stops the server (SIGTERM, SIGKILL after [`STOP_GRACE`]) and waits for it. Idempotent.
    pub fn stop(&mut self) {
        if !std::mem::replace(&mut self.stopped, true) {
            self.supervisor.forget(SERVER_NAME);
        }
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The supervisor's lifecycle events, for the log: the model server's supervisor starts before
/// the daemon's event bus exists, and the crashes are in the log either way.
fn log_event(kind: &str, payload: &Value) {
    tracing::info!(target: "hearth::embedded", event = kind, %payload, "embedded LLM server event");
}
