//! What the scheduler's operations hand back to the caller.

use std::fmt;

use super::task::{Task, TaskId};

/// The ready queue is full; the input is handed back so the caller can give it its
/// `queue_full` skipped reply (every task gets exactly one terminal reply).
#[derive(thiserror::Error)]
#[error("ready queue full")]
pub struct QueueFull<I>(pub I);

impl<I> QueueFull<I> {
    /// The input that did not fit.
    pub fn into_inner(self) -> I {
        self.0
    }
}

impl<I> fmt::Debug for QueueFull<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("QueueFull(..)")
    }
}

/// The outcome of [`Scheduler::register_interrupt`](super::Scheduler::register_interrupt).
///
/// `dropped` is an interrupt evicted by the overflow rule to make room (the oldest entry of
/// the lowest non-empty level); the caller owes it a `queue_full` skipped reply.
#[derive(Debug, PartialEq)]
pub enum Registered<I> {
    /// The interrupt took the immediate slot and the scheduler is armed: the caller cancels
    /// the in-flight LLM call so the running task reaches its next safe point quickly.
    Preempted {
        /// The interrupt's task id.
        id: TaskId,
        /// A task dropped to make room, owed a reply.
        dropped: Option<Task<I>>,
    },
    /// The interrupt waits in its level queue; the caller wakes an idle scheduler.
    Queued {
        /// The interrupt's task id.
        id: TaskId,
        /// A task dropped to make room, owed a reply.
        dropped: Option<Task<I>>,
    },
}

impl<I> Registered<I> {
    /// The interrupt's task id.
    pub fn id(&self) -> TaskId {
        match self {
            Registered::Preempted { id, .. } | Registered::Queued { id, .. } => *id,
        }
    }

    /// Whether the interrupt preempts the running task.
    pub fn preempted(&self) -> bool {
        matches!(self, Registered::Preempted { .. })
    }

    /// The task dropped to make room, if any.
    pub fn into_dropped(self) -> Option<Task<I>> {
        match self {
            Registered::Preempted { dropped, .. } | Registered::Queued { dropped, .. } => dropped,
        }
    }
}

/// The task [`Scheduler::next`](super::Scheduler::next) selected; it is now running.
#[derive(Debug, PartialEq)]
pub enum Next<I, F> {
    /// Start a task from the beginning.
    New(Task<I>),
    /// Continue a suspended task from its saved frame.
    Resume(Task<I>, F),
}

impl<I, F> Next<I, F> {
    /// The selected task.
    pub fn task(&self) -> &Task<I> {
        match self {
            Next::New(t) | Next::Resume(t, _) => t,
        }
    }
}

/// A task that was still waiting when the scheduler was drained at shutdown.
#[derive(Debug, PartialEq)]
pub enum Drained<I, F> {
    /// Never started (ready queue, an interrupt queue or the immediate slot).
    Pending(Task<I>),
    /// Suspended, with its saved frame.
    Suspended(Task<I>, F),
}

impl<I, F> Drained<I, F> {
    /// The drained task.
    pub fn task(&self) -> &Task<I> {
        match self {
            Drained::Pending(t) | Drained::Suspended(t, _) => t,
        }
    }

    /// The task and its frame, if it had been suspended.
    pub fn into_parts(self) -> (Task<I>, Option<F>) {
        match self {
            Drained::Pending(t) => (t, None),
            Drained::Suspended(t, f) => (t, Some(f)),
        }
    }
}
