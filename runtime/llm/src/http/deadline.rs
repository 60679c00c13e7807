//! Deadlines of a streamed call, enforced on the call's own socket reads (no timer thread): the
//! first event must come within `first_byte` of sending the request, each further one within
//! `idle` of the one before, and the whole stream must end within `total`.
//!
//! Progress is counted in complete events, not bytes, so a server dripping one byte a second
//! still runs into the idle limit. The reader of the body reports each event with
//! [`StreamProgress::mark`]; the socket layer asks [`ReadDeadline::remaining`] before every read
//! and arms the socket's read timeout to match, so a read blocked on a silent server returns when
//! the deadline passes.

use super::error::HttpError;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The three limits of one streamed call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamTimeouts {
    /// From sending the request to the first complete event of the body (the response head
    /// included): how long the model may take to its first token.
    pub first_byte: Duration,
    /// The longest gap between two complete events.
    pub idle: Duration,
    /// From sending the request to the end of the stream.
    pub total: Duration,
}

impl StreamTimeouts {
    /// For a remote API: 60 s to the first event, 30 s between events, 10 min in all.
    pub const REMOTE: Self = Self {
        first_byte: Duration::from_secs(60),
        idle: Duration::from_secs(30),
        total: Duration::from_secs(10 * 60),
    };

    /// For a model on this machine (the embedded server, a local Ollama): a small board
    /// prefilling a long prompt takes minutes to its first token, so 5 min to the first event,
    /// 2 min between events, 30 min in all.
    pub const LOCAL: Self = Self {
        first_byte: Duration::from_secs(5 * 60),
        idle: Duration::from_secs(2 * 60),
        total: Duration::from_secs(30 * 60),
    };
}

/// Which limit the next deadline stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    FirstByte = 0,
    Idle = 1,
    Total = 2,
    End = 3,
}

/// The deadline of the next event, shared by the body reader (which moves it) and the socket
/// transport (which enforces it). Both run on the calling thread; the atomics only make the
/// handle shareable, so every access is Relaxed.
#[derive(Debug)]
pub(super) struct ReadDeadline {
    start: Instant,
    timeouts: StreamTimeouts,
    /// Nanoseconds after `start` by which the next event is due.
    due_ns: AtomicU64,
    phase: AtomicU8,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl ReadDeadline {
    /// Starts the clock: the request is about to be sent.
    pub(super) fn start(timeouts: StreamTimeouts) -> Arc<Self> {
        let deadline = Self {
            start: Instant::now(),
            timeouts,
            due_ns: AtomicU64::new(0),
            phase: AtomicU8::new(Phase::FirstByte as u8),
        };
        deadline.set_due(ns(timeouts.first_byte), Phase::FirstByte);
        Arc::new(deadline)
    }

    /// The next due time, capped by the total limit.
    fn set_due(&self, due_ns: u64, phase: Phase) {
        let total = ns(self.timeouts.total);
        let (due, phase) = if due_ns >= total {
            (total, Phase::Total)
        } else {
            (due_ns, phase)
        };
        self.due_ns.store(due, Relaxed);
        self.phase.store(phase as u8, Relaxed);
    }

    /// One complete event arrived: the next is due `idle` from now.
    fn progress(&self) {
        let now = ns(self.start.elapsed());
        self.set_due(now.saturating_add(ns(self.timeouts.idle)), Phase::Idle);
    }

    /// The answer is complete: the body's own end is due `within` from now.
    fn end(&self, within: Duration) {
        let now = ns(self.start.elapsed());
        self.set_due(now.saturating_add(ns(within)), Phase::End);
    }

    /// Time left before the next event is due, or the timeout once it is overdue.
    pub(super) fn remaining(&self) -> Result<Duration, HttpError> {
        let due = Duration::from_nanos(self.due_ns.load(Relaxed));
        let left = due.saturating_sub(self.start.elapsed());
        if !left.is_zero() {
            return Ok(left);
        }
        let (what, limit, since) = match self.phase.load(Relaxed) {
            0 => ("no first event", self.timeouts.first_byte, "the request"),
            1 => ("no event", self.timeouts.idle, "the previous one"),
            3 => {
                return Err(HttpError::Timeout(
                    "the body did not end after its end marker".to_owned(),
                ));
            }
            _ => ("stream not finished", self.timeouts.total, "the request"),
        };
        Err(HttpError::Timeout(format!(
            "{what} within {} ms of {since}",
            limit.as_millis()
        )))
    }
}

/// The reader's side of a streamed call's deadlines: marks each complete event. A no-op for a
/// call made without [`StreamTimeouts`].
#[derive(Clone, Debug, Default)]
pub struct StreamProgress(Option<Arc<ReadDeadline>>);

impl StreamProgress {
    pub(super) fn new(deadline: Option<Arc<ReadDeadline>>) -> Self {
        Self(deadline)
    }

    /// One complete event (an SSE event, an NDJSON line) arrived: restarts the idle clock.
    pub fn mark(&self) {
        if let Some(deadline) = &self.0 {
            deadline.progress();
        }
    }

    /// The answer's end marker arrived: reads after it may wait `within` at most (capped by
    /// the total limit) for the body's end, which lets the connection be kept for the next
    /// call. `false` for a call without limits, whose reads could wait without bound.
    pub fn end_within(&self, within: Duration) -> bool {
        match &self.0 {
            Some(deadline) => {
                deadline.end(within);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(first: u64, idle: u64, total: u64) -> StreamTimeouts {
        StreamTimeouts {
            first_byte: Duration::from_millis(first),
            idle: Duration::from_millis(idle),
            total: Duration::from_millis(total),
        }
    }

    #[test]
    fn phases_move_from_first_event_to_idle_and_are_capped_by_total() {
        let d = ReadDeadline::start(limits(40, 1_000, 60_000));
        assert!(d.remaining().expect("fresh") <= Duration::from_millis(40));
        std::thread::sleep(Duration::from_millis(45));
        let err = d.remaining().expect_err("first event overdue");
        assert!(err.to_string().contains("no first event"), "{err}");
        d.progress();
        assert!(d.remaining().expect("idle") > Duration::from_millis(900));

        let capped = ReadDeadline::start(limits(1_000, 1_000, 30));
        assert!(capped.remaining().expect("fresh") <= Duration::from_millis(30));
        std::thread::sleep(Duration::from_millis(35));
        capped.progress();
        let err = capped.remaining().expect_err("total passed");
        assert!(err.to_string().contains("stream not finished"), "{err}");

        let ending = ReadDeadline::start(limits(1_000, 60_000, 60_000));
        ending.progress();
        ending.end(Duration::from_millis(20));
        assert!(ending.remaining().expect("end wait") <= Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(25));
        let err = ending.remaining().expect_err("end overdue");
        assert!(err.to_string().contains("did not end"), "{err}");
    }
}
