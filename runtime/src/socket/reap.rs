//! Finding connections whose peer has hung up before the reactor has handled their hang-up.
//!
//! A hang-up reaches the reactor as an event, handled in event order, and an accept loop runs
//! the new clients' lines inline, so a slot can still be held by a client that is long gone when
//! the next one is counted against the cap. One `poll(2)` with a zero timeout asks the kernel
//! directly; it consumes no event, so the edge-triggered registrations lose nothing.

use super::connection::Connection;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use std::collections::HashMap;
use std::os::fd::AsFd;

/// Tokens of the connections that are finished or whose peer closed both directions (`POLLHUP`,
/// reported whatever the requested events; a half-closed peer still waiting for its answer is
/// not one of them).
pub(super) fn gone(conns: &HashMap<usize, Connection>) -> Vec<usize> {
    let tokens: Vec<usize> = conns.keys().copied().collect();
    let mut fds: Vec<PollFd<'_>> = tokens
        .iter()
        .map(|t| PollFd::new(conns[t].stream.as_fd(), PollFlags::empty()))
        .collect();
    if let Err(e) = poll(&mut fds, PollTimeout::ZERO) {
        tracing::debug!("cannot poll the clients for hang-ups: {e}");
        return tokens
            .into_iter()
            .filter(|t| conns[t].is_finished())
            .collect();
    }
    tokens
        .iter()
        .zip(&fds)
        .filter(|(t, fd)| {
            conns[*t].is_finished()
                || fd
                    .revents()
                    .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR))
        })
        .map(|(t, _)| *t)
        .collect()
}
