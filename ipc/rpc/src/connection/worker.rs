//! The connection's worker threads: read while holding the reader, serve what was read, park
//! otherwise; and the handling of one frame, shared with callers that read for themselves.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::lead::Reader;
use super::{Incoming, Peer, lock_ok};
use crate::cancel::CancelToken;
use crate::error::FrameError;
use crate::error_code::{ErrorKind, ErrorObject, HandlerError};
use crate::message::{Message, Notification, Request, Response};
use crate::methods;
use crate::stats::Counters;

/// Starts one more thread if the bound allows: at most one reader plus one per served request.
///
/// The thread count is relaxed: it only sizes the pool; the `lead` lock orders every decision
/// about who reads.
pub(super) fn spawn(peer: &Peer) {
    let shared = &peer.shared;
    let limit = shared.config.max_in_flight + 1;
    if shared.threads.fetch_add(1, Ordering::Relaxed) >= limit {
        // Every thread is busy serving; each looks at the reader again when it is done.
        shared.threads.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    let worker = peer.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("rpc-{}", shared.config.name))
        .spawn(move || run(&worker));
    if let Err(e) = spawned {
        shared.threads.fetch_sub(1, Ordering::Relaxed);
        // Not fatal: the current threads read again once they finish what they serve.
        tracing::warn!(connection = %shared.config.name, error = %e, "could not start an rpc thread");
    }
}

/// What a reading worker stopped for.
enum Stop {
    /// A request, to serve.
    Request(Request),
    /// It routed an answer and nothing more is buffered or awaited: the reader goes back so
    /// the next caller reads its own answer.
    Yield,
    /// End of stream or a read error.
    Ended,
}

/// A worker: serves queued requests, reads while it holds the reader, parks otherwise.
fn run(peer: &Peer) {
    let shared = &peer.shared;
    let mut lead = lock_ok(&shared.lead);
    // Just started or just served: take a free reader at once (it was likely ours).
    let mut fresh = true;
    loop {
        if let Some(request) = lead.queue.pop_front() {
            drop(lead);
            serve(peer, request);
            lead = lock_ok(&shared.lead);
            fresh = true;
            continue;
        }
        if lead.ended {
            shared.threads.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        if lead.reader.is_some() && (fresh || lead.may_take()) {
            let Some(mut reader) = lead.reader.take() else {
                continue;
            };
            drop(lead);
            let stop = read_until_request(peer, &mut reader);
            lead = lock_ok(&shared.lead);
            match stop {
                Stop::Ended => {
                    peer.end_of_stream(lead);
                    shared.threads.fetch_sub(1, Ordering::Relaxed);
                    return;
                }
                Stop::Request(request) => {
                    // Lazy hand-off: nobody is woken; a quick request is served before
                    // anyone else looks, and this thread takes the reader straight back.
                    let attend = lead.release(reader, false);
                    drop(lead);
                    peer.attend(attend);
                    serve(peer, request);
                    lead = lock_ok(&shared.lead);
                    fresh = true;
                }
                Stop::Yield => {
                    let attend = lead.release(reader, true);
                    drop(lead);
                    peer.attend(attend);
                    lead = lock_ok(&shared.lead);
                    fresh = false;
                }
            }
            continue;
        }
        fresh = false;
        match lead.park_for() {
            Some(timeout) => {
                lead.timed += 1;
                lead = shared
                    .followers
                    .wait_timeout(lead, timeout)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                lead.timed -= 1;
                lead.woke();
            }
            None => {
                lead.deep += 1;
                lead = shared
                    .followers
                    .wait(lead)
                    .unwrap_or_else(|p| p.into_inner());
                lead.deep -= 1;
                lead.woke();
            }
        }
    }
}

/// Reads until something needs serving, or until the reader is better off with the next
/// caller.
fn read_until_request(peer: &Peer, reader: &mut Reader) -> Stop {
    loop {
        match next(peer, reader) {
            Next::Frame(Some(request)) => return Stop::Request(request),
            Next::Frame(None) => {}
            Next::Answered => {
                if !reader.holds_frame() && !lock_ok(&peer.shared.lead).want() {
                    return Stop::Yield;
                }
            }
            Next::Ended | Next::TimedOut => return Stop::Ended,
        }
    }
}

/// One step of reading, for a worker or a caller.
pub(super) enum Next {
    /// A frame handled; `Some` if it is an admitted request to serve.
    Frame(Option<Request>),
    /// A response routed to its caller.
    Answered,
    /// The reader's deadline passed (only a caller sets one).
    TimedOut,
    /// End of stream or a read error: the connection is over.
    Ended,
}

/// Reads and handles one frame: answers go to their callers, `$/cancel` to its request,
/// notifications to the service (inline, in arrival order: a plugin's log lines must not be
/// reordered, and the pipe's backpressure bounds a flood), bad frames are answered.
pub(super) fn next(peer: &Peer, reader: &mut Reader) -> Next {
    let shared = &peer.shared;
    let frame = match reader.next_frame() {
        Ok(Some(frame)) => frame,
        Ok(None) => return Next::Ended,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Next::TimedOut,
        Err(e) => {
            tracing::warn!(connection = %shared.config.name, error = %e, "read failed; closing");
            return Next::Ended;
        }
    };
    Counters::bump(&shared.counters.frames_in);
    match frame.and_then(Message::decode) {
        Err(e) => reject_frame(peer, &e),
        Ok(Message::Response(response)) => {
            route(peer, response);
            return Next::Answered;
        }
        Ok(Message::Notification(note)) if note.method == methods::CANCEL => cancel(peer, &note),
        Ok(Message::Notification(note)) => deliver(peer, note),
        Ok(Message::Request(request)) => {
            if admit(peer, &request) {
                return Next::Frame(Some(request));
            }
        }
    }
    Next::Frame(None)
}

fn reject_frame(peer: &Peer, error: &FrameError) {
    let counters = &peer.shared.counters;
    match error {
        FrameError::TooLarge { .. } => Counters::bump(&counters.oversize_frames),
        _ => Counters::bump(&counters.bad_frames),
    }
    tracing::warn!(connection = %peer.name(), %error, "bad frame skipped");
    peer.respond(error.request_id(), Err(error.to_object()));
}

fn route(peer: &Peer, response: Response) {
    let shared = &peer.shared;
    let Some(id) = response.id else {
        Counters::bump(&shared.counters.peer_errors);
        if let Err(e) = &response.outcome {
            tracing::warn!(connection = %shared.config.name, code = e.code, message = %e.message,
                "the peer rejected one of our frames");
        }
        return;
    };
    match lock_ok(&shared.pending).remove(&id) {
        Some(slot) => slot.fill(super::slot::Answer::Reply(response.outcome)),
        None => {
            Counters::bump(&shared.counters.unknown_responses);
            tracing::debug!(connection = %shared.config.name, id, "response for no pending call dropped");
        }
    }
}

fn cancel(peer: &Peer, note: &Notification) {
    let id = note.params.get("id").and_then(Value::as_u64);
    match id.and_then(|id| lock_ok(&peer.shared.serving).get(&id).cloned()) {
        Some(token) => token.cancel(),
        // Already answered, or never seen: nothing to stop.
        None => tracing::debug!(connection = %peer.name(), ?id, "$/cancel for no running request"),
    }
}

/// Registers a request as being served, or answers it at once (duplicate id, busy).
fn admit(peer: &Peer, request: &Request) -> bool {
    let shared = &peer.shared;
    let refusal = {
        let mut serving = lock_ok(&shared.serving);
        if serving.contains_key(&request.id) {
            Some(HandlerError::new(
                ErrorKind::InvalidRequest,
                format!("request id {} is already being served", request.id),
            ))
        } else if serving.len() >= shared.config.max_in_flight {
            Some(
                HandlerError::new(
                    ErrorKind::Busy,
                    format!(
                        "{} refused: {} requests already in flight; retry later",
                        request.method, shared.config.max_in_flight
                    ),
                )
                .with_data(serde_json::json!({"limit": shared.config.max_in_flight})),
            )
        } else {
            serving.insert(request.id, CancelToken::new());
            None
        }
    };
    match refusal {
        None => true,
        Some(error) => {
            if error.kind == ErrorKind::Busy {
                Counters::bump(&shared.counters.busy_rejections);
            }
            peer.respond(Some(request.id), Err(error.into()));
            false
        }
    }
}

pub(super) fn serve(peer: &Peer, request: Request) {
    let shared = &peer.shared;
    let id = request.id;
    let cancel = lock_ok(&shared.serving)
        .get(&id)
        .cloned()
        .unwrap_or_default();
    let method = request.method.clone();
    let incoming = Incoming {
        id,
        method: request.method,
        params: request.params,
        cancel,
        peer: peer.clone(),
    };
    let outcome = match catch_unwind(AssertUnwindSafe(|| shared.service.call(incoming))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(ErrorObject::from(error)),
        Err(panic) => {
            Counters::bump(&shared.counters.panics);
            let message = format!(
                "handler panicked while handling {method}: {}",
                panic_message(&*panic)
            );
            tracing::error!(connection = %shared.config.name, "{message}");
            Err(HandlerError::new(ErrorKind::Internal, message).into())
        }
    };
    // Answer before leaving the in-flight set: `Peer::in_flight() == 0` then means every
    // answer is written (the SDK waits for that before its process exits).
    peer.respond(Some(id), outcome);
    lock_ok(&shared.serving).remove(&id);
}

fn deliver(peer: &Peer, note: Notification) {
    let shared = &peer.shared;
    let method = note.method.clone();
    let delivered = catch_unwind(AssertUnwindSafe(|| {
        shared.service.notify(peer, &note.method, note.params)
    }));
    if let Err(panic) = delivered {
        Counters::bump(&shared.counters.panics);
        tracing::error!(connection = %shared.config.name,
            "handler panicked while handling notification {method}: {}", panic_message(&*panic));
    }
}

/// The text of a panic payload: the workspace's one wording, re-exported for plugins.
pub use hearth_engine::panic_message;
