//! The scheduling contract between the engine and a node: one trait, one poll result, one context.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::waker::{Wake, WorkerSignal};

/// A unit of the dataflow graph, owned by one worker for its whole life.
///
/// A node never blocks: `poll` does the work that is ready (drain inputs with
/// [`EdgeRx::try_recv`](super::EdgeRx::try_recv), emit with [`EdgeTx::try_send`](super::EdgeTx::try_send),
/// keeping a value that came back `Full` for the next poll) and returns. Work that can only block runs
/// on a service thread owned by the node, which reports back through an edge or a [`Wake`].
///
/// The worker may poll a node at any time, including before a deadline it asked for, so `poll` must
/// tolerate finding nothing to do.
pub trait Node: Send + 'static {
    /// Stable name, used in panic reports and the shutdown report.
    fn name(&self) -> &str;

    /// Does the work that is ready without blocking and says whether anything happened.
    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll;

    /// Called after a panic escaped `poll`: restore invariants (fail the in-flight work, answer its
    /// caller) so polling can resume.
    fn restart(&mut self, panic_message: &str) {
        let _ = panic_message;
    }

    /// Called once when the engine shuts down, after the last poll.
    fn shutdown(&mut self) {}
}

impl<N: Node + ?Sized> Node for Box<N> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn poll(&mut self, cx: &mut NodeCx<'_>) -> Poll {
        (**self).poll(cx)
    }

    fn restart(&mut self, panic_message: &str) {
        (**self).restart(panic_message);
    }

    fn shutdown(&mut self) {
        (**self).shutdown();
    }
}

/// What a poll achieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Poll {
    /// Made progress; more may be ready, so the worker will not park.
    Busy,
    /// Nothing more to do until an input arrives, a [`Wake`] fires, or `until` passes.
    Idle {
        /// The latest time the node wants to be polled again (`None`: only on input).
        until: Option<Instant>,
    },
}

impl Poll {
    /// Idle until an input arrives or someone wakes the worker.
    pub const IDLE: Poll = Poll::Idle { until: None };

    /// Idle, but poll again no later than `deadline`.
    pub fn idle_until(deadline: Instant) -> Poll {
        Poll::Idle {
            until: Some(deadline),
        }
    }
}

/// Identity of a placed node, unique within one engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// The raw number (placement order, from 0).
    pub fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node#{}", self.0)
    }
}

/// One clock reading per poll pass, taken only if a node (or the worker) asks for it.
#[derive(Default)]
pub(crate) struct PassClock(Cell<Option<Instant>>);

impl PassClock {
    pub(crate) fn now(&self) -> Instant {
        match self.0.get() {
            Some(now) => now,
            None => {
                let now = Instant::now();
                self.0.set(Some(now));
                now
            }
        }
    }
}

/// What a node sees of the engine while it is polled.
pub struct NodeCx<'a> {
    pub(crate) id: NodeId,
    pub(crate) name: &'a str,
    pub(crate) clock: &'a PassClock,
    pub(crate) shutting_down: bool,
    pub(crate) signal: &'a Arc<WorkerSignal>,
}

impl NodeCx<'_> {
    /// The id of the node being polled.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The name of the node being polled.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Index of the worker that owns this node.
    pub fn worker(&self) -> usize {
        self.signal.worker()
    }

    /// The current time, read at most once per poll pass: cheap to call repeatedly, and the same
    /// for every node of the pass.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// True during the final poll pass(es) before shutdown: flush, answer pending callers, accept
    /// no new long work.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// A handle that wakes this node's worker; give it to the node's service threads.
    pub fn waker(&self) -> Wake {
        Wake::new(Arc::clone(self.signal))
    }
}

impl fmt::Debug for NodeCx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeCx")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("worker", &self.signal.worker())
            .field("shutting_down", &self.shutting_down)
            .finish()
    }
}
