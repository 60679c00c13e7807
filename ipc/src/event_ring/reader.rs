//! Readers of an event ring: any number, each with its own cursor and kind mask.

use std::fmt;
use std::time::{Duration, Instant};

use crate::sync::{Arc, Ordering, fence, handshake_fence, spin_hint};
use crate::{Doorbell, EventKind, KindMask, notify};

use super::RingConfig;
use super::layout::unpack_meta;
use super::region::Shared;

/// What one read produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadResult {
    /// Event `seq` of `kind`; the caller's buffer holds exactly its payload.
    Event {
        /// The event's sequence number.
        seq: u64,
        /// Its kind.
        kind: EventKind,
    },
    /// Nothing new yet.
    Empty,
    /// The writer overran this reader: `missed` events were lost, and the reader now stands
    /// at the oldest event still intact. Reading again continues there.
    ///
    /// `missed` counts every event jumped over, **of any kind and any stream tag**: their
    /// slots were overwritten, so nobody can tell any more which were of this reader's kinds
    /// or tag. For a filtered reader it is therefore an upper bound on what it lost of its own.
    Lagged {
        /// Events jumped over (see above).
        missed: u64,
    },
    /// The publisher is gone and every remaining event has been read.
    Closed,
}

/// A cloneable, thread-safe handle to a ring from which readers are made.
#[derive(Clone)]
pub struct Subscriber {
    shared: Arc<Shared>,
}

impl Subscriber {
    pub(crate) fn new(shared: Arc<Shared>) -> Subscriber {
        Subscriber { shared }
    }

    /// A reader of events published from now on, of the kinds in `mask`.
    pub fn reader(&self, mask: KindMask) -> Reader {
        // SYNC: pairs with the SeqCst (Release) store of `write_seq` in `Publisher::publish`.
        let next = self.shared.header().write_seq.load(Ordering::Acquire);
        Reader::new(Arc::clone(&self.shared), mask, next)
    }

    /// A reader that starts at the oldest event still intact in the ring, so a late
    /// subscriber (a CLI attaching mid-reply) also sees the recent history.
    pub fn reader_from_oldest(&self, mask: KindMask) -> Reader {
        let mut reader = Reader::new(Arc::clone(&self.shared), mask, 0);
        reader.next = reader.oldest_intact(0);
        reader
    }

    /// Events published so far.
    pub fn published(&self) -> u64 {
        // SYNC: pairs with the SeqCst (Release) store of `write_seq` in `Publisher::publish`.
        self.shared.header().write_seq.load(Ordering::Acquire)
    }

    /// Whether the publisher has been dropped.
    pub fn is_closed(&self) -> bool {
        // SYNC: pairs with the SeqCst (Release) store of `closed` in `Publisher::drop`.
        self.shared.header().closed.load(Ordering::Acquire) != 0
    }

    /// The ring's geometry.
    pub fn config(&self) -> RingConfig {
        *self.shared.config()
    }
}

impl fmt::Debug for Subscriber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscriber")
            .field("published", &self.published())
            .field("config", self.shared.config())
            .finish()
    }
}

/// Decides from an event's stream tag whether a reader wants it (see
/// [`Reader::with_tag_filter`]).
type TagFilter = std::sync::Arc<dyn Fn(u64) -> bool + Send + Sync>;

/// Outcome of reading one slot.
enum SlotRead {
    Delivered(EventKind),
    Filtered,
    Overrun,
}

/// Default time a reader spins on an empty ring before parking: shorter than a futex wake
/// on the target hardware (~30 µs), long enough to catch a token stream's next delta.
const DEFAULT_SPIN: Duration = Duration::from_micros(10);

/// How long one park lasts when the caller gave no deadline (it re-parks after).
const MAX_PARK: Duration = Duration::from_secs(3600);

/// One cursor over the ring. Readers never block the publisher and never see a torn payload.
pub struct Reader {
    shared: Arc<Shared>,
    /// Sequence number of the next event to look at.
    next: u64,
    mask: KindMask,
    /// Only events with this stream tag are delivered, when set.
    tag: Option<u64>,
    /// Only events whose stream tag it accepts are delivered, when set.
    tag_filter: Option<TagFilter>,
    missed_total: u64,
    spin: Duration,
}

impl Reader {
    fn new(shared: Arc<Shared>, mask: KindMask, next: u64) -> Reader {
        Reader {
            shared,
            next,
            mask,
            tag: None,
            tag_filter: None,
            missed_total: 0,
            spin: DEFAULT_SPIN,
        }
    }

    /// Read the next event of a wanted kind without waiting.
    ///
    /// On [`ReadResult::Event`], `buf` holds exactly the payload (its capacity is reused, so
    /// a reader allocates only while its buffer grows). On any other result `buf` is empty.
    pub fn try_next(&mut self, buf: &mut Vec<u8>) -> ReadResult {
        let header = self.shared.header();
        let slot_count = self.shared.slot_count();
        loop {
            // SYNC: pairs with the SeqCst (Release) store of `write_seq` in `publish`.
            let written = header.write_seq.load(Ordering::Acquire);
            if self.next >= written {
                buf.clear();
                // SYNC: pairs with the SeqCst (Release) store of `closed` in `Publisher::drop`,
                // after which the reload sees the final `write_seq`.
                if header.closed.load(Ordering::Acquire) != 0
                    && self.next >= header.write_seq.load(Ordering::Acquire)
                {
                    return ReadResult::Closed;
                }
                return ReadResult::Empty;
            }
            if written - self.next > slot_count {
                return self.skip_to_oldest(self.next, buf);
            }
            match self.read_slot(self.next, buf) {
                SlotRead::Delivered(kind) => {
                    let seq = self.next;
                    self.next += 1;
                    return ReadResult::Event { seq, kind };
                }
                SlotRead::Filtered => self.next += 1,
                SlotRead::Overrun => return self.skip_to_oldest(self.next + 1, buf),
            }
        }
    }

    /// Read the next wanted event, waiting up to `timeout`: spin briefly (see
    /// [`set_spin`](Self::set_spin)), then park until the publisher wakes it.
    /// Returns [`ReadResult::Empty`] only when the timeout passed with nothing to deliver.
    pub fn next_timeout(&mut self, buf: &mut Vec<u8>, timeout: Duration) -> ReadResult {
        self.next_parking(buf, timeout, false, |reader, left| reader.park(left))
    }

    /// [`next_timeout`](Self::next_timeout) for a reader whose [`position`](Self::position)
    /// someone waits on: it also returns [`ReadResult::Empty`] as soon as it has moved past
    /// events its kind mask or tag filter skip, so a skipped event advances the position at
    /// once instead of at the timeout.
    pub fn next_or_skipped(&mut self, buf: &mut Vec<u8>, timeout: Duration) -> ReadResult {
        self.next_parking(buf, timeout, true, |reader, left| reader.park(left))
    }

    /// [`next_timeout`](Self::next_timeout), sleeping on `doorbell` (an eventfd the
    /// publisher rings, see [`Publisher::add_doorbell`](crate::Publisher::add_doorbell))
    /// instead of the ring's futex. The publisher must have this doorbell (or a duplicate of
    /// its fd) registered, or the reader only wakes at its timeout.
    pub fn next_with_doorbell(
        &mut self,
        buf: &mut Vec<u8>,
        doorbell: &Doorbell,
        timeout: Duration,
    ) -> ReadResult {
        self.next_parking(buf, timeout, false, |reader, left| {
            let armed = reader.arm();
            if !armed.ready() {
                doorbell.wait(left);
            }
        })
    }

    /// Announce that this reader is about to sleep on its doorbell, for a caller that waits
    /// in its own `poll`/`epoll` set: while the returned guard lives the publisher rings the
    /// doorbells. Sleep only if [`Armed::ready`] is false, then drop the guard, drain the
    /// doorbell and read. Either the publisher sees the guard and rings, or `ready` sees the
    /// event: a wake is never lost.
    pub fn arm(&self) -> Armed<'_> {
        // SYNC: pairs with the SeqCst load of `bell_parked` in `Publisher::wake_parked`
        // (Dekker, as in `park`: either the publisher sees this count or `Armed::ready` sees
        // the publish).
        self.shared
            .header()
            .bell_parked
            .fetch_add(1, Ordering::SeqCst);
        handshake_fence();
        Armed { reader: self }
    }

    fn next_parking(
        &mut self,
        buf: &mut Vec<u8>,
        timeout: Duration,
        return_on_skip: bool,
        park: impl Fn(&Reader, Duration),
    ) -> ReadResult {
        let start = Instant::now();
        let deadline = start.checked_add(timeout);
        let entered = self.next;
        let mut spun = false;
        loop {
            match self.try_next(buf) {
                ReadResult::Empty if return_on_skip && self.next != entered => {
                    return ReadResult::Empty;
                }
                ReadResult::Empty => {}
                other => return other,
            }
            if !spun {
                spun = true;
                if self.spin_until_ready(start, self.spin.min(timeout)) {
                    continue;
                }
            }
            let remaining = match deadline {
                Some(deadline) => match deadline.checked_duration_since(Instant::now()) {
                    Some(left) if !left.is_zero() => left,
                    _ => return ReadResult::Empty,
                },
                None => MAX_PARK,
            };
            park(self, remaining);
        }
    }

    /// How long [`next_timeout`](Self::next_timeout) spins before parking (default 10 µs).
    /// Zero parks at once.
    pub fn set_spin(&mut self, spin: Duration) {
        self.spin = spin;
    }

    /// Events this reader lost to overruns since it was made.
    pub fn missed_total(&self) -> u64 {
        self.missed_total
    }

    /// Sequence number of the next event this reader will look at.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// The kinds this reader receives.
    pub fn mask(&self) -> KindMask {
        self.mask
    }

    /// Deliver only events published with stream tag `tag` (see
    /// [`Publisher::publish_tagged`](crate::Publisher::publish_tagged)); others are skipped
    /// on one load of the slot's tag word, before any payload byte is copied. Skipped events
    /// are not misses.
    pub fn with_tag(mut self, tag: u64) -> Reader {
        self.tag = Some(tag);
        self
    }

    /// Deliver only events whose stream tag `accept` returns true for: one reader following
    /// many streams (the socket's pump, for every client's request) decides on one load of the
    /// slot's tag word, before any payload byte is copied. Skipped events are not misses.
    pub fn with_tag_filter(
        mut self,
        accept: impl Fn(u64) -> bool + Send + Sync + 'static,
    ) -> Reader {
        self.tag_filter = Some(std::sync::Arc::new(accept));
        self
    }

    /// The stream tag this reader filters on, if any.
    pub fn tag(&self) -> Option<u64> {
        self.tag
    }

    /// Whether an event (or the close) is waiting; cheap enough to poll in a spin.
    fn ready(&self) -> bool {
        let header = self.shared.header();
        // SYNC: pairs with the SeqCst (Release) stores of `write_seq` in `publish` and of
        // `closed` in `Publisher::drop`.
        header.write_seq.load(Ordering::Acquire) > self.next
            || header.closed.load(Ordering::Acquire) != 0
    }

    fn spin_until_ready(&self, start: Instant, budget: Duration) -> bool {
        let mut spins = 0u32;
        loop {
            if self.ready() {
                return true;
            }
            spin_hint();
            spins = spins.wrapping_add(1);
            // Reading the clock costs ~20 ns; every 16 spins keeps that overhead small.
            if spins.is_multiple_of(16) && start.elapsed() >= budget {
                return false;
            }
        }
    }

    pub(super) fn park(&self, timeout: Duration) {
        let header = self.shared.header();
        // SYNC: pairs with the SeqCst load of `parked` in `Publisher::publish` / `drop`
        // (Dekker: either the publisher sees this reader parked, or the `write_seq` /
        // `closed` load below sees the publish).
        header.parked.fetch_add(1, Ordering::SeqCst);
        handshake_fence();
        // SYNC: pairs with `wake_epoch.fetch_add(SeqCst)` in `Publisher::wake`; reading the
        // epoch before re-checking means a wake that lands in between changes the word, so
        // FUTEX_WAIT returns at once instead of sleeping through it.
        let epoch = header.wake_epoch.load(Ordering::SeqCst);
        // SYNC: SeqCst partners of the stores in `publish` / `Publisher::drop` (see above).
        let ready = header.write_seq.load(Ordering::SeqCst) > self.next
            || header.closed.load(Ordering::SeqCst) != 0;
        if !ready {
            notify::wait(
                &header.wake_epoch,
                epoch,
                timeout,
                self.shared.process_shared(),
            );
        }
        header.parked.fetch_sub(1, Ordering::Relaxed);
    }

    /// Seqlock read of event `seq` into `buf` (when its kind is wanted).
    ///
    /// The stamp is loaded with Acquire, the fields and payload words with Relaxed atomic
    /// loads (a torn copy is possible and is a defined race, never UB), then an Acquire fence
    /// and re-checks: the stamp must still be `seq + 1` (the slot was not reused) and the
    /// payload reservation cursor must not have advanced past `pos + capacity` (the bytes
    /// were not reclaimed by the wrapping payload cursor). If the copy saw any byte of a
    /// later write, the fence makes that writer's cursor/stamp stores visible here, so the
    /// re-check fails: that is the crossbeam `AtomicCell`/seqlock argument, done with
    /// fences because the data accesses are relaxed atomics.
    fn read_slot(&self, seq: u64, buf: &mut Vec<u8>) -> SlotRead {
        let shared = &*self.shared;
        let slot = shared.slot(seq);
        let stamp = seq + 1;
        // SYNC: pairs with the Release store of `stamp` in `Publisher::publish`.
        if slot.stamp.load(Ordering::Acquire) != stamp {
            return SlotRead::Overrun;
        }
        let (code, len) = unpack_meta(slot.meta.load(Ordering::Relaxed));
        let pos = slot.pos.load(Ordering::Relaxed);
        let kind = EventKind::from_code(code);
        let capacity = shared.payload_capacity();
        // A length beyond the capacity can only be a torn or foreign value: never copy it.
        let sane = u64::from(len) <= capacity;
        let wanted = self.mask.contains(kind) && {
            let filtered = self.tag.is_some() || self.tag_filter.is_some();
            let tag = if filtered {
                slot.tag.load(Ordering::Relaxed)
            } else {
                0
            };
            self.tag.is_none_or(|want| tag == want)
                && self.tag_filter.as_ref().is_none_or(|accept| accept(tag))
        };
        if wanted && sane {
            shared.read_payload(pos, len as usize, buf);
        }
        // SYNC: pairs with `fence(Release)` in `Publisher::publish`.
        fence(Ordering::Acquire);
        if slot.stamp.load(Ordering::Relaxed) != stamp || !sane {
            return SlotRead::Overrun;
        }
        if !wanted {
            return SlotRead::Filtered;
        }
        let reserved_to = shared.header().payload_head.load(Ordering::Relaxed);
        if reserved_to > pos.saturating_add(capacity) {
            return SlotRead::Overrun;
        }
        SlotRead::Delivered(kind)
    }

    /// Move past lost events to the oldest intact one at or after `at_least`.
    fn skip_to_oldest(&mut self, at_least: u64, buf: &mut Vec<u8>) -> ReadResult {
        buf.clear();
        let target = self.oldest_intact(at_least).max(at_least);
        let missed = target - self.next;
        self.next = target;
        self.missed_total += missed;
        ReadResult::Lagged { missed }
    }

    /// The oldest sequence number `>= at_least` whose slot and payload are still intact, or
    /// `write_seq` if none is. Binary search over the last `slot_count` events: intactness
    /// is monotonic in `seq` (older events are reclaimed first, slots and payload alike).
    /// Racing with the publisher it may be slightly off; that only costs another `Lagged`,
    /// because `read_slot` validates every event it delivers.
    fn oldest_intact(&self, at_least: u64) -> u64 {
        let shared = &*self.shared;
        let header = shared.header();
        // SYNC: pairs with the SeqCst (Release) store of `write_seq` in `publish`.
        let written = header.write_seq.load(Ordering::Acquire);
        let reserved_to = header.payload_head.load(Ordering::Relaxed);
        let capacity = shared.payload_capacity();
        let mut lo = at_least.max(written.saturating_sub(shared.slot_count()));
        let mut hi = written.max(lo);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let slot = shared.slot(mid);
            // SYNC: pairs with the Release store of `stamp` in `Publisher::publish`.
            let intact = slot.stamp.load(Ordering::Acquire) == mid + 1
                && slot.pos.load(Ordering::Relaxed).saturating_add(capacity) >= reserved_to;
            if intact {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

/// A reader announced as sleeping on its doorbell; see [`Reader::arm`]. Dropping it withdraws
/// the announcement.
pub struct Armed<'a> {
    reader: &'a Reader,
}

impl Armed<'_> {
    /// Whether an event (or the close) is already waiting, so the caller must not sleep.
    pub fn ready(&self) -> bool {
        let header = self.reader.shared.header();
        // SYNC: SeqCst partners of the stores of `write_seq` in `publish` and `closed` in
        // `Publisher::drop` (the Dekker pair with `bell_parked`, see `Reader::arm`).
        header.write_seq.load(Ordering::SeqCst) > self.reader.next
            || header.closed.load(Ordering::SeqCst) != 0
    }
}

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        self.reader
            .shared
            .header()
            .bell_parked
            .fetch_sub(1, Ordering::Relaxed);
    }
}

impl fmt::Debug for Armed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Armed")
            .field("ready", &self.ready())
            .finish()
    }
}

impl fmt::Debug for Reader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("position", &self.next)
            .field("mask", &self.mask)
            .field("tag", &self.tag)
            .field("tag_filter", &self.tag_filter.is_some())
            .field("missed_total", &self.missed_total)
            .finish()
    }
}
