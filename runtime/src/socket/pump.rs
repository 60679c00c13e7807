//! The one reader of the event ring for every socket client: it parks on the ring's futex,
//! forwards the deltas of requests some connection follows to the reactor, and wakes it after
//! every batch it read. Its position is published so the reactor holds a terminal line until
//! every delta published before it has been forwarded (the order a client sees is the order the
//! kernel produced); since each advance is followed by a wake, a held line is never forgotten.
//!
//! Deltas are filtered on the ring slot's stream tag ([`stream_tag`] of the request id), one
//! load per slot, before any byte is copied: only the deltas of followed requests are parsed.
//! Tags may collide, so the request id of a delta that passed is still checked.

use super::protocol::Answer;
use crossbeam_channel::Sender;
use hearth_ipc::{EventKind, KindMask, ReadResult, Reader};
use hearth_kernel::events::stream_tag;
use mio::Waker;
use parking_lot::RwLock;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The kinds a client streams.
pub(super) fn delta_kinds() -> KindMask {
    KindMask::of(&[EventKind::ContentDelta, EventKind::ReasoningDelta])
}

/// What the pump hands the reactor.
#[derive(Debug)]
pub(super) enum Forward {
    Delta {
        request_id: String,
        answer: Answer,
    },
    /// The ring overran the pump: this many events (of any request) were lost.
    Lagged(u64),
}

/// State shared between the pump and the reactor.
#[derive(Debug, Default)]
pub(super) struct PumpShared {
    /// Request ids some connection streams, and their stream tags.
    followed: RwLock<Followed>,
    /// Ring sequence up to which everything has been forwarded.
    position: AtomicU64,
    stop: AtomicBool,
    /// The pump has ended (the ring closed, the reactor is gone): nothing more will come, so
    /// no terminal line may wait for it.
    gone: AtomicBool,
}

/// The followed requests: their ids, and how many of them have each stream tag.
#[derive(Debug, Default)]
struct Followed {
    ids: HashSet<String>,
    tags: HashMap<u64, usize>,
}

impl PumpShared {
    /// Forwards the deltas of `request_id` from now on.
    pub(super) fn follow(&self, request_id: &str) {
        let mut followed = self.followed.write();
        if followed.ids.insert(request_id.to_string()) {
            *followed.tags.entry(stream_tag(request_id)).or_default() += 1;
        }
    }

    /// Stops forwarding the deltas of `request_id`.
    pub(super) fn unfollow(&self, request_id: &str) {
        let mut followed = self.followed.write();
        if followed.ids.remove(request_id) {
            let tag = stream_tag(request_id);
            if let Some(n) = followed.tags.get_mut(&tag) {
                *n -= 1;
                if *n == 0 {
                    followed.tags.remove(&tag);
                }
            }
        }
    }

    fn follows_tag(&self, tag: u64) -> bool {
        self.followed.read().tags.contains_key(&tag)
    }

    fn follows(&self, request_id: &str) -> bool {
        self.followed.read().ids.contains(request_id)
    }

    /// Ring sequence up to which every delta has been handed to the reactor's channel.
    pub(super) fn position(&self) -> u64 {
        // SYNC: pairs with the Release store in `run`: the deltas sent before it are in the
        // channel when this load sees it.
        let position = self.position.load(Ordering::Acquire);
        // SYNC: pairs with the Release store in `run`'s exit path.
        if self.gone.load(Ordering::Acquire) {
            return u64::MAX;
        }
        position
    }

    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How long the pump parks before it looks at its stop flag.
const PARK: Duration = Duration::from_secs(1);

/// Runs the pump until stopped, the ring closes or the reactor is gone.
pub(super) fn run(ring: Reader, shared: &Arc<PumpShared>, tx: &Sender<Forward>, waker: &Waker) {
    let filter = Arc::clone(shared);
    let ring = ring.with_tag_filter(move |tag| filter.follows_tag(tag));
    pump(ring, shared, tx, waker);
    // SYNC: pairs with the Acquire load in `PumpShared::position`.
    shared.gone.store(true, Ordering::Release);
    let _ = waker.wake();
}

fn pump(mut ring: Reader, shared: &PumpShared, tx: &Sender<Forward>, waker: &Waker) {
    let mut buf = Vec::new();
    // Parked readers cost nothing; spinning would cost every idle client's daemon CPU.
    ring.set_spin(Duration::ZERO);
    while !shared.stop.load(Ordering::Relaxed) {
        let before = ring.position();
        // Events the filters skip (other requests' deltas, every non-delta) still advance the
        // position a held terminal line waits for, so they must end the wait at once.
        let mut next = ring.next_or_skipped(&mut buf, PARK);
        loop {
            let forward = match next {
                ReadResult::Event { kind, .. } => delta(kind, &buf, shared),
                ReadResult::Lagged { missed } => Some(Forward::Lagged(missed)),
                ReadResult::Empty => break,
                ReadResult::Closed => return,
            };
            if let Some(forward) = forward
                && tx.send(forward).is_err()
            {
                return;
            }
            next = ring.try_next(&mut buf);
        }
        if ring.position() == before {
            continue;
        }
        // SYNC: pairs with the Acquire load in `PumpShared::position`.
        shared.position.store(ring.position(), Ordering::Release);
        if waker.wake().is_err() {
            return;
        }
    }
}

/// The part of a delta event's envelope the pump reads; everything else is skipped unparsed.
#[derive(Deserialize)]
struct DeltaEnvelope<'a> {
    #[serde(borrow)]
    payload: DeltaPayload<'a>,
}

/// A delta's payload, borrowed from the ring slot where no escape forces a copy.
#[derive(Deserialize)]
struct DeltaPayload<'a> {
    #[serde(borrow)]
    request_id: Cow<'a, str>,
    #[serde(default, borrow)]
    content: Cow<'a, str>,
    #[serde(default)]
    reset: bool,
}

/// The client-facing delta of one ring event, when a connection follows its request.
fn delta(kind: EventKind, envelope: &[u8], shared: &PumpShared) -> Option<Forward> {
    // The ring has already skipped every delta whose tag no followed request has.
    let DeltaEnvelope { payload } = serde_json::from_slice(envelope).ok()?;
    if !shared.follows(&payload.request_id) {
        return None;
    }
    Some(Forward::Delta {
        request_id: payload.request_id.into_owned(),
        answer: Answer::Delta {
            content: payload.content.into_owned(),
            reasoning: kind == EventKind::ReasoningDelta,
            reset: payload.reset,
        },
    })
}
