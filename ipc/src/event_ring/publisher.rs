//! The ring's single writer.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use crate::sync::{Arc, Ordering, fence, handshake_fence};
use crate::{Doorbell, Doorbells, EventKind, PublishError, notify};

use super::layout::{BUSY_STAMP, pack_meta, padded_len};
use super::region::Shared;
use super::{RingConfig, Subscriber};

/// The one writer of an event ring.
///
/// `Send` but neither `Clone` nor `Sync`: the slot protocol assumes exactly one writer, and
/// the type system enforces it. Threads that all publish share it through a `Mutex`.
///
/// Dropping it closes the ring: readers drain what is left, then see
/// [`ReadResult::Closed`](crate::ReadResult::Closed).
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<hearth_ipc::Publisher>();
/// ```
///
/// ```compile_fail
/// fn cloned<T: Clone>() {}
/// cloned::<hearth_ipc::Publisher>();
/// ```
pub struct Publisher {
    shared: Arc<Shared>,
    /// Sequence number the next event gets (mirrors `header.write_seq`).
    next_seq: u64,
    /// Payload byte cursor (mirrors `header.payload_head`).
    head: u64,
    wake_syscalls: u64,
    /// Doorbells of readers that sleep on an eventfd, rung while `bell_parked != 0`.
    doorbells: Doorbells,
    _not_sync: PhantomData<Cell<()>>,
}

impl Publisher {
    pub(crate) fn new(shared: Arc<Shared>) -> Publisher {
        let header = shared.header();
        let next_seq = header.write_seq.load(Ordering::Relaxed);
        let head = header.payload_head.load(Ordering::Relaxed);
        Publisher {
            shared,
            next_seq,
            head,
            wake_syscalls: 0,
            doorbells: Doorbells::default(),
            _not_sync: PhantomData,
        }
    }

    /// Publish one event and return its sequence number.
    ///
    /// Never blocks and never allocates. Makes no syscall unless a reader is parked, and
    /// then exactly one (`FUTEX_WAKE`, waking all parked readers). The oldest events are
    /// overwritten: a reader that falls behind is told how many it missed.
    ///
    /// # Errors
    /// [`PublishError::TooLarge`] if `payload` is longer than the ring's `max_event_len`;
    /// nothing is written and no sequence number is used.
    #[inline]
    pub fn publish(&mut self, kind: EventKind, payload: &[u8]) -> Result<u64, PublishError> {
        self.publish_tagged(kind, 0, payload)
    }

    /// [`publish`](Self::publish) with a stream tag (e.g. the id of the task whose answer this
    /// delta belongs to). A reader made with [`Reader::with_tag`](crate::Reader::with_tag)
    /// skips other tags on one load, without copying their payloads. Tag 0 means untagged.
    ///
    /// # Errors
    /// As for `publish`.
    #[inline]
    pub fn publish_tagged(
        &mut self,
        kind: EventKind,
        tag: u64,
        payload: &[u8],
    ) -> Result<u64, PublishError> {
        self.publish_sparing(kind, tag, payload, None)
    }

    /// [`publish_tagged`](Self::publish_tagged) without ringing doorbell `spare` (an id from
    /// [`add_doorbell`](Self::add_doorbell) or [`Doorbells::add`]): for a reader whose work on
    /// this event the publisher has already done, so it need not wake for it.
    ///
    /// # Errors
    /// As for `publish`.
    #[inline]
    pub fn publish_sparing(
        &mut self,
        kind: EventKind,
        tag: u64,
        payload: &[u8],
        spare: Option<u64>,
    ) -> Result<u64, PublishError> {
        let max = self.shared.config().max_event_len as usize;
        if payload.len() > max {
            return Err(PublishError::TooLarge {
                len: payload.len(),
                max,
            });
        }
        let shared = &*self.shared;
        let header = shared.header();
        let seq = self.next_seq;
        let pos = self.head;
        let end = pos + padded_len(payload.len()) as u64;
        let slot = shared.slot(seq);

        // Seqlock "odd" phase for both the payload bytes we are about to overwrite (move the
        // reservation cursor first) and the slot we are about to reuse (clear its stamp).
        header.payload_head.store(end, Ordering::Relaxed);
        slot.stamp.store(BUSY_STAMP, Ordering::Relaxed);
        // SYNC: pairs with `fence(Acquire)` in `Reader::read_slot`: a reader whose copy
        // observed any store below also observes the two stores above, and discards the copy.
        fence(Ordering::Release);
        slot.meta.store(
            pack_meta(kind.code(), payload.len() as u32),
            Ordering::Relaxed,
        );
        slot.pos.store(pos, Ordering::Relaxed);
        slot.tag.store(tag, Ordering::Relaxed);
        shared.write_payload(pos, payload);
        // SYNC: pairs with the Acquire loads of `stamp` in `Reader::read_slot` and
        // `Reader::oldest_intact`: a reader that sees this stamp sees the meta, pos and bytes.
        slot.stamp.store(seq + 1, Ordering::Release);
        // SYNC: its Release half pairs with the Acquire loads of `write_seq` in
        // `Reader::try_next`; SeqCst orders it before the `parked` load below, the Dekker pair
        // of `parked.fetch_add` → `write_seq.load` in `Reader::park`.
        header.write_seq.store(seq + 1, Ordering::SeqCst);
        self.next_seq = seq + 1;
        self.head = end;

        self.wake_parked(spare);
        Ok(seq)
    }

    /// Wake whoever is parked, futex or doorbell (but `spare`'s); no syscall while nobody is.
    #[inline]
    fn wake_parked(&mut self, spare: Option<u64>) {
        let header = self.shared.header();
        handshake_fence();
        // SYNC: both pair with the `fetch_add(SeqCst)` of `parked` in `Reader::park` and of
        // `bell_parked` in `Reader::arm` (the Dekker pairs named above and in DESIGN §1.7).
        let futex = header.parked.load(Ordering::SeqCst) != 0;
        let bells = header.bell_parked.load(Ordering::SeqCst) != 0;
        if futex || bells {
            self.wake(futex, bells, spare);
        }
    }

    #[cold]
    fn wake(&mut self, futex: bool, bells: bool, spare: Option<u64>) {
        let header = self.shared.header();
        if futex {
            // SYNC: pairs with the SeqCst load of `wake_epoch` in `Reader::park`: a reader that
            // read the old epoch either is already queued on the futex (and is woken below) or
            // finds the word changed and returns from FUTEX_WAIT at once.
            header.wake_epoch.fetch_add(1, Ordering::SeqCst);
            notify::wake_all(&header.wake_epoch, self.shared.process_shared());
            self.wake_syscalls += 1;
        }
        if bells {
            self.wake_syscalls += self.doorbells.ring_all_but(spare);
        }
    }

    /// Ring `doorbell` whenever an event is published while a reader sleeps on a doorbell
    /// (unless that publish spares it: [`publish_sparing`](Self::publish_sparing)).
    /// Returns an id for [`remove_doorbell`](Self::remove_doorbell) (when its plugin exits).
    pub fn add_doorbell(&mut self, doorbell: Doorbell) -> u64 {
        self.doorbells.add(doorbell)
    }

    /// Stop ringing a doorbell; returns it, or `None` for an unknown id.
    pub fn remove_doorbell(&mut self, id: u64) -> Option<Doorbell> {
        self.doorbells.remove(id)
    }

    /// A handle on this publisher's doorbell list, for whoever starts and stops the readers'
    /// processes while the publisher itself lives elsewhere (behind the kernel's event bus).
    pub fn doorbells(&self) -> Doorbells {
        self.doorbells.clone()
    }

    /// The sequence number the next published event will get (= events published so far).
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The largest payload [`publish`](Self::publish) accepts.
    pub fn max_event_len(&self) -> usize {
        self.shared.config().max_event_len as usize
    }

    /// The ring's geometry.
    pub fn config(&self) -> RingConfig {
        *self.shared.config()
    }

    /// Readers parked (or about to park) right now, on the futex or on a doorbell; while 0,
    /// publishing makes no syscall.
    pub fn parked_readers(&self) -> u32 {
        let header = self.shared.header();
        header.parked.load(Ordering::Relaxed) + header.bell_parked.load(Ordering::Relaxed)
    }

    /// Wake syscalls this publisher has made: one futex wake per publish that found a
    /// futex-parked reader, plus one eventfd write per doorbell when one slept on a doorbell.
    pub fn wake_syscalls(&self) -> u64 {
        self.wake_syscalls
    }

    /// A handle from which readers of this ring are made.
    pub fn subscriber(&self) -> Subscriber {
        Subscriber::new(Arc::clone(&self.shared))
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        let header = self.shared.header();
        // SYNC: Release half pairs with the Acquire load of `closed` in `Reader::try_next`
        // (the final `write_seq` is visible to whoever sees `closed`); SeqCst makes it the
        // Dekker partner of `Reader::park`, like `write_seq` in `publish`.
        header.closed.store(1, Ordering::SeqCst);
        self.wake_parked(None);
    }
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher")
            .field("next_seq", &self.next_seq)
            .field("payload_head", &self.head)
            .field("config", self.shared.config())
            .finish()
    }
}
