//! One outgoing call: its pending entry, the wait for its answer, and abandoning it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::lead::Reader;
use super::slot::{Answer, SPIN, Slot, Woken};
use super::worker::{Next, next};
use super::{Peer, lock_ok};
use crate::error::RpcError;
use crate::id::Id;
use crate::message::{Message, Request};
use crate::stats::Counters;

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
    /// When nobody reads the connection the caller reads it itself until its answer comes (see
    /// `lead`); otherwise it waits to be handed the reader or its answer, the connection's only
    /// waiting caller spinning briefly first (see `slot`).
    pub fn wait(self, timeout: Duration) -> Result<Value, RpcError> {
        let deadline = Instant::now() + timeout;
        let answer = loop {
            if let Some(answer) = self.slot.try_take() {
                break Some(answer);
            }
            match self.read_or_wait(deadline) {
                Some(Woken::Answer(answer)) => break Some(answer),
                Some(Woken::TimedOut) => break self.slot.try_take(),
                Some(Woken::Nudged) | None => {}
            }
        };
        match answer {
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

    /// Reads for this call if the reader is free, else waits for the answer or the reader;
    /// `None` when it read and should look at its slot again.
    fn read_or_wait(&self, deadline: Instant) -> Option<Woken> {
        let peer = &self.peer;
        let mut lead = lock_ok(&peer.shared.lead);
        if lead.ended {
            // The close fills the slot (it may be just about to).
            drop(lead);
            return Some(self.slot.wait(deadline, Duration::ZERO));
        }
        let Some(mut reader) = lead.reader.take() else {
            let alone = !lead.want();
            lead.wanting.push_back(Arc::clone(&self.slot));
            drop(lead);
            let woken = self
                .slot
                .wait(deadline, if alone { SPIN } else { Duration::ZERO });
            if !matches!(woken, Woken::Nudged) {
                self.leave_wanting();
            }
            return Some(woken);
        };
        drop(lead);
        reader.get_mut().deadline = Some((deadline, Arc::clone(&self.slot)));
        let timed_out = self.read_for_answer(&mut reader);
        reader.get_mut().deadline = None;
        let lead = lock_ok(&peer.shared.lead);
        match timed_out {
            None => {
                peer.end_of_stream(lead);
                None
            }
            Some(timed_out) => {
                if !timed_out {
                    Counters::bump(&peer.shared.counters.own_answers);
                }
                let mut lead = lead;
                let attend = lead.release(reader, false);
                drop(lead);
                peer.attend(attend);
                timed_out.then_some(Woken::TimedOut)
            }
        }
    }

    /// Reads until this call's answer is in; `Some(true)` if the deadline passed first, `None`
    /// at the end of the stream.
    fn read_for_answer(&self, reader: &mut Reader) -> Option<bool> {
        let peer = &self.peer;
        while !self.slot.is_filled() {
            match next(peer, reader) {
                Next::Frame(Some(request)) => {
                    let attend = lock_ok(&peer.shared.lead).enqueue(request);
                    peer.attend(attend);
                }
                Next::Frame(None) | Next::Answered => {}
                Next::TimedOut => return Some(true),
                Next::Ended => return None,
            }
        }
        Some(false)
    }

    /// No longer waiting for the reader: off the list, and if the reader was handed to this
    /// caller meanwhile, on to someone else.
    fn leave_wanting(&self) {
        let mut lead = lock_ok(&self.peer.shared.lead);
        lead.wanting.retain(|slot| !Arc::ptr_eq(slot, &self.slot));
        let attend = lead.attend(false);
        drop(lead);
        self.peer.attend(attend);
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
