//! A streaming client's deltas written on the provider's thread, as each is published: the
//! token reaches the client without waking the socket's thread first, which halves the thread
//! wake-ups between the model's socket and the client's.
//!
//! The reactor stays the one owner of every connection; it lends a connection's socket (a
//! duplicate of its descriptor) to the publisher only while nothing else can be written to it:
//!
//! - **Start**: when a connection's answer has begun to stream (the reactor wrote its first
//!   delta, so requests waiting in the kernel's queue hold no second descriptor), its
//!   `accepted` line is out, it has no output waiting, and the reactor's ring feed has read
//!   everything published (checked under the same lock the publisher holds while it
//!   publishes), so every later delta of the request is the publisher's to write and none
//!   before it is.
//! - **While lent**: the publisher writes each delta of the request whole, without blocking,
//!   and does not ring the reactor's doorbell for it (the reactor reads it later, with the
//!   next event it wakes for). A peer that takes only part of one (or none, or fails) ends its
//!   turn: it keeps the unwritten rest, writes nothing more, and rings the reactor.
//! - **Claim**: the reactor still reads every delta off the ring. For each it asks who wrote it;
//!   when the publisher stopped, the socket comes back to the reactor with the rest, which is
//!   queued before anything else. A delta before the last one the publisher wrote needs no
//!   lock to answer: the publisher marks how far it wrote ([`WrittenMark`]) after each write,
//!   and a later delta written means this one was written whole (it stops at its first short
//!   write and writes nothing after). Being woken only by other events, the reactor reads lent
//!   deltas in batches, so it takes the lock about once per batch, for the newest.
//! - **End**: before the reactor writes any other line to the connection (its terminal line,
//!   a lag notice) or closes it, it takes the socket back the same way.
//!
//! Bytes therefore reach a client in ring order from one writer at a time.

use super::protocol::DeltaLine;
use super::write_some::write_some;
use hearth_ipc::{Doorbell, EventKind};
use hearth_kernel::events::{Delta, DeltaTap};
use parking_lot::{Mutex, MutexGuard};
use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The requests whose deltas the publisher writes, by request id.
#[derive(Debug)]
pub(super) struct DirectStreams {
    lent: Mutex<HashMap<String, Lent>>,
    /// How many requests `lent` holds, stored under its lock whenever it changes. Only the
    /// reactor adds or removes entries (the publisher changes them in place), so on the
    /// reactor's thread this count is exact: with none, a delta's writer is known without the
    /// lock, and a client the reactor writes to costs no lock per delta.
    entries: AtomicUsize,
    /// The reactor's doorbell and its id in the publisher's list: spared while the publisher
    /// writes, rung when it stops.
    reactor_bell: (u64, Doorbell),
    /// Deltas the publisher took on (wrote whole, or began and handed the rest back), and
    /// deltas the reactor handed to a connection: each delta of a followed answer is counted
    /// once, by its writer, and `hearth status` shows them, so who writes is observable.
    by_publisher: AtomicU64,
    by_reactor: AtomicU64,
}

/// How far the publisher wrote a lent request's deltas, readable without the table's lock:
/// one more than the ring sequence of the last delta it wrote or began (0: none yet). Stored
/// after each write, so it only grows while the socket is lent.
#[derive(Clone, Debug, Default)]
pub(super) struct WrittenMark(Arc<AtomicU64>);

impl WrittenMark {
    /// Whether the publisher wrote a delta after `seq` of this request: then `seq` was written
    /// whole, and the answer under the lock would be "written, nothing comes back".
    pub(super) fn passed(&self, seq: u64) -> bool {
        // SYNC: pairs with the Release store in `DirectStreams::around`, made after the write
        // of the delta it counts.
        self.0.load(Ordering::Acquire) > seq.saturating_add(1)
    }

    /// The last ring sequence the publisher wrote, whole or in part (`None`: none yet).
    fn through(&self) -> Option<u64> {
        self.0.load(Ordering::Acquire).checked_sub(1)
    }

    fn set(&self, seq: u64) {
        self.0.store(seq.saturating_add(1), Ordering::Release);
    }
}

/// One connection's socket, lent to the publisher for one request, and what it wrote.
#[derive(Debug)]
struct Lent {
    /// A duplicate of the connection's descriptor (non-blocking, as the original); `None` once
    /// the reactor took the socket back while deltas the publisher wrote are still unread.
    stream: Option<UnixStream>,
    /// How far the publisher wrote (the last ring sequence, whole or in part), shared with
    /// the reactor's follow for its claims without the lock.
    mark: WrittenMark,
    /// The publisher stopped: the part of its last delta the peer did not take.
    rest: Option<Vec<u8>>,
    /// The line being written; reused from delta to delta.
    line: Vec<u8>,
}

impl Lent {
    /// Whether the publisher writes this request's next delta.
    fn writing(&self) -> bool {
        self.stream.is_some() && self.rest.is_none()
    }

    /// The bytes to queue before anything else when the socket comes back; `None` when it
    /// came back earlier.
    fn into_rest(self) -> Option<Vec<u8>> {
        self.stream.map(|_| self.rest.unwrap_or_default())
    }
}

/// Who writes a delta the reactor read off the ring.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Claim {
    /// The publisher wrote it (or its first part): the reactor does not.
    pub(super) written: bool,
    /// The socket came back: queue these bytes before anything else.
    pub(super) rest: Option<Vec<u8>>,
}

impl DirectStreams {
    /// No socket lent yet; `reactor_bell` is the reactor's doorbell and its id.
    pub(super) fn new(reactor_bell: (u64, Doorbell)) -> Self {
        Self {
            lent: Mutex::default(),
            entries: AtomicUsize::new(0),
            reactor_bell,
            by_publisher: AtomicU64::new(0),
            by_reactor: AtomicU64::new(0),
        }
    }

    /// Counts a delta the reactor handed to its connection.
    pub(super) fn reactor_wrote(&self) {
        self.by_reactor.fetch_add(1, Ordering::Relaxed);
    }

    /// How many deltas each writer has written since start: `{publisher, reactor}`.
    pub(super) fn counts(&self) -> serde_json::Value {
        serde_json::json!({
            "publisher": self.by_publisher.load(Ordering::Relaxed),
            "reactor": self.by_reactor.load(Ordering::Relaxed),
        })
    }

    /// Whether the publisher writes the deltas of `request_id` (lent, and not stopped).
    pub(super) fn is_writing(&self, request_id: &str) -> bool {
        self.table()
            .is_some_and(|lent| lent.get(request_id).is_some_and(Lent::writing))
    }

    /// Lends `socket` to the publisher for the deltas of `request_id` published from now on,
    /// when the ring feed has read everything published (`position == published()`, checked
    /// while no delta can be published): how far the publisher writes, for claims without the
    /// lock. `None` when it has not: the reactor goes on writing.
    pub(super) fn lend(
        &self,
        request_id: &str,
        socket: &impl AsFd,
        position: u64,
        published: impl Fn() -> u64,
    ) -> Option<WrittenMark> {
        let mut lent = self.lent.lock();
        if lent.contains_key(request_id) || published() != position {
            return None;
        }
        let fd = socket.as_fd().try_clone_to_owned().ok()?;
        let mark = WrittenMark::default();
        lent.insert(
            request_id.to_owned(),
            Lent {
                stream: Some(UnixStream::from(fd)),
                mark: mark.clone(),
                rest: None,
                line: Vec::new(),
            },
        );
        self.count(&lent);
        Some(mark)
    }

    /// Whether any request is in the table (exact on the reactor's thread, see `entries`).
    fn any_lent(&self) -> bool {
        self.entries.load(Ordering::Relaxed) > 0
    }

    /// The table, locked, for the reactor's reads and removals; `None` without the lock when
    /// it holds no request.
    fn table(&self) -> Option<MutexGuard<'_, HashMap<String, Lent>>> {
        self.any_lent().then(|| self.lent.lock())
    }

    /// Stores the table's size; called under its lock after every insert or removal.
    fn count(&self, lent: &HashMap<String, Lent>) {
        self.entries.store(lent.len(), Ordering::Relaxed);
    }

    /// Who writes the delta `seq` of `request_id` (see [`Claim`]). The reactor claims a
    /// request's deltas in ring order, possibly long after the publisher wrote them (it is not
    /// woken for them): a delta up to the last one the publisher wrote is the publisher's, and
    /// the socket comes back (with the rest of a half-written line) when the reactor reaches
    /// that last one, or passes it.
    pub(super) fn claim(&self, request_id: &str, seq: u64) -> Claim {
        let theirs_alone = Claim {
            written: false,
            rest: None,
        };
        let Some(mut lent) = self.table() else {
            return theirs_alone;
        };
        let Some(entry) = lent.get(request_id) else {
            return theirs_alone;
        };
        let through = entry.mark.through();
        let written = through.is_some_and(|t| seq <= t);
        let last = through.is_none_or(|t| seq >= t);
        if !last || (written && entry.writing()) {
            return Claim {
                written,
                rest: None,
            };
        }
        // Nothing after this delta is the publisher's (or, defensively, it never saw this one).
        let entry = lent.remove(request_id).expect("looked up above");
        self.count(&lent);
        Claim {
            written,
            rest: entry.into_rest(),
        }
    }

    /// Takes the socket of `request_id` back, if it is lent: the bytes to queue first. What the
    /// publisher wrote stays known until the reactor has read it (see [`DirectStreams::claim`]).
    pub(super) fn end(&self, request_id: &str) -> Option<Vec<u8>> {
        let mut lent = self.table()?;
        let entry = lent.get_mut(request_id)?;
        let rest = entry
            .stream
            .take()
            .map(|_| entry.rest.take().unwrap_or_default());
        if entry.mark.through().is_none() {
            lent.remove(request_id);
            self.count(&lent);
        }
        rest
    }

    /// [`DirectStreams::end`], and forgets the request: for a request whose deltas have all
    /// been read, or whose connection is gone.
    pub(super) fn forget(&self, request_id: &str) -> Option<Vec<u8>> {
        let mut lent = self.table()?;
        let entry = lent.remove(request_id)?;
        self.count(&lent);
        entry.into_rest()
    }
}

impl DeltaTap for DirectStreams {
    fn around(
        &self,
        kind: EventKind,
        delta: &Delta<'_>,
        publish: &mut dyn FnMut(Option<u64>) -> Option<u64>,
    ) {
        // Held across the publication: the reactor never sees a delta before its write is done.
        let mut lent = self.lent.lock();
        let writing = lent.get(delta.request_id).is_some_and(Lent::writing);
        let Some(seq) = publish(writing.then_some(self.reactor_bell.0)) else {
            return;
        };
        let Some(entry) = lent.get_mut(delta.request_id).filter(|_| writing) else {
            return;
        };
        let Some(stream) = entry.stream.as_mut() else {
            return;
        };
        entry.line.clear();
        DeltaLine {
            content: delta.content,
            reasoning: kind == EventKind::ReasoningDelta,
            reset: delta.reset,
        }
        .write_to(&mut entry.line);
        let written = write_some(stream, &entry.line);
        // Its delta from here on, even unwritten (the reactor then sends the rest it hands back).
        if written.is_ok() {
            self.by_publisher.fetch_add(1, Ordering::Relaxed);
        }
        match written {
            Ok(sent) if sent == entry.line.len() => {
                entry.mark.set(seq);
            }
            Ok(sent) => {
                entry.mark.set(seq);
                entry.rest = Some(entry.line[sent..].to_vec());
                self.reactor_bell.1.ring();
            }
            // Not written: the reactor writes it, meets the error and closes the connection.
            Err(_) => {
                entry.rest = Some(Vec::new());
                self.reactor_bell.1.ring();
            }
        }
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
