//! The connection's threads: read while leader, serve what was read, hand the reader on.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::{Incoming, Peer, lock_ok};
use crate::cancel::CancelToken;
use crate::error::FrameError;
use crate::error_code::{ErrorKind, ErrorObject, HandlerError};
use crate::message::{Message, Notification, Request, Response};
use crate::methods;
use crate::stats::Counters;

/// Starts one more thread if the bound allows: at most one reader plus one per served request.
///
/// The thread and idle counts are relaxed: they only size the pool and bound the
/// work, and the reader lock orders every decision taken on them.
pub(super) fn spawn(peer: &Peer) {
    let shared = &peer.shared;
    let limit = shared.config.max_in_flight + 1;
    if shared.threads.fetch_add(1, Ordering::Relaxed) >= limit {
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

fn run(peer: &Peer) {
    let shared = &peer.shared;
    loop {
        shared.idle.fetch_add(1, Ordering::Relaxed);
        let mut guard = lock_ok(&shared.reader);
        shared.idle.fetch_sub(1, Ordering::Relaxed);
        let request = match guard.as_mut() {
            Some(reader) => lead(peer, reader),
            None => None,
        };
        let Some(request) = request else {
            // End of stream: later threads find `None` and leave too.
            *guard = None;
            drop(guard);
            peer.close();
            shared.threads.fetch_sub(1, Ordering::Relaxed);
            return;
        };
        // Someone must read while this thread serves: a handler's own calls back over this
        // connection wait for answers only a reader can deliver.
        if shared.idle.load(Ordering::Relaxed) == 0 {
            spawn(peer);
        }
        drop(guard);
        serve(peer, request);
    }
}

/// Reads until something needs serving; `None` at the end of the stream or on a read error.
fn lead(
    peer: &Peer,
    reader: &mut crate::frame::FrameReader<Box<dyn std::io::Read + Send>>,
) -> Option<Request> {
    let shared = &peer.shared;
    loop {
        let frame = match reader.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(connection = %shared.config.name, error = %e, "read failed; closing");
                return None;
            }
        };
        Counters::bump(&shared.counters.frames_in);
        let message = frame.and_then(Message::decode);
        match message {
            Err(e) => reject_frame(peer, &e),
            Ok(Message::Response(response)) => route(peer, response),
            Ok(Message::Notification(note)) if note.method == methods::CANCEL => {
                cancel(peer, &note)
            }
            // Inline, in arrival order (a plugin's log lines must not be reordered); the
            // pipe's own backpressure bounds a flood.
            Ok(Message::Notification(note)) => deliver(peer, note),
            Ok(Message::Request(request)) => {
                if admit(peer, &request) {
                    return Some(request);
                }
            }
        }
    }
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

fn serve(peer: &Peer, request: Request) {
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
