//! The socket's reader of the event ring, read on the reactor's own thread: the reactor sleeps
//! in its `poll` with the ring's doorbell (an eventfd the publisher rings while a reader is
//! armed) among its sources, so a delta the reactor writes reaches a client with one thread
//! wake-up, the reactor's (and one the publisher writes itself with none: see
//! [`direct`](super::direct)).
//!
//! Deltas are filtered on the ring slot's stream tag ([`stream_tag`] of the request id), one
//! load per slot, before any byte is copied: only the deltas of followed requests are parsed,
//! and what the feed hands on borrows the slot's bytes. Tags may collide, so the reactor still
//! looks up the request id of a delta that passed. A terminal line is written only after the
//! feed has read past every event published before its reply, so a client sees its answer's
//! deltas, then its end, in the order the kernel produced them.

use hearth_ipc::{Armed, Doorbell, Doorbells, EventKind, KindMask, ReadResult, Reader};
use hearth_kernel::events::stream_tag;
use parking_lot::RwLock;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::Arc;

/// The kinds a client streams.
pub(super) fn delta_kinds() -> KindMask {
    KindMask::of(&[EventKind::ContentDelta, EventKind::ReasoningDelta])
}

/// What the feed hands the reactor, borrowed from the ring slot it read (the text is copied
/// only when it holds an escape to decode).
#[derive(Debug)]
pub(super) enum Forward<'a> {
    /// A delta whose stream tag a followed request has.
    Delta {
        /// Its ring sequence.
        seq: u64,
        request_id: Cow<'a, str>,
        content: Cow<'a, str>,
        reasoning: bool,
        reset: bool,
    },
    /// The ring overran the feed: this many events (of any request) were lost.
    Lagged(u64),
}

/// How many followed requests have each stream tag (read by the ring reader's tag filter).
type FollowedTags = Arc<RwLock<HashMap<u64, usize>>>;

/// The ring reader, its doorbell and the requests it follows.
pub(super) struct RingFeed {
    reader: Reader,
    doorbell: Doorbell,
    /// The publisher's list the doorbell is in, and its id there (removed on drop).
    bells: Doorbells,
    bell_id: u64,
    followed: FollowedTags,
    buf: Vec<u8>,
    /// The ring closed: nothing more will come, so no terminal line may wait for it.
    closed: bool,
}

impl RingFeed {
    /// A feed over `reader` (its kinds: [`delta_kinds`]), woken through a doorbell added to
    /// `bells`.
    pub(super) fn new(reader: Reader, bells: Doorbells) -> std::io::Result<RingFeed> {
        let followed = FollowedTags::default();
        let filter = Arc::clone(&followed);
        let reader = reader.with_tag_filter(move |tag| filter.read().contains_key(&tag));
        let doorbell = Doorbell::new().map_err(std::io::Error::other)?;
        let bell_id = bells.add(doorbell.try_clone().map_err(std::io::Error::other)?);
        Ok(RingFeed {
            reader,
            doorbell,
            bells,
            bell_id,
            followed,
            buf: Vec::new(),
            closed: false,
        })
    }

    /// The doorbell (a second handle on it) and its id in the publisher's list.
    pub(super) fn bell(&self) -> std::io::Result<(u64, Doorbell)> {
        let bell = self.doorbell.try_clone().map_err(std::io::Error::other)?;
        Ok((self.bell_id, bell))
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

    /// Lets the deltas of `request_id` through from now on. The reactor calls this once per
    /// request it follows, and [`RingFeed::unfollow`] once when it stops.
    pub(super) fn follow(&self, request_id: &str) {
        *self
            .followed
            .write()
            .entry(stream_tag(request_id))
            .or_default() += 1;
    }

    /// Stops letting the deltas of `request_id` through (unless another followed request
    /// shares its tag).
    pub(super) fn unfollow(&self, request_id: &str) {
        let tag = stream_tag(request_id);
        let mut followed = self.followed.write();
        if let Some(n) = followed.get_mut(&tag) {
            *n -= 1;
            if *n == 0 {
                followed.remove(&tag);
            }
        }
    }

    /// Reads everything published so far, handing each delta that passed the tag filter (and
    /// each overrun) to `out`; the doorbell is drained first, so a publish after the read rings
    /// it again.
    pub(super) fn read(&mut self, mut out: impl FnMut(Forward<'_>)) {
        self.doorbell.drain();
        loop {
            match self.reader.try_next(&mut self.buf) {
                ReadResult::Event { seq, kind } => {
                    if let Some(forward) = delta(&self.buf, seq, kind) {
                        out(forward);
                    }
                }
                ReadResult::Lagged { missed } => out(Forward::Lagged(missed)),
                ReadResult::Empty => return,
                ReadResult::Closed => {
                    self.closed = true;
                    return;
                }
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
}

/// The client-facing delta of the delta event in `slot`; `None` for bytes that are not one.
fn delta(slot: &[u8], seq: u64, kind: EventKind) -> Option<Forward<'_>> {
    let DeltaEnvelope { payload } = serde_json::from_slice(slot).ok()?;
    Some(Forward::Delta {
        seq,
        request_id: payload.request_id,
        content: payload.content,
        reasoning: kind == EventKind::ReasoningDelta,
        reset: payload.reset,
    })
}

impl Drop for RingFeed {
    fn drop(&mut self) {
        self.bells.remove(self.bell_id);
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
