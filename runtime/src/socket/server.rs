//! The daemon's Unix socket (mode 0600), served by one `mio` reactor thread (see
//! [`reactor`](super::reactor)) with two worker threads beside it: three threads however many
//! clients are connected. Streamed answers come from the event ring — the same deltas every
//! other reader sees — read on the reactor's thread and routed by request id.

use super::bind::bind_private;
use super::control::Control;
use super::reactor::{LISTENER, RING, Reactor, WAKER, Wake};
use super::ring_feed::{self, RingFeed};
use super::state::ServerState;
use super::worker::Worker;
use crate::config::SocketLimits;
use mio::{Interest, Poll, Waker};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

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
        let state = Arc::new(ServerState::accepting());
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
        self.state.stop_accepting();
        let _ = self.waker.wake();
    }

    /// Serves until every connection waiting for a terminal line has it written, or `grace`
    /// passed, then closes them all.
    pub fn finish(mut self, grace: Duration) {
        self.close(grace);
    }

    fn close(&mut self, grace: Duration) {
        self.state.drain_for(grace);
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
