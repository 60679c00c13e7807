//! The connection's read side: a file descriptor read directly, with an optional deadline.
//!
//! A caller that reads the pipe itself while it waits for its answer must still honour its
//! timeout, so before each read it polls the descriptor until the deadline; the connection's own
//! reading threads read without one (they block until the peer writes or closes). Polling needs
//! the bytes to be in the kernel's pipe, not in a user-space buffer, so the reader handed to
//! [`connect`](super::connect) must not buffer (a raw pipe, a child's stdout, a duplicate of
//! stdin's descriptor — not `std::io::Stdin`, whose buffer poll cannot see).

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::slot::Slot;

/// The longest single poll: a caller whose call is failed by [`Peer::close`](super::Peer::close)
/// while the pipe stays open (a grandchild holds it) notices within this.
const POLL_SLICE: Duration = Duration::from_millis(20);

/// Pause instructions between two non-blocking polls of a spinning read: a poll is a syscall
/// of ~0.3 µs, a pause ~40 ns on current cores, so the spin mostly waits, not enters the kernel.
const SPIN_PAUSES: u32 = 8;

/// What a connection reads from: bytes with a descriptor to poll.
pub trait Source: Read + AsFd + Send {}

impl<T: Read + AsFd + Send> Source for T {}

/// The boxed source and the deadline its next read must meet.
pub(super) struct Timed {
    inner: Box<dyn Source>,
    /// `Some` while a caller reads: a read that would wait past the deadline fails with
    /// `TimedOut`, and so does one that waits while the caller's slot gets its answer
    /// from elsewhere (a close).
    pub deadline: Option<(Instant, Arc<Slot>)>,
    /// How long a read looks for bytes without sleeping before it blocks (see [`spin_until_ready`]).
    spin: Duration,
}

impl Timed {
    pub fn new(inner: Box<dyn Source>, spin: Duration) -> Timed {
        Timed {
            inner,
            deadline: None,
            spin,
        }
    }

    /// Looks for readable bytes with non-blocking polls for up to `self.spin`; `true` once
    /// there are some. A zero-timeout poll joins no wait queue, so while this looks, the
    /// peer's write wakes nobody and this thread is never scheduled out and back in: those
    /// two costs are most of a pipe round trip's latency. Bounded, so an idle connection
    /// spends at most one spin after each frame.
    fn spin_until_ready(&self, slot: Option<&Slot>) -> bool {
        if self.spin.is_zero() {
            return false;
        }
        let start = Instant::now();
        loop {
            if matches!(self.poll(PollTimeout::ZERO), Ok(true)) {
                return true;
            }
            if slot.is_some_and(Slot::is_filled) || start.elapsed() >= self.spin {
                return false;
            }
            for _ in 0..SPIN_PAUSES {
                std::hint::spin_loop();
            }
        }
    }

    /// Whether the descriptor became readable (data, end of stream or an error) within `timeout`.
    fn poll(&self, timeout: PollTimeout) -> nix::Result<bool> {
        let mut fds = [PollFd::new(self.inner.as_fd(), PollFlags::POLLIN)];
        poll(&mut fds, timeout).map(|n| n > 0)
    }

    /// Waits until the descriptor is readable (data, end of stream or an error) or the
    /// deadline passes.
    fn ready_by(&self, deadline: Instant, slot: &Slot) -> io::Result<()> {
        loop {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .min(POLL_SLICE);
            if left.is_zero() || slot.is_filled() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            // poll counts whole milliseconds: round up so a short wait is not a busy loop.
            let ms = left.as_micros().div_ceil(1_000).min(i32::MAX as u128);
            let timeout = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
            match self.poll(timeout) {
                Ok(false) => continue,
                Ok(true) => return Ok(()),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let slot = self.deadline.as_ref().map(|(_, slot)| &**slot);
        if !self.spin_until_ready(slot)
            && let Some((deadline, slot)) = &self.deadline
        {
            self.ready_by(*deadline, slot)?;
        }
        self.inner.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const READS: u64 = 50;
    /// How late each byte comes: far longer than the reader's own path, so a reader that does
    /// not spin always finds the pipe empty and sleeps.
    const LATE: Duration = Duration::from_micros(300);

    /// Times the calling thread gave up the CPU of its own accord (slept) so far.
    fn own_sleeps() -> u64 {
        std::fs::read_to_string("/proc/thread-self/status")
            .expect("thread status")
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
            .expect("voluntary_ctxt_switches")
    }

    /// The reading thread's sleeps over `READS` one-byte reads, each byte written `LATE` after
    /// the reader asked for it; `deadline` reads as a caller waiting for its answer does.
    fn sleeps_over_late_bytes(spin: Duration, deadline: bool) -> u64 {
        let (read, mut write) = std::io::pipe().expect("pipe");
        let (ask, asked) = std::sync::mpsc::channel::<()>();
        let writer = std::thread::spawn(move || {
            while asked.recv().is_ok() {
                std::thread::sleep(LATE);
                write.write_all(b"x").expect("write");
            }
        });
        let mut timed = Timed::new(Box::new(read), spin);
        let slot = Arc::new(Slot::default());
        if deadline {
            timed.deadline = Some((Instant::now() + Duration::from_secs(30), slot));
        }
        let before = own_sleeps();
        for _ in 0..READS {
            ask.send(()).expect("writer alive");
            let mut byte = [0u8; 1];
            assert_eq!(timed.read(&mut byte).expect("read"), 1);
        }
        let sleeps = own_sleeps() - before;
        drop(ask);
        writer.join().expect("writer");
        sleeps
    }

    #[test]
    fn a_read_whose_bytes_land_within_the_spin_never_sleeps() {
        hearth_testkit::within(Duration::from_secs(60), || {
            for deadline in [false, true] {
                // A spin far longer than the wait, so a loaded test machine still writes in it.
                let spinning = sleeps_over_late_bytes(Duration::from_millis(20), deadline);
                // A preemption can show as a switch; a sleep per read cannot hide in this bound.
                assert!(
                    spinning * 5 < READS,
                    "{spinning} sleeps over {READS} reads with the spin on (deadline: {deadline})"
                );
                let sleeping = sleeps_over_late_bytes(Duration::ZERO, deadline);
                assert!(
                    sleeping >= READS,
                    "{sleeping} sleeps over {READS} reads with the spin off (deadline: {deadline})"
                );
            }
        });
    }

    #[test]
    fn a_spin_gives_up_when_the_callers_answer_came_from_elsewhere() {
        let (read, _write) = std::io::pipe().expect("pipe");
        let mut timed = Timed::new(Box::new(read), Duration::from_secs(30));
        let slot = Arc::new(Slot::default());
        slot.fill(super::super::slot::Answer::Closed);
        timed.deadline = Some((Instant::now() + Duration::from_secs(30), slot));
        let start = Instant::now();
        let err = timed.read(&mut [0u8; 1]).expect_err("nothing to read");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn the_default_spins_only_where_the_peer_can_run_meanwhile() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let spin = crate::ConnectionConfig::default().read_spin;
        assert_eq!(
            spin,
            if cores > 1 {
                crate::DEFAULT_READ_SPIN
            } else {
                Duration::ZERO
            }
        );
    }
}
