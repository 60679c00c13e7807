//! One outgoing call: its pending entry, the wait for its answer, and abandoning it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::Value;

use super::slot::{Answer, SPIN, Slot};
use super::{Peer, lock_ok};
use crate::error::RpcError;
use crate::message::{Id, Message, Request};

/// A request on its way; wait for its answer or cancel it. Dropping it abandons the call (the
/// late answer is dropped and counted as an unknown response).
pub struct PendingCall {
    peer: Peer,
    id: Id,
    method: String,
    slot: Arc<Slot>,
}

pub(super) fn start(peer: &Peer, method: &str, params: Value) -> Result<PendingCall, RpcError> {
    let closed = || RpcError::Closed {
        method: method.to_owned(),
    };
    if peer.is_closed() {
        return Err(closed());
    }
    let shared = &peer.shared;
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let slot = Arc::new(Slot::default());
    lock_ok(&shared.pending).insert(id, Arc::clone(&slot));
    // `close` drains the map after setting the flag: re-checking here means an entry inserted
    // after the drain is not left waiting forever.
    if peer.is_closed() {
        lock_ok(&shared.pending).remove(&id);
        return Err(closed());
    }
    let sent = peer.send(&Message::Request(Request {
        id,
        method: method.to_owned(),
        params,
    }));
    if let Err(e) = sent {
        lock_ok(&shared.pending).remove(&id);
        return Err(e);
    }
    Ok(PendingCall {
        peer: peer.clone(),
        id,
        method: method.to_owned(),
        slot,
    })
}

impl PendingCall {
    /// The request's id.
    pub fn id(&self) -> Id {
        self.id
    }

    /// Waits up to `timeout` for the answer. On timeout the call is abandoned: its entry removed
    /// and `$/cancel` sent, so the peer can stop working on it.
    ///
    /// The connection's only waiting caller spins briefly before it sleeps (see `slot`), so a
    /// quick answer costs no thread wake; with several calls waiting, each sleeps at once.
    pub fn wait(self, timeout: Duration) -> Result<Value, RpcError> {
        let alone = lock_ok(&self.peer.shared.pending).len() == 1;
        let spin = if alone { SPIN } else { Duration::ZERO };
        match self.slot.wait(timeout, spin) {
            Some(Answer::Reply(Ok(value))) => Ok(value),
            Some(Answer::Reply(Err(error))) => Err(RpcError::Remote {
                method: self.method.clone(),
                error: error.into(),
            }),
            None => {
                self.abandon();
                Err(RpcError::TimedOut {
                    method: self.method.clone(),
                    after: timeout,
                })
            }
            Some(Answer::Closed) => Err(RpcError::Closed {
                method: self.method.clone(),
            }),
        }
    }

    /// Abandons the call and tells the peer to stop serving it.
    pub fn cancel(self) -> RpcError {
        self.abandon();
        RpcError::Cancelled {
            method: self.method.clone(),
        }
    }

    fn abandon(&self) {
        lock_ok(&self.peer.shared.pending).remove(&self.id);
        if let Err(e) = self.peer.cancel(self.id) {
            tracing::debug!(connection = %self.peer.name(), error = %e, "could not send $/cancel");
        }
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        lock_ok(&self.peer.shared.pending).remove(&self.id);
    }
}
