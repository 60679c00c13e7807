//! The daemon's Unix socket (mode 0600), served by one `mio` reactor thread (see
//! [`reactor`](super::reactor)) with two worker threads beside it: three threads however many
//! clients are connected. Streamed answers come from the event ring — the same deltas every
//! other reader sees — read on the reactor's thread and routed by request id.

use super::bind::bind_private;
use super::reactor::{LISTENER, RING, Reactor, WAKER, Wake};
use super::ring_feed::{self, RingFeed};
use super::worker::Worker;
use crate::config::SocketLimits;
use crate::daemon::SettingsOp;
use hearth_kernel::ingress::KernelHandle;
use hearth_llm::provider::SourceConfig;
use mio::{Interest, Poll, Waker};
use parking_lot::Mutex;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the socket may ask of the daemon beyond the kernel itself. Every answer the client
/// sees as an `error` line is a [`ControlError`]; its `Display` is that line's text.
pub trait Control: Send + Sync + 'static {
    /// The kernel requests are submitted to.
    fn kernel(&self) -> &KernelHandle;
    /// Scheduler snapshot, providers and their availability.
    fn status(&self) -> Value;
    /// The configured sources and their state.
    fn sources(&self) -> Value;
    /// Adds (and saves) a source; the answer says what was done.
    fn add_source(&self, source: SourceConfig) -> Result<String, ControlError>;
    /// Removes (and saves) a source.
    fn remove_source(&self, name: &str) -> Result<String, ControlError>;
    /// Sends a short test request through a source.
    fn test_source(&self, name: &str) -> Result<String, ControlError>;
    /// A `hearth plugin` action; `name` is the plugin (or the directory, for `install`).
    fn plugin(&self, action: &str, name: Option<&str>) -> Result<Value, ControlError>;
    /// A `hearth memory` action on the graph memory; `arg` is the query or the fact id. A
    /// controller without memory answers that it has none.
    fn memory(
        &self,
        action: &str,
        arg: Option<&str>,
        k: Option<usize>,
    ) -> Result<Value, ControlError> {
        let _ = (arg, k);
        Err(ControlError::Memory(format!(
            "memory {action}: this server has no memory"
        )))
    }

    /// A `hearth mcp` request to the running daemon (`sync`).
    fn mcp(&self, action: &str) -> Result<Value, ControlError> {
        Err(ControlError::Invalid(format!(
            "mcp {action}: this server runs no MCP servers"
        )))
    }

    /// A `hearth settings` request.
    fn settings(&self, op: SettingsOp) -> Result<Value, ControlError> {
        let _ = op;
        Err(ControlError::Invalid(
            "this daemon has no settings registry".into(),
        ))
    }
}

/// Why a control request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControlError {
    /// A source could not be added, removed or tested (the message names it and why).
    #[error(transparent)]
    Source(#[from] crate::daemon::SourceError),
    /// A plugin action failed.
    #[error(transparent)]
    Plugin(#[from] hearth_plugin_host::PluginError),
    /// A settings request was refused (the message names the key and why).
    #[error(transparent)]
    Settings(#[from] crate::daemon::SettingsServiceError),
    /// The request itself is wrong: a missing name, an unknown action.
    #[error("{0}")]
    Invalid(String),
    /// The graph memory refused or failed a request (the message says why).
    #[error("{0}")]
    Memory(String),
}

impl ControlError {
    /// The kind a plugin's call is answered with: the request's own fault (a bad name, key or
    /// value) is invalid arguments, a setting the caller may not change is denied, anything
    /// else a failure.
    pub fn kind(&self) -> hearth_rpc::ErrorKind {
        use crate::daemon::SettingsServiceError as S;
        use hearth_plugin_host::PluginError as P;
        use hearth_rpc::ErrorKind;
        use hearth_settings::SettingsError as E;
        match self {
            ControlError::Invalid(_)
            | ControlError::Plugin(P::NotInstalled { .. })
            | ControlError::Settings(S::Invalid(_))
            | ControlError::Settings(S::Settings(E::BadKey { .. } | E::WrongType { .. })) => {
                ErrorKind::InvalidArguments
            }
            ControlError::Settings(S::Settings(E::Denied { .. })) => ErrorKind::Denied,
            _ => ErrorKind::Failed,
        }
    }
}

/// What the owner of the socket has decided, read by the reactor on every wake.
#[derive(Debug)]
pub(super) struct ServerState {
    accepting: AtomicBool,
    drain_until: Mutex<Option<Instant>>,
}

impl ServerState {
    pub(super) fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::Relaxed)
    }

    pub(super) fn drain_deadline(&self) -> Option<Instant> {
        *self.drain_until.lock()
    }
}

/// The listening socket and its reactor thread; [`finish`](Self::finish) ends both.
pub struct SocketServer {
    path: PathBuf,
    state: Arc<ServerState>,
    waker: Arc<Waker>,
    reactor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SocketServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketServer")
            .field("path", &self.path)
            .finish()
    }
}

impl SocketServer {
    /// Binds `path` with mode 0600 (staged in `private_dir`, mode 0700; a stale socket is
    /// replaced, a live one or any other file is an error) and starts serving.
    pub fn bind(
        path: &Path,
        private_dir: &Path,
        api_key: Option<String>,
        limits: SocketLimits,
        control: Arc<dyn Control>,
    ) -> std::io::Result<Self> {
        let (listener, bound) = bind_private(path, private_dir)?;
        listener.set_nonblocking(true)?;
        let mut listener = mio::net::UnixListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let state = Arc::new(ServerState {
            accepting: AtomicBool::new(true),
            drain_until: Mutex::new(None),
        });
        let (replies_tx, replies) = crossbeam_channel::bounded(REPLY_QUEUE);
        let (notices_tx, notices) = crossbeam_channel::bounded(NOTICE_QUEUE);
        let worker_queue = limits.max_connections;
        let kernel = control.kernel();
        let feed = RingFeed::new(
            kernel.subscribe(ring_feed::delta_kinds()),
            kernel.ring_doorbells(),
        )?;
        poll.registry().register(
            &mut mio::unix::SourceFd(&feed.raw_fd()),
            RING,
            Interest::READABLE,
        )?;
        let direct = Arc::new(super::direct::DirectStreams::new(feed.bell()?));
        kernel.delta_tap().set(Some(direct.clone()));
        let reactor = Reactor {
            poll,
            listener: Some(listener),
            bound,
            key: api_key,
            limits,
            control,
            state: state.clone(),
            feed,
            direct,
            wake: Arc::new(Wake {
                notices: notices_tx,
                waker: waker.clone(),
            }),
            replies_tx,
            replies,
            notices,
            admit: Worker::start("hearth-admit", worker_queue)?,
            control_worker: Worker::start("hearth-control", worker_queue)?,
            conns: Default::default(),
            follows: Default::default(),
            held: Vec::new(),
            dirty: Default::default(),
            next_token: super::reactor::FIRST_CONNECTION,
        };
        let thread = std::thread::Builder::new()
            .name("hearth-socket".into())
            .spawn(move || reactor.run())?;
        Ok(Self {
            path: path.to_path_buf(),
            state,
            waker,
            reactor: Some(thread),
        })
    }

    /// Where the socket listens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting connections and requests, and removes the socket file (if it is still
    /// ours). Open connections keep being served.
    pub fn stop_accepting(&self) {
        self.state.accepting.store(false, Ordering::Relaxed);
        let _ = self.waker.wake();
    }

    /// Serves until every connection waiting for a terminal line has it written, or `grace`
    /// passed, then closes them all.
    pub fn finish(mut self, grace: Duration) {
        self.close(grace);
    }

    fn close(&mut self, grace: Duration) {
        self.state.accepting.store(false, Ordering::Relaxed);
        *self.state.drain_until.lock() = Some(Instant::now() + grace);
        let _ = self.waker.wake();
        if let Some(reactor) = self.reactor.take() {
            let _ = reactor.join();
        }
    }
}

/// Terminal replies of socket requests not yet taken by the reactor, which drains them on every
/// wake. Every request in flight has one; the kernel holds far fewer inputs than this (its
/// edges and ready queue are bounded), and a reply that still does not fit is journaled and
/// logged by the kernel rather than waited for.
const REPLY_QUEUE: usize = 4096;
/// `accepted` notices and control answers not yet taken by the reactor; one per request in
/// flight at most. An `accepted` that does not fit is skipped (the terminal line still comes).
const NOTICE_QUEUE: usize = 4096;

impl Drop for SocketServer {
    fn drop(&mut self) {
        if self.reactor.is_some() {
            self.close(Duration::ZERO);
        }
    }
}
