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
//! Bytes therefore reach a client in ring order from one writer at a time. The protocol itself
//! (the table, the mark, the claims) is `hearth_lend`'s, model-checked there with loom; this
//! module is its socket side: the descriptor lent, the line written, the doorbell rung.

use super::protocol::DeltaLine;
use super::write_some::write_some;
use hearth_ipc::{Doorbell, EventKind};
use hearth_kernel::events::{Delta, DeltaTap};
pub(super) use hearth_lend::{Claim, WrittenMark};
use hearth_lend::{LendTable, Wrote};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};

/// The requests whose deltas the publisher writes, by request id.
#[derive(Debug)]
pub(super) struct DirectStreams {
    /// Each lent request's socket (a duplicate of the connection's descriptor, non-blocking
    /// as the original) and how far the publisher wrote.
    table: LendTable<UnixStream>,
    /// The reactor's doorbell and its id in the publisher's list: spared while the publisher
    /// writes, rung when it stops.
    reactor_bell: (u64, Doorbell),
    /// Deltas the publisher took on (wrote whole, or began and handed the rest back), and
    /// deltas the reactor handed to a connection: each delta of a followed answer is counted
    /// once, by its writer, and `hearth status` shows them, so who writes is observable.
    by_publisher: AtomicU64,
    by_reactor: AtomicU64,
}

impl DirectStreams {
    /// No socket lent yet; `reactor_bell` is the reactor's doorbell and its id.
    pub(super) fn new(reactor_bell: (u64, Doorbell)) -> Self {
        Self {
            table: LendTable::new(),
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
        self.table.is_writing(request_id)
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
        self.table.lend(request_id, position, published, || {
            let fd = socket.as_fd().try_clone_to_owned().ok()?;
            Some(UnixStream::from(fd))
        })
    }

    /// Who writes the delta `seq` of `request_id`, without the lock when the lent socket's
    /// `mark` answers (see [`LendTable::claim_by`]).
    pub(super) fn claim(&self, mark: Option<&WrittenMark>, request_id: &str, seq: u64) -> Claim {
        self.table.claim_by(mark, request_id, seq)
    }

    /// Takes the socket of `request_id` back, if it is lent: the bytes to queue first (see
    /// [`LendTable::end`]).
    pub(super) fn end(&self, request_id: &str) -> Option<Vec<u8>> {
        self.table.end(request_id)
    }

    /// [`DirectStreams::end`], and forgets the request: for a request whose deltas have all
    /// been read, or whose connection is gone.
    pub(super) fn forget(&self, request_id: &str) -> Option<Vec<u8>> {
        self.table.forget(request_id)
    }
}

impl DeltaTap for DirectStreams {
    fn around(
        &self,
        kind: EventKind,
        delta: &Delta<'_>,
        publish: &mut dyn FnMut(Option<u64>) -> Option<u64>,
    ) {
        // The table holds its lock across the publication: the reactor never sees a delta
        // before its write is done.
        let wrote = self.table.publish(
            delta.request_id,
            |writing| publish(writing.then_some(self.reactor_bell.0)),
            |stream, line| {
                DeltaLine {
                    content: delta.content,
                    reasoning: kind == EventKind::ReasoningDelta,
                    reset: delta.reset,
                }
                .write_to(line);
                write_some(stream, line)
            },
        );
        if matches!(wrote, Wrote::Whole | Wrote::Short) {
            self.by_publisher.fetch_add(1, Ordering::Relaxed);
        }
        // Stopped: the reactor takes the socket back with the rest, or (not written) writes
        // the delta itself, meets the error and closes the connection.
        if matches!(wrote, Wrote::Short | Wrote::Failed) {
            self.reactor_bell.1.ring();
        }
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
