use std::{
    path::PathBuf,
    sync::Arc,
    thread::{self, JoinHandle},
    time::{Duration, Instant},
};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded, select};
use parking_lot::{Mutex, RwLock};

use super::{EmbeddedAssets, EmbeddedError, process::ServerProcess};

/// Model name the server reports in `/v1/models` and accepts in requests.
pub const DEFAULT_ALIAS: &str = "smollm2-135m";
/// Context window in tokens; ~250 MB RSS with the default model.
pub const DEFAULT_CTX: u32 = 4096;
/// Wait before the first restart; doubles per consecutive crash.
pub const BACKOFF_START: Duration = Duration::from_secs(1);
/// The longest wait between restarts, however many crashes came before.
pub const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// How long the server gets to stop after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// A server that ran this long counts as healthy again: the next crash starts the backoff anew.
const STABLE_RUN: Duration = Duration::from_secs(60);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

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
#[derive(Debug, Clone)]
pub struct BaseUrl(Arc<RwLock<String>>);

impl BaseUrl {
    /// The URL as of now.
    pub fn get(&self) -> String {
        self.0.read().clone()
    }

    fn set(&self, url: String) {
        *self.0.write() = url;
    }
}

#[derive(Debug, Default)]
struct Status {
    pid: Option<u32>,
    restarts: u64,
}

/// The embedded llama.cpp server, kept running by a supervisor thread until [`Self::stop`] or
/// drop: when the child exits unexpectedly it is restarted after 1 s, 2 s, 4 s … (capped at
/// 30 s), and the new address is published through [`BaseUrl`].
#[derive(Debug)]
pub struct EmbeddedServer {
    base_url: BaseUrl,
    status: Arc<Mutex<Status>>,
    /// Dropping it tells the supervisor to stop the child and return.
    stop: Option<Sender<()>>,
    supervisor: Option<JoinHandle<()>>,
}

impl EmbeddedServer {
    /// Starts the server and returns once it answers `GET /health` with 200.
    pub fn start(assets: EmbeddedAssets, opts: EmbeddedOptions) -> Result<Self, EmbeddedError> {
        let began = Instant::now();
        let (stop_tx, stop_rx) = bounded::<()>(0);
        let first = ServerProcess::launch(&assets, &opts, &stop_rx)?;
        let base_url = BaseUrl(Arc::new(RwLock::new(api_url(first.origin()))));
        let status = Arc::new(Mutex::new(Status {
            pid: Some(first.pid()),
            restarts: 0,
        }));
        tracing::info!(
            url = %base_url.get(),
            pid = first.pid(),
            model = %assets.model().display(),
            threads = opts.threads,
            elapsed_ms = began.elapsed().as_millis() as u64,
            "embedded LLM server ready"
        );
        let supervisor = Supervisor {
            assets,
            opts,
            base_url: base_url.clone(),
            status: Arc::clone(&status),
            stop: stop_rx,
        };
        // On failure the closure, and with it the child, is dropped: the child is killed.
        let handle = thread::Builder::new()
            .name("hearth-llm-supervisor".into())
            .spawn(move || supervisor.run(first))
            .map_err(|e| EmbeddedError::Start {
                reason: format!("cannot spawn the supervisor thread: {e}"),
                log: String::new(),
            })?;
        Ok(Self {
            base_url,
            status,
            stop: Some(stop_tx),
            supervisor: Some(handle),
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
        self.status.lock().pid
    }

    /// Successful restarts since [`Self::start`].
    pub fn restarts(&self) -> u64 {
        self.status.lock().restarts
    }

    /// Asks the server right now: `GET /health` answers 200 within 2 s.
    pub fn is_healthy(&self) -> bool {
        if self.stop.is_none() || self.pid().is_none() {
            return false;
        }
        let url = self.base_url();
        let origin = url.strip_suffix("/v1").unwrap_or(&url);
        super::process::http_status(&format!("{origin}/health"), HEALTH_TIMEOUT) == Some(200)
    }

    /// Stops the supervisor and the server (SIGTERM, SIGKILL after [`STOP_GRACE`]) and waits
    /// for both. Idempotent.
    pub fn stop(&mut self) {
        drop(self.stop.take());
        if let Some(handle) = self.supervisor.take()
            && handle.join().is_err()
        {
            tracing::error!("embedded LLM supervisor panicked");
        }
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn api_url(origin: &str) -> String {
    format!("{origin}/v1")
}

struct Supervisor {
    assets: EmbeddedAssets,
    opts: EmbeddedOptions,
    base_url: BaseUrl,
    status: Arc<Mutex<Status>>,
    stop: Receiver<()>,
}

impl Supervisor {
    fn run(self, mut current: ServerProcess) {
        let mut backoff = BACKOFF_START;
        let mut running_since = Instant::now();
        loop {
            select! {
                recv(self.stop) -> _ => {
                    let pid = current.pid();
                    let status = current.terminate(STOP_GRACE);
                    self.status.lock().pid = None;
                    tracing::info!(pid, ?status, "embedded LLM server stopped");
                    return;
                }
                recv(current.exited()) -> _ => {}
            }
            let pid = current.pid();
            let exit = current.reap();
            self.status.lock().pid = None;
            if running_since.elapsed() >= STABLE_RUN {
                backoff = BACKOFF_START;
            }
            tracing::warn!(
                pid,
                ?exit,
                ?backoff,
                "embedded LLM server exited unexpectedly; restarting"
            );
            current = loop {
                if self.stop_within(backoff) {
                    return;
                }
                match ServerProcess::launch(&self.assets, &self.opts, &self.stop) {
                    Ok(process) => break process,
                    Err(EmbeddedError::Cancelled) => return,
                    Err(e) => {
                        backoff = next_backoff(backoff);
                        tracing::warn!(error = %e, ?backoff, "embedded LLM server restart failed");
                    }
                }
            };
            // Crashing again soon after this restart waits longer; a stable run resets it.
            backoff = next_backoff(backoff);
            running_since = Instant::now();
            let url = api_url(current.origin());
            self.base_url.set(url.clone());
            let restarts = {
                let mut status = self.status.lock();
                status.pid = Some(current.pid());
                status.restarts += 1;
                status.restarts
            };
            tracing::info!(%url, pid = current.pid(), restarts, "embedded LLM server restarted");
        }
    }

    /// Sleeps `wait`, returning early with `true` when asked to stop.
    fn stop_within(&self, wait: Duration) -> bool {
        !matches!(self.stop.recv_timeout(wait), Err(RecvTimeoutError::Timeout))
    }
}

fn next_backoff(current: Duration) -> Duration {
    (current * 2).min(BACKOFF_CAP)
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn backoff_doubles_from_one_second_and_caps_at_thirty() {
        let mut seen = vec![BACKOFF_START];
        for _ in 0..7 {
            seen.push(next_backoff(*seen.last().expect("non-empty")));
        }
        let secs: Vec<u64> = seen.iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30, 30]);
    }

    #[test]
    fn default_options_leave_a_core_free_but_use_at_least_one() {
        let opts = EmbeddedOptions::default();
        let cores = thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(opts.threads, (cores - 1).max(1));
        assert_eq!(opts.ctx, 4096);
        assert_eq!(opts.alias, "smollm2-135m");
    }
}
