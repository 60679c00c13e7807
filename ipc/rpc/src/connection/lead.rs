//! Who reads the connection next: the reader is a token handed between the connection's worker
//! threads and callers waiting for their answers, with as few thread wake-ups as possible.
//!
//! A bare pipe ping-pong costs two thread wakes per round trip (one per side); every extra
//! thread on the path costs another. So:
//! - a caller waiting for its answer while nobody reads takes the reader and reads until its
//!   own answer arrives (filling other callers' slots, queueing requests for the workers on
//!   the way): with one call in flight the calling side is one thread;
//! - a worker that reads a request puts the reader back *without* waking anyone and serves
//!   the request; when it is done it takes the reader again, so a quick request costs no
//!   hand-off at all. A handler's own call back takes the free reader by the rule above;
//! - the bound on the delay that costs a long request's neighbours: a parked worker looks
//!   at the reader every [`POLL`] while the connection is busy and takes it once it has been
//!   free for [`GRACE`], so a second request or a `$/cancel` is read within about
//!   `POLL + GRACE` while the first is still being served. After [`IDLE`] without a hand-off
//!   parked workers sleep without a timeout (an idle connection costs no CPU), and whoever
//!   puts the reader back wakes one of them if none is watching.
//!
//! Invariant, kept under the lock: the reader is free only while a caller wants it (nudged),
//! a worker parks with a timeout (it will look), or a wake-up or a new worker is on its way.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::slot::Slot;
use super::source::Timed;
use crate::frame::FrameReader;
use crate::message::Request;

/// The connection's frame reader.
pub(super) type Reader = FrameReader<Timed>;

/// How long a free reader waits for the thread that put it back before a parked worker takes
/// it: about a cheap request's service time, so a quick server keeps the reader itself.
pub(super) const GRACE: Duration = Duration::from_micros(50);

/// How often a parked worker looks at the reader while the connection is busy. Each look is a
/// wake-up, so it is several round trips long; it bounds how late a request is read while
/// another one is being served.
pub(super) const POLL: Duration = Duration::from_micros(250);

/// After this long without a hand-off a parked worker stops looking and sleeps until woken.
pub(super) const IDLE: Duration = Duration::from_millis(10);

/// The hand-off state, under the connection's `lead` lock.
pub(super) struct Lead {
    /// `Some` while nobody reads.
    pub reader: Option<Reader>,
    /// The stream ended (or failed): nobody reads again.
    pub ended: bool,
    /// When the reader was last put back.
    pub released_at: Instant,
    /// Workers parked with a timeout: one of them will look at a free reader.
    pub timed: usize,
    /// Workers parked until woken.
    pub deep: usize,
    /// Wake-ups sent to parked workers and not yet taken: a parked worker counts as available
    /// for new work only if no earlier wake-up is already meant for it.
    pub promised: usize,
    /// Callers waiting for an answer that take the reader when it is handed to them.
    pub wanting: VecDeque<Arc<Slot>>,
    /// Requests a caller read, for the workers to serve (already admitted).
    pub queue: VecDeque<Request>,
}

/// What must happen after the lock is dropped so the reader stays attended.
#[must_use]
pub(super) enum Attend {
    /// Someone will look at it.
    Nothing,
    /// Wake this caller: the reader is its now.
    Nudge(Arc<Slot>),
    /// Wake one parked worker.
    Notify,
    /// No worker is parked: start one.
    Spawn,
}

impl Lead {
    pub fn new(reader: Reader) -> Lead {
        Lead {
            reader: Some(reader),
            ended: false,
            released_at: Instant::now(),
            timed: 0,
            deep: 0,
            promised: 0,
            wanting: VecDeque::new(),
            queue: VecDeque::new(),
        }
    }

    /// Callers still waiting for the reader (an answered one no longer does).
    pub fn want(&mut self) -> bool {
        self.wanting.retain(|slot| !slot.is_filled());
        !self.wanting.is_empty()
    }

    /// Puts the reader back. `follows`: the caller parks as a timed worker right after, so it
    /// is the one who will look.
    pub fn release(&mut self, reader: Reader, follows: bool) -> Attend {
        self.reader = Some(reader);
        self.released_at = Instant::now();
        self.attend(follows)
    }

    /// Who will take a free reader: a waiting caller first (its answer may be in the pipe),
    /// else a parked worker; nobody needs waking if one is already looking.
    pub fn attend(&mut self, follows: bool) -> Attend {
        if self.reader.is_none() {
            return Attend::Nothing;
        }
        if self.want() {
            return self
                .wanting
                .pop_front()
                .map_or(Attend::Nothing, Attend::Nudge);
        }
        if follows || self.timed > self.promised {
            Attend::Nothing
        } else {
            self.wake_worker()
        }
    }

    /// A request a caller read: a parked worker serves it, or a new one.
    pub fn enqueue(&mut self, request: Request) -> Attend {
        self.queue.push_back(request);
        self.wake_worker()
    }

    fn wake_worker(&mut self) -> Attend {
        if self.timed + self.deep > self.promised {
            self.promised += 1;
            Attend::Notify
        } else {
            Attend::Spawn
        }
    }

    /// A parked worker woke (by a wake-up or its timeout): one promise is taken.
    pub fn woke(&mut self) {
        self.promised = self.promised.saturating_sub(1);
    }

    /// How long a worker with nothing to do parks: `None` until woken.
    pub fn park_for(&self) -> Option<Duration> {
        let since = self.released_at.elapsed();
        if self.reader.is_some() {
            Some(GRACE.saturating_sub(since).max(Duration::from_micros(1)))
        } else if since < IDLE {
            Some(POLL)
        } else {
            None
        }
    }

    /// Whether a parked worker takes the free reader now (it has waited out the grace).
    pub fn may_take(&self) -> bool {
        self.reader.is_some() && self.released_at.elapsed() >= GRACE
    }

    /// Ends reading for good; the callers that waited for the reader are to be woken (they
    /// find their calls failed by the close).
    pub fn end(&mut self) -> Vec<Arc<Slot>> {
        self.ended = true;
        self.reader = None;
        self.wanting.drain(..).collect()
    }
}
