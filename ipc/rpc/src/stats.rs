//! Counters of what a connection received and refused, for logs, health and tests.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of a connection's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames read, good or bad.
    pub frames_in: u64,
    /// Frames rejected as not UTF-8, not JSON or not a message (each answered with an error).
    pub bad_frames: u64,
    /// Frames skipped for exceeding the frame limit (each answered with an error).
    pub oversize_frames: u64,
    /// Responses whose id matched no pending call (a late answer to a timed-out call), dropped.
    pub unknown_responses: u64,
    /// Error responses without an id: the peer rejecting one of our frames.
    pub peer_errors: u64,
    /// Incoming requests refused as busy because the in-flight bound was reached.
    pub busy_rejections: u64,
    /// Handlers that panicked (each answered with an internal error).
    pub panics: u64,
    /// Calls whose caller read its own answer off the stream (no hand-off between threads).
    pub own_answers: u64,
}

/// The live counters; relaxed, because each is an independent tally read only for reporting.
#[derive(Default)]
pub(crate) struct Counters {
    pub frames_in: AtomicU64,
    pub bad_frames: AtomicU64,
    pub oversize_frames: AtomicU64,
    pub unknown_responses: AtomicU64,
    pub peer_errors: AtomicU64,
    pub busy_rejections: AtomicU64,
    pub panics: AtomicU64,
    pub own_answers: AtomicU64,
}

impl Counters {
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            frames_in: get(&self.frames_in),
            bad_frames: get(&self.bad_frames),
            oversize_frames: get(&self.oversize_frames),
            unknown_responses: get(&self.unknown_responses),
            peer_errors: get(&self.peer_errors),
            busy_rejections: get(&self.busy_rejections),
            panics: get(&self.panics),
            own_answers: get(&self.own_answers),
        }
    }
}
