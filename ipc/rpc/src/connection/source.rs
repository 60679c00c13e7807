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
}

impl Timed {
    pub fn new(inner: Box<dyn Source>) -> Timed {
        Timed {
            inner,
            deadline: None,
        }
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
            let mut fds = [PollFd::new(self.inner.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, timeout) {
                Ok(0) => continue,
                Ok(_) => return Ok(()),
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some((deadline, slot)) = &self.deadline {
            self.ready_by(*deadline, slot)?;
        }
        self.inner.read(buf)
    }
}
