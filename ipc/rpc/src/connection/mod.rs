//! A blocking JSON-RPC peer over one (reader, writer) pair: outgoing calls correlated by id,
//! incoming requests served with panic isolation under an in-flight bound.
//!
//! Reading follows the leader/follower pattern: one thread at a time holds the reader, and the
//! hand-off between the connection's workers and the callers waiting for answers avoids thread
//! wake-ups (see `lead`): a caller reads its own answer when nobody else reads, and a worker
//! that reads a request serves it itself and hands the reader on lazily. So an incoming request
//! costs no thread hand-off on its way to the handler, and a handler may make calls back over
//! the same connection while it or another thread reads their answers.

mod call;
mod lead;
mod slot;
mod source;
mod worker;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

pub use call::PendingCall;
pub use worker::panic_message;

use crate::cancel::CancelToken;
use crate::error::RpcError;
use crate::error_code::{ErrorObject, HandlerError};
use crate::frame::{DEFAULT_MAX_FRAME, FrameReader, FrameWriter};
use crate::id::Id;
use crate::message::{Message, Notification, Response};
use crate::methods;
use crate::stats::{Counters, Stats};
use lead::{Attend, Lead};
use source::Timed;

/// How a connection behaves.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    /// Longest frame read or written, newline excluded.
    pub max_frame: usize,
    /// Incoming requests served at once; one more is answered [`Busy`](crate::ErrorKind::Busy).
    pub max_in_flight: usize,
    /// Names the connection's threads and log lines (the plugin's name).
    pub name: String,
    /// How long a read with nothing to read yet keeps looking before it sleeps (0: never
    /// spins). A round trip over a pipe is mostly the two sides being put to sleep and woken;
    /// a reader still looking when the answer lands pays neither. The cost is at most this
    /// much CPU after each frame read.
    pub read_spin: Duration,
}

impl Default for ConnectionConfig {
    fn default() -> ConnectionConfig {
        ConnectionConfig {
            max_frame: DEFAULT_MAX_FRAME,
            max_in_flight: 32,
            name: "rpc".to_owned(),
            read_spin: default_read_spin(),
        }
    }
}

/// [`ConnectionConfig::read_spin`] on a machine with more than one core: longer than a quick
/// handler's service time and the pipe's own latency together, so an answer that comes at once
/// finds its reader awake.
pub const DEFAULT_READ_SPIN: Duration = Duration::from_micros(50);

/// [`ConnectionConfig::read_spin`]'s default: [`DEFAULT_READ_SPIN`], or none on a single core,
/// where the peer cannot run while this side spins and each spin only delays the answer.
pub fn default_read_spin() -> Duration {
    match std::thread::available_parallelism() {
        Ok(n) if n.get() > 1 => DEFAULT_READ_SPIN,
        _ => Duration::ZERO,
    }
}

/// One incoming request as a [`Service`] sees it.
pub struct Incoming {
    /// The peer's id for it.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// Its arguments (`Null` when absent).
    pub params: Value,
    /// Set when the peer sends `$/cancel` for this id.
    pub cancel: CancelToken,
    /// For calls back to the peer while serving this one.
    pub peer: Peer,
}

/// What serves a connection's incoming messages. Called on the connection's threads, several at
/// once; a panic is caught and answered as an internal error.
pub trait Service: Send + Sync + 'static {
    /// Answers one request.
    fn call(&self, request: Incoming) -> Result<Value, HandlerError>;

    /// Told once when the connection closes (end of stream, a read error, [`Peer::close`]).
    fn closed(&self) {}

    /// Takes one notification (`$/cancel` never reaches it). Ignores it by default.
    ///
    /// Notifications are delivered on the reading thread, in the order they arrived, so this
    /// must return quickly and must not wait on calls over the same connection.
    fn notify(&self, peer: &Peer, method: &str, params: Value) {
        let _ = (peer, method, params);
    }
}

/// A shared service serves as itself, so its owner can keep a handle on it.
impl<S: Service> Service for Arc<S> {
    fn call(&self, request: Incoming) -> Result<Value, HandlerError> {
        (**self).call(request)
    }

    fn closed(&self) {
        (**self).closed();
    }

    fn notify(&self, peer: &Peer, method: &str, params: Value) {
        (**self).notify(peer, method, params);
    }
}

/// A handle on a running connection; cheap to clone, usable from any thread.
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
}

struct Shared {
    config: ConnectionConfig,
    service: Arc<dyn Service>,
    /// Who reads next, and what the workers are to serve.
    lead: Mutex<Lead>,
    /// The workers park here.
    followers: Condvar,
    writer: Mutex<FrameWriter<Box<dyn Write + Send>>>,
    /// Our calls waiting for an answer.
    pending: Mutex<HashMap<Id, Arc<slot::Slot>>>,
    /// The peer's requests being served, by id, with their cancel tokens.
    serving: Mutex<HashMap<Id, CancelToken>>,
    next_id: AtomicU64,
    threads: AtomicUsize,
    closed: AtomicBool,
    closed_signal: (Mutex<bool>, Condvar),
    counters: Counters,
}

/// Starts a connection over `reader` and `writer`, served by `service`.
///
/// `reader` is read directly and polled on its descriptor (a caller reading for its own answer
/// polls up to its deadline), so it must not buffer in user space: a pipe, a socket, a child's
/// stdout or a duplicate of stdin's descriptor, not `std::io::Stdin`.
///
/// Writes block while the peer does not drain its end of the pipe (a pipe holds 64 KiB), so a
/// peer that stops reading stalls calls to it; the kernel bounds that by stopping the process.
/// A service that keeps a [`Peer`] of its own connection makes a reference cycle that lives as
/// long as the process; each [`Incoming`] carries the peer instead.
pub fn connect(
    reader: impl Read + AsFd + Send + 'static,
    writer: impl Write + Send + 'static,
    service: impl Service,
    config: ConnectionConfig,
) -> Peer {
    let shared = Arc::new(Shared {
        lead: Mutex::new(Lead::new(FrameReader::new(
            Timed::new(Box::new(reader), config.read_spin),
            config.max_frame,
        ))),
        followers: Condvar::new(),
        writer: Mutex::new(FrameWriter::new(
            Box::new(writer) as Box<dyn Write + Send>,
            config.max_frame,
        )),
        config,
        service: Arc::new(service),
        pending: Mutex::new(HashMap::new()),
        serving: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(1),
        threads: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        closed_signal: (Mutex::new(false), Condvar::new()),
        counters: Counters::default(),
    });
    let peer = Peer { shared };
    worker::spawn(&peer);
    peer
}

impl Peer {
    /// Whether `other` is a handle to this same connection.
    pub fn same(&self, other: &Peer) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Sends a request and returns the handle to wait for its answer.
    pub fn start_call(&self, method: &str, params: Value) -> Result<PendingCall, RpcError> {
        call::start(self, method, params)
    }

    /// Calls `method` and waits up to `timeout` for the result; on timeout the call is abandoned
    /// and `$/cancel` sent, so a late answer is dropped.
    pub fn call(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RpcError> {
        self.start_call(method, params)?.wait(timeout)
    }

    /// Calls `method` with serialisable params and decodes the result into `T`.
    pub fn call_typed<P: serde::Serialize, T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        timeout: Duration,
    ) -> Result<T, RpcError> {
        let codec = |source| RpcError::Codec {
            method: method.to_owned(),
            source,
        };
        let params = serde_json::to_value(params).map_err(codec)?;
        let result = self.call(method, params, timeout)?;
        serde_json::from_value(result).map_err(codec)
    }

    /// Sends a notification (no answer).
    pub fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.send(&Message::Notification(Notification {
            method: method.to_owned(),
            params,
        }))
    }

    /// Tells the peer to stop serving request `id` of ours.
    pub fn cancel(&self, id: Id) -> Result<(), RpcError> {
        self.notify(methods::CANCEL, serde_json::json!({ "id": id }))
    }

    /// How many of the peer's requests are being served right now.
    pub fn in_flight(&self) -> usize {
        lock_ok(&self.shared.serving).len()
    }

    /// The connection's counters.
    pub fn stats(&self) -> Stats {
        self.shared.counters.snapshot()
    }

    /// Whether the connection has closed (end of stream, a read error, or [`Peer::close`]).
    pub fn is_closed(&self) -> bool {
        // SYNC: pairs with the swap in `close`.
        self.shared.closed.load(Ordering::Acquire)
    }

    /// Waits until the connection closes; `false` if `timeout` passed first.
    pub fn wait_closed(&self, timeout: Duration) -> bool {
        let (lock, cvar) = &self.shared.closed_signal;
        let guard = lock_ok(lock);
        let (guard, _) = cvar
            .wait_timeout_while(guard, timeout, |closed| !*closed)
            .unwrap_or_else(|p| p.into_inner());
        *guard
    }

    /// Marks the connection closed and fails every pending call with [`RpcError::Closed`]. The
    /// reading thread ends when its stream does (closing the peer's end, or the peer exiting).
    pub fn close(&self) {
        // SYNC: Release pairs with the Acquire in `is_closed`: a caller that sees the flag also
        // sees the pending map already drained below or about to be.
        if self.shared.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let waiting: Vec<_> = lock_ok(&self.shared.pending).drain().collect();
        for (_, slot) in waiting {
            slot.fill(slot::Answer::Closed);
        }
        let (lock, cvar) = &self.shared.closed_signal;
        *lock_ok(lock) = true;
        cvar.notify_all();
        let service = &self.shared.service;
        if catch_unwind(AssertUnwindSafe(|| service.closed())).is_err() {
            tracing::error!(connection = %self.name(), "the service panicked on close");
        }
    }

    /// The connection's name from its config.
    pub fn name(&self) -> &str {
        &self.shared.config.name
    }

    /// Does what keeps the reader attended, with the `lead` lock released.
    fn attend(&self, attend: Attend) {
        match attend {
            Attend::Nothing => {}
            Attend::Nudge(slot) => slot.nudge(),
            Attend::Notify => {
                self.shared.followers.notify_one();
            }
            Attend::Spawn => worker::spawn(self),
        }
    }

    /// The stream ended: nobody reads again, everyone waiting learns it, the calls fail.
    fn end_of_stream(&self, mut lead: MutexGuard<'_, Lead>) {
        let wanting = lead.end();
        drop(lead);
        self.shared.followers.notify_all();
        self.close();
        for slot in wanting {
            slot.nudge();
        }
    }

    fn send(&self, message: &Message) -> Result<(), RpcError> {
        lock_ok(&self.shared.writer).write(message)
    }

    fn respond(&self, id: Option<Id>, outcome: Result<Value, ErrorObject>) {
        let method = match &outcome {
            Ok(_) => "result",
            Err(_) => "error",
        };
        let sent = self.send(&Message::Response(Response { id, outcome }));
        match sent {
            Ok(()) => {}
            Err(RpcError::OutgoingTooLarge { len, limit, .. }) => {
                // The peer must still get exactly one answer for the id.
                let error = ErrorObject {
                    code: crate::ErrorKind::FrameTooLarge.code(),
                    message: format!(
                        "the {method} of {len} bytes exceeds the frame limit of {limit} bytes"
                    ),
                    data: Some(serde_json::json!({"len": len, "limit": limit})),
                };
                if let Err(e) = self.send(&Message::Response(Response {
                    id,
                    outcome: Err(error),
                })) {
                    tracing::warn!(connection = %self.name(), error = %e, "could not answer");
                }
            }
            Err(e) => tracing::warn!(connection = %self.name(), error = %e, "could not answer"),
        }
    }
}

/// A poisoned lock here only means a panic elsewhere while it was held; the maps and the
/// writer stay consistent (every update is one insert/remove or one whole frame), so go on.
fn lock_ok<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
