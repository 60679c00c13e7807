//! The owner's two queues. Acceptances from every client share one lane; the kernel's own
//! writes (replies, context events, frames, memory passes) have a lane of their own that the
//! owner always reads first. A flood of clients can fill the shared lane, and a sender there
//! waits — that is the back-pressure clients feel as a later `accepted` — but the kernel's
//! worker never waits behind them: its lane holds only what running tasks write, a few ops per
//! turn, so it is full only when the disk itself has stalled.

use crossbeam_channel::{Receiver, SendError, Sender, select_biased};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::op::Op;

/// The bound of the kernel's lane, in ops.
pub const KERNEL_LANE: usize = 1024;

/// The sending ends, held by every [`Durable`](super::Durable) handle.
#[derive(Clone)]
pub(super) struct LaneSenders {
    /// Acceptances, flushes, closes and maintenance work.
    shared: Sender<Op>,
    /// What the kernel and its services write while tasks run.
    kernel: Sender<Op>,
    /// Set by the owner once it has closed the store. A message sent after that would sit in
    /// the lane until the last handle drops (a channel keeps its buffer while senders remain),
    /// so its sender would wait for an answer that never comes.
    closed: Arc<AtomicBool>,
}

// The refused op goes back whole so its sender can answer it without the journal; it lives
// on the stack for one return.
#[allow(clippy::result_large_err)]
impl LaneSenders {
    /// Sends on the shared lane; the op comes back when the owner has closed the store.
    pub(super) fn shared(&self, op: Op) -> Result<(), SendError<Op>> {
        self.send(&self.shared, op)
    }

    /// Sends on the kernel's lane; the op comes back when the owner has closed the store.
    pub(super) fn kernel(&self, op: Op) -> Result<(), SendError<Op>> {
        self.send(&self.kernel, op)
    }

    /// Whether the owner has closed the store.
    pub(super) fn is_closed(&self) -> bool {
        // SYNC: pairs with the Release store in `Lanes::mark_closed`.
        self.closed.load(Ordering::Acquire)
    }

    /// The shared lane's queued ops (for tests that watch it fill).
    #[cfg(test)]
    pub(super) fn shared_len(&self) -> usize {
        self.shared.len()
    }

    fn send(&self, lane: &Sender<Op>, op: Op) -> Result<(), SendError<Op>> {
        if self.is_closed() {
            return Err(SendError(op));
        }
        lane.send(op)
    }
}

/// The receiving ends, held by the owner thread.
pub(super) struct Lanes {
    shared: Receiver<Op>,
    kernel: Receiver<Op>,
    closed: Arc<AtomicBool>,
}

/// What waiting on both lanes produced.
pub(super) enum Wait {
    Op(Box<Op>),
    Idle,
    Closed,
}

/// Both lanes: `shared` bounded at `shared_bound` ops, the kernel's at [`KERNEL_LANE`].
pub(super) fn lanes(shared_bound: usize) -> (LaneSenders, Lanes) {
    let (shared_tx, shared) = crossbeam_channel::bounded(shared_bound);
    let (kernel_tx, kernel) = crossbeam_channel::bounded(KERNEL_LANE);
    let closed = Arc::new(AtomicBool::new(false));
    (
        LaneSenders {
            shared: shared_tx,
            kernel: kernel_tx,
            closed: closed.clone(),
        },
        Lanes {
            shared,
            kernel,
            closed,
        },
    )
}

impl Lanes {
    /// From now on handles are refused at once instead of queueing; set before the close is
    /// answered, so a caller told "closed" never sends into a lane nobody reads.
    pub(super) fn mark_closed(&self) {
        // SYNC: pairs with the Acquire load in `LaneSenders::is_closed`.
        self.closed.store(true, Ordering::Release);
    }

    /// The next queued op without waiting, the kernel's lane first. An op that must see
    /// everything sent before it (a flush, a close, work on the connection) is only returned
    /// after the kernel lane's current ops, which go to `carry` ahead of it: a sender's writes
    /// on the kernel lane are in the store before its flush is answered.
    pub(super) fn try_next(&self, carry: &mut VecDeque<Op>) -> Option<Op> {
        if let Some(op) = carry.pop_front() {
            return Some(op);
        }
        if let Ok(op) = self.kernel.try_recv() {
            return Some(op);
        }
        let op = self.shared.try_recv().ok()?;
        Some(self.behind_kernel_writes(op, carry))
    }

    /// Waits for the next op on either lane (the kernel's wins a tie), at most `idle` when
    /// given. `Closed` once every handle is gone and both lanes are empty.
    pub(super) fn wait(&self, idle: Option<Duration>, carry: &mut VecDeque<Op>) -> Wait {
        if let Some(op) = self.try_next(carry) {
            return Wait::Op(Box::new(op));
        }
        let got = match idle {
            Some(idle) => select_biased! {
                recv(self.kernel) -> op => op.map(Some),
                recv(self.shared) -> op => op.map(|op| Some(self.behind_kernel_writes(op, carry))),
                default(idle) => Ok(None),
            },
            None => select_biased! {
                recv(self.kernel) -> op => op.map(Some),
                recv(self.shared) -> op => op.map(|op| Some(self.behind_kernel_writes(op, carry))),
            },
        };
        match got {
            Ok(Some(op)) => Wait::Op(Box::new(op)),
            Ok(None) => Wait::Idle,
            // One lane disconnected means every handle is gone; the other may still hold ops.
            Err(_) => match self.try_next(carry) {
                Some(op) => Wait::Op(Box::new(op)),
                None => Wait::Closed,
            },
        }
    }

    /// Everything still queued, for answering without the journal at the end.
    pub(super) fn drain(&self) -> impl Iterator<Item = Op> + '_ {
        self.kernel.try_iter().chain(self.shared.try_iter())
    }

    fn behind_kernel_writes(&self, op: Op, carry: &mut VecDeque<Op>) -> Op {
        if !op.is_barrier() {
            return op;
        }
        while let Ok(earlier) = self.kernel.try_recv() {
            carry.push_back(earlier);
        }
        if carry.is_empty() {
            return op;
        }
        carry.push_back(op);
        carry.pop_front().expect("carry holds the barrier at least")
    }
}
