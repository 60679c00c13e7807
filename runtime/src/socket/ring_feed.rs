//! The socket's reader of the event ring, read on the reactor's own thread: the reactor sleeps
//! in its `poll` with the ring's doorbell (an eventfd the publisher rings while a reader is
//! armed) among its sources, so a delta reaches a client with one thread wake-up — the
//! reactor's — instead of two (a pump thread's, then the reactor's).
//!
//! Deltas are filtered on the ring slot's stream tag ([`stream_tag`] of the request id), one
//! load per slot, before any byte is copied: only the deltas of followed requests are parsed.
//! Tags may collide, so the request id of a delta that passed is still checked. A terminal
//! line is written only after the feed has read past every event published before its reply,
//! so a client sees its answer's deltas, then its end, in the order the kernel produced them.

use super::protocol::Answer;
use hearth_ipc::{Armed, Doorbell, Doorbells, EventKind, KindMask, ReadResult, Reader};
use hearth_kernel::events::stream_tag;
use parking_lot::RwLock;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;

/// The kinds a client streams.
pub(super) fn delta_kinds() -> KindMask {
    KindMask::of(&[EventKind::ContentDelta, EventKind::ReasoningDelta])
}

/// What the feed hands the reactor.
#[derive(Debug)]
pub(super) enum Forward {
    Delta {
        request_id: String,
        answer: Answer,
    },
    /// The ring overran the feed: this many events (of any request) were lost.
    Lagged(u64),
}

/// The followed requests: their ids, and how many of them have each stream tag (shared with
/// the ring reader's tag filter).
#[derive(Debug, Default)]
struct Followed {
    ids: HashSet<String>,
    tags: HashMap<u64, usize>,
}

/// The ring reader, its doorbell and the requests it follows.
pub(super) struct RingFeed {
    reader: Reader,
    doorbell: Doorbell,
    /// The publisher's list the doorbell is in, and its id there (removed on drop).
    bells: Option<(Doorbells, u64)>,
    followed: Arc<RwLock<Followed>>,
    buf: Vec<u8>,
    /// The ring closed: nothing more will come, so no terminal line may wait for it.
    closed: bool,
}

impl RingFeed {
    /// A feed over `reader` (its kinds: [`delta_kinds`]), woken through a doorbell added to
    /// `bells` (without one it is read whenever the reactor wakes for anything else).
    pub(super) fn new(reader: Reader, bells: Option<Doorbells>) -> std::io::Result<RingFeed> {
        let followed: Arc<RwLock<Followed>> = Arc::default();
        let filter = Arc::clone(&followed);
        let reader = reader.with_tag_filter(move |tag| filter.read().tags.contains_key(&tag));
        let doorbell = Doorbell::new().map_err(std::io::Error::other)?;
        let bells = match bells {
            Some(bells) => {
                let copy = doorbell.try_clone().map_err(std::io::Error::other)?;
                let id = bells.add(copy);
                Some((bells, id))
            }
            None => None,
        };
        Ok(RingFeed {
            reader,
            doorbell,
            bells,
            followed,
            buf: Vec::new(),
            closed: false,
        })
    }

    /// The doorbell's fd, for the reactor's `poll`.
    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        self.doorbell.as_fd().as_raw_fd()
    }

    /// Announces that the reactor is about to sleep: while the guard lives the publisher rings
    /// the doorbell. Sleep only if [`Armed::ready`] is false.
    pub(super) fn arm(&self) -> Armed<'_> {
        self.reader.arm()
    }

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

    /// Reads everything published so far, handing each followed delta (and each overrun) to
    /// `out`; the doorbell is drained first, so a publish after the read rings it again.
    pub(super) fn read(&mut self, mut out: impl FnMut(Forward)) {
        self.doorbell.drain();
        loop {
            let forward = match self.reader.try_next(&mut self.buf) {
                ReadResult::Event { kind, .. } => self.delta(kind),
                ReadResult::Lagged { missed } => Some(Forward::Lagged(missed)),
                ReadResult::Empty => return,
                ReadResult::Closed => {
                    self.closed = true;
                    return;
                }
            };
            if let Some(forward) = forward {
                out(forward);
            }
        }
    }

    /// Ring sequence up to which every event has been read (`u64::MAX` once the ring closed).
    pub(super) fn position(&self) -> u64 {
        if self.closed {
            u64::MAX
        } else {
            self.reader.position()
        }
    }

    /// The client-facing delta of the event in `buf`, when a connection follows its request.
    fn delta(&self, kind: EventKind) -> Option<Forward> {
        // The ring has already skipped every delta whose tag no followed request has.
        let DeltaEnvelope { payload } = serde_json::from_slice(&self.buf).ok()?;
        if !self
            .followed
            .read()
            .ids
            .contains(payload.request_id.as_ref())
        {
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
}

impl Drop for RingFeed {
    fn drop(&mut self) {
        if let Some((bells, id)) = self.bells.take() {
            bells.remove(id);
        }
    }
}

/// The part of a delta event's envelope the feed reads; everything else is skipped unparsed.
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
