//! Requests in flight on one connection, whatever carries them: ids, the wait for an answer
//! (watching the caller's stop and deadline), progress routed to the request it belongs to, and
//! the server's own messages.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

use hearth_rpc::{ErrorObject, FrameError, Message, Notification, Request, Response};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::McpError;
use crate::protocol::methods;

/// Where the server's notifications go (list changes, log lines): `(method, params)`.
pub type NotificationSink = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// How often a waiting request looks at its caller's stop.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// What a request hears while it waits.
pub(crate) enum Reply {
    Progress(Value),
    Done(Result<Value, ErrorObject>),
}

/// What the caller of one request watches.
pub struct Watch<'a> {
    /// The caller stopped: stop waiting and tell the server.
    pub cancelled: &'a (dyn Fn() -> bool + Sync),
    /// Nobody waits after this.
    pub deadline: Instant,
    /// Each `notifications/progress` params for this request.
    pub progress: Option<&'a (dyn Fn(&Value) + Sync)>,
}

impl Watch<'_> {
    /// A watch with only a time limit.
    pub fn within(limit: Duration) -> Watch<'static> {
        Watch {
            cancelled: &|| false,
            deadline: Instant::now() + limit,
            progress: None,
        }
    }
}

/// The requests of one connection.
pub(crate) struct Calls {
    pub(crate) server: String,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Sender<Reply>>>,
    closed: AtomicBool,
    bad_frames: AtomicU64,
    sink: NotificationSink,
}

/// How a waited request ended.
pub(crate) enum Ended {
    Answer(Value),
    /// The caller stopped or the deadline passed; the server must be told.
    Abandoned(McpError),
    Failed(McpError),
}

impl Calls {
    pub(crate) fn new(server: &str, sink: NotificationSink) -> Arc<Calls> {
        Arc::new(Calls {
            server: server.to_owned(),
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            bad_frames: AtomicU64::new(0),
            sink,
        })
    }

    /// A new id and the channel its answer comes on.
    pub(crate) fn open(&self, method: &str) -> Result<(u64, Receiver<Reply>), McpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = channel();
        self.pending.lock().insert(id, tx);
        // `close` sets the flag before draining: an entry inserted after the drain is caught here.
        // SYNC: pairs with the store in `close`.
        if self.closed.load(Ordering::Acquire) {
            self.pending.lock().remove(&id);
            return Err(self.closed_error(method));
        }
        Ok((id, rx))
    }

    /// Forgets request `id` (its answer, if it comes, is dropped).
    pub(crate) fn forget(&self, id: u64) {
        self.pending.lock().remove(&id);
    }

    /// Waits for request `id` under `watch`.
    pub(crate) fn wait(&self, id: u64, rx: &Receiver<Reply>, method: &str, watch: &Watch) -> Ended {
        let started = Instant::now();
        loop {
            if (watch.cancelled)() {
                self.forget(id);
                return Ended::Abandoned(McpError::Cancelled {
                    server: self.server.clone(),
                    method: method.to_owned(),
                });
            }
            let now = Instant::now();
            if now >= watch.deadline {
                self.forget(id);
                return Ended::Abandoned(McpError::TimedOut {
                    server: self.server.clone(),
                    method: method.to_owned(),
                    after: now - started,
                });
            }
            let slice = CANCEL_POLL.min(watch.deadline - now);
            match rx.recv_timeout(slice) {
                Ok(Reply::Progress(p)) => {
                    if let Some(f) = watch.progress {
                        f(&p);
                    }
                }
                Ok(Reply::Done(Ok(value))) => return Ended::Answer(value),
                Ok(Reply::Done(Err(e))) => {
                    return Ended::Failed(McpError::Remote {
                        server: self.server.clone(),
                        method: method.to_owned(),
                        code: e.code,
                        message: e.message,
                    });
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Ended::Failed(self.closed_error(method));
                }
            }
        }
    }

    /// Fails request `id` at once (its transport could not deliver it).
    pub(crate) fn fail(&self, id: u64, error: ErrorObject) {
        if let Some(tx) = self.pending.lock().remove(&id) {
            let _ = tx.send(Reply::Done(Err(error)));
        }
    }

    /// Takes one frame from the server. A request of the server's comes back to be answered.
    pub(crate) fn deliver(&self, frame: Result<Message, FrameError>) -> Option<Message> {
        match frame {
            Err(e) => {
                let n = self.bad_frames.fetch_add(1, Ordering::Relaxed) + 1;
                tracing::warn!(server = %self.server, bad_frames = n, "skipped a bad frame: {e}");
                None
            }
            Ok(Message::Response(Response {
                id: Some(id),
                outcome,
            })) => {
                if let Some(tx) = self.pending.lock().remove(&id) {
                    let _ = tx.send(Reply::Done(outcome));
                }
                None
            }
            Ok(Message::Response(Response { id: None, outcome })) => {
                if let Err(e) = outcome {
                    tracing::warn!(server = %self.server, "the server rejected a frame: {}", e.message);
                }
                None
            }
            Ok(Message::Notification(n)) => {
                self.notification(n);
                None
            }
            Ok(Message::Request(r)) => Some(self.answer(r)),
        }
    }

    fn notification(&self, n: Notification) {
        match n.method.as_str() {
            methods::PROGRESS => {
                let Some(id) = n.params.get("progressToken").and_then(Value::as_u64) else {
                    return;
                };
                if let Some(tx) = self.pending.lock().get(&id) {
                    let _ = tx.send(Reply::Progress(n.params));
                }
            }
            methods::MESSAGE => {
                let level = n.params["level"].as_str().unwrap_or("info");
                tracing::info!(server = %self.server, level, "{}", n.params["data"]);
            }
            _ => (self.sink)(&n.method, &n.params),
        }
    }

    /// Hearth declares no client capability, so the server may only ping it.
    fn answer(&self, r: Request) -> Message {
        let outcome = if r.method == methods::PING {
            Ok(json!({}))
        } else {
            Err(ErrorObject {
                code: -32601,
                message: format!("hearth does not serve {}", r.method),
                data: None,
            })
        };
        Message::Response(Response {
            id: Some(r.id),
            outcome,
        })
    }

    /// Every waiting request fails with `Closed`; new ones are refused.
    pub(crate) fn close(&self) {
        // SYNC: pairs with the load in `open`.
        self.closed.store(true, Ordering::Release);
        self.pending.lock().clear();
    }

    pub(crate) fn is_closed(&self) -> bool {
        // SYNC: pairs with the store in `close`.
        self.closed.load(Ordering::Acquire)
    }

    /// Frames that could not be read as messages so far.
    pub(crate) fn bad_frames(&self) -> u64 {
        self.bad_frames.load(Ordering::Relaxed)
    }

    pub(crate) fn closed_error(&self, method: &str) -> McpError {
        McpError::Closed {
            server: self.server.clone(),
            method: method.to_owned(),
        }
    }
}
