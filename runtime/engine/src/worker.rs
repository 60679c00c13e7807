//! One worker thread: polls its nodes round-robin, spins briefly when a pass finds nothing, then
//! parks until an edge, a [`Wake`](super::Wake) or the earliest node deadline wakes it. Every poll
//! runs behind a panic boundary; the thread itself never unwinds.

use std::any::Any;
use std::hint::spin_loop;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use super::node::{Node, NodeCx, NodeId, PassClock, Poll};
use super::pin::pin_current_thread;
use super::report::WorkerReport;
use super::stats::{Counters, StatsCells, WorkerStats};
use super::waker::{WorkerSignal, enter_worker};
use crate::panic::panic_message;
use crate::sync::Parker;

/// Consecutive panics of one node that are retried at once; after that the node waits.
const PANIC_BACKOFF_AFTER: u32 = 3;
/// First wait of a node that keeps panicking; doubles with each further panic.
const PANIC_BACKOFF_BASE: Duration = Duration::from_millis(10);
const PANIC_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// Idle passes between two clock readings while spinning.
const SPIN_CHECK_EVERY: u32 = 16;
/// Bound on the passes run after the shutdown latch, while nodes still report progress.
const FINAL_PASS_LIMIT: usize = 64;

/// Receives `(node_name, panic_message)` for every panic caught at a node boundary.
pub(crate) type PanicHook = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// State every worker of one engine shares.
pub(crate) struct EngineShared {
    shutdown: AtomicBool,
    pub(crate) on_node_panic: PanicHook,
    pub(crate) spin: Duration,
}

impl EngineShared {
    pub(crate) fn new(on_node_panic: PanicHook, spin: Duration) -> Self {
        Self {
            shutdown: AtomicBool::new(false),
            on_node_panic,
            spin,
        }
    }

    pub(crate) fn begin_shutdown(&self) {
        // SYNC: pairs with the Acquire load in `is_shutting_down`: whatever the caller did before
        // shutting down is visible to the final passes.
        self.shutdown.store(true, Ordering::Release);
    }

    fn is_shutting_down(&self) -> bool {
        // SYNC: pairs with the Release store in `begin_shutdown`.
        self.shutdown.load(Ordering::Acquire)
    }
}

/// A node together with the worker's bookkeeping about it.
pub(crate) struct NodeSlot {
    id: NodeId,
    name: String,
    node: Box<dyn Node>,
    consecutive_panics: u32,
    backoff_until: Option<Instant>,
}

impl NodeSlot {
    pub(crate) fn new(id: NodeId, node: Box<dyn Node>) -> Self {
        Self {
            id,
            name: node.name().to_owned(),
            node,
            consecutive_panics: 0,
            backoff_until: None,
        }
    }
}

/// The part of a worker the engine keeps: how to wake it, its counters, and its inbox of nodes
/// placed but not yet adopted.
pub(crate) struct WorkerShared {
    pub(crate) signal: Arc<WorkerSignal>,
    stats: CachePadded<StatsCells>,
    inbox: Mutex<Vec<NodeSlot>>,
    /// Lets the worker skip the inbox lock on every pass.
    inbox_pending: AtomicBool,
}

impl WorkerShared {
    pub(crate) fn new(signal: Arc<WorkerSignal>) -> Self {
        Self {
            signal,
            stats: CachePadded::new(StatsCells::default()),
            inbox: Mutex::new(Vec::new()),
            inbox_pending: AtomicBool::new(false),
        }
    }

    /// Hands a node to the worker; it is adopted on the worker's next pass.
    pub(crate) fn place(&self, slot: NodeSlot) {
        {
            let mut inbox = self.inbox.lock();
            inbox.push(slot);
            // The lock carries the slot itself; the flag is only a hint, ordered by the fences in
            // `notify` / `prepare_park`.
            self.inbox_pending.store(true, Ordering::Relaxed);
        }
        self.signal.notify();
    }

    fn has_inbox(&self) -> bool {
        self.inbox_pending.load(Ordering::Relaxed)
    }

    fn take_inbox(&self) -> Vec<NodeSlot> {
        let mut inbox = self.inbox.lock();
        self.inbox_pending.store(false, Ordering::Relaxed);
        std::mem::take(&mut *inbox)
    }

    pub(crate) fn stats(&self, worker: usize) -> WorkerStats {
        self.stats
            .snapshot(worker, self.signal.wakeups(), self.signal.is_sleeping())
    }
}

/// What one pass over the nodes found.
struct PassOutcome {
    /// Some node made progress, is due, or must be retried after a panic: do not park.
    ready: bool,
    /// Earliest future deadline (node `Idle { until }` or panic back-off).
    deadline: Option<Instant>,
}

fn earliest(current: Option<Instant>, candidate: Instant) -> Option<Instant> {
    Some(current.map_or(candidate, |current| current.min(candidate)))
}

/// The thread-owned half of a worker.
pub(crate) struct Worker {
    index: usize,
    shared: Arc<WorkerShared>,
    engine: Arc<EngineShared>,
    parker: Parker,
    core: Option<usize>,
    nodes: Vec<NodeSlot>,
    counters: Counters,
}

impl Worker {
    pub(crate) fn new(
        index: usize,
        shared: Arc<WorkerShared>,
        engine: Arc<EngineShared>,
        parker: Parker,
        core: Option<usize>,
    ) -> Self {
        Self {
            index,
            shared,
            engine,
            parker,
            core,
            nodes: Vec::new(),
            counters: Counters::default(),
        }
    }

    /// The worker thread's body.
    pub(crate) fn run(mut self) -> WorkerReport {
        if let Some(core) = self.core
            && let Err(error) = pin_current_thread(core)
        {
            tracing::warn!(worker = self.index, core, %error, "cannot pin worker; it runs unpinned");
            self.core = None;
        }
        enter_worker(Arc::clone(&self.shared.signal));

        let mut idle_passes: u32 = 0;
        let mut idle_since = Instant::now();
        while !self.engine.is_shutting_down() {
            if self.shared.has_inbox() {
                self.adopt_inbox();
            }
            if self.pass(false).ready {
                idle_passes = 0;
                continue;
            }
            idle_passes += 1;
            if idle_passes == 1 {
                idle_since = Instant::now();
            }
            let spin_over = self.engine.spin.is_zero()
                || (idle_passes.is_multiple_of(SPIN_CHECK_EVERY)
                    && idle_since.elapsed() >= self.engine.spin);
            if spin_over {
                self.park();
                idle_passes = 0;
            } else {
                spin_loop();
            }
        }
        self.finish()
    }

    /// Parks unless the final check finds work. See the module docs of `waker` for the protocol.
    fn park(&mut self) {
        let signal = Arc::clone(&self.shared.signal);
        signal.park_unless(
            self,
            |worker| {
                if worker.engine.is_shutting_down() || worker.shared.has_inbox() {
                    return None;
                }
                let last = worker.pass(false);
                (!last.ready).then_some(last.deadline)
            },
            |worker, deadline| {
                worker.counters.parks += 1;
                worker.publish();
                match deadline {
                    Some(deadline) => worker.parker.park_deadline(deadline),
                    None => worker.parker.park(),
                }
            },
        );
    }

    fn adopt_inbox(&mut self) {
        let adopted = self.shared.take_inbox();
        self.nodes.extend(adopted);
        self.publish();
    }

    fn publish(&self) {
        self.shared.stats.publish(&self.counters, self.nodes.len());
    }

    /// Polls every node once (skipping those backing off after panics).
    fn pass(&mut self, shutting_down: bool) -> PassOutcome {
        let clock = PassClock::default();
        let mut outcome = PassOutcome {
            ready: false,
            deadline: None,
        };
        for slot in &mut self.nodes {
            if let Some(until) = slot.backoff_until {
                if until > clock.now() {
                    outcome.deadline = earliest(outcome.deadline, until);
                    continue;
                }
                slot.backoff_until = None;
            }
            self.counters.polls += 1;
            let mut cx = NodeCx {
                id: slot.id,
                name: &slot.name,
                clock: &clock,
                shutting_down,
                signal: &self.shared.signal,
            };
            let node = &mut slot.node;
            match catch_unwind(AssertUnwindSafe(|| node.poll(&mut cx))) {
                Ok(Poll::Busy) => {
                    slot.consecutive_panics = 0;
                    outcome.ready = true;
                }
                Ok(Poll::Idle { until }) => {
                    slot.consecutive_panics = 0;
                    if let Some(until) = until {
                        if until <= clock.now() {
                            outcome.ready = true;
                        } else {
                            outcome.deadline = earliest(outcome.deadline, until);
                        }
                    }
                }
                Err(payload) => {
                    recover_from_panic(
                        &self.engine.on_node_panic,
                        &mut self.counters,
                        slot,
                        &*payload,
                        &clock,
                    );
                    match slot.backoff_until {
                        Some(until) => outcome.deadline = earliest(outcome.deadline, until),
                        None => outcome.ready = true,
                    }
                }
            }
        }
        self.counters.passes += 1;
        self.publish();
        outcome
    }

    /// Final passes, then `shutdown` of every node. Also used, on the caller's thread, for a worker
    /// that was never started.
    pub(crate) fn finish(mut self) -> WorkerReport {
        self.adopt_inbox();
        for slot in &mut self.nodes {
            // A node backing off still gets its chance to flush.
            slot.backoff_until = None;
        }
        for _ in 0..FINAL_PASS_LIMIT {
            if !self.pass(true).ready {
                break;
            }
        }
        let mut names = Vec::with_capacity(self.nodes.len());
        for slot in &mut self.nodes {
            let node = &mut slot.node;
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| node.shutdown())) {
                self.counters.panics += 1;
                let message = format!("shutdown panicked: {}", panic_message(&*payload));
                report_panic(&self.engine.on_node_panic, &slot.name, &message);
            }
            names.push(std::mem::take(&mut slot.name));
        }
        for slot in self.nodes.drain(..) {
            if catch_unwind(AssertUnwindSafe(move || drop(slot))).is_err() {
                tracing::error!(worker = self.index, "a node panicked while being dropped");
            }
        }
        self.publish();
        WorkerReport {
            worker: self.index,
            core: self.core,
            nodes: names,
            stats: self.shared.stats(self.index),
            thread_panicked: false,
        }
    }
}

/// Reports a panic that escaped `poll`, restarts the node, and decides its back-off.
fn recover_from_panic(
    hook: &PanicHook,
    counters: &mut Counters,
    slot: &mut NodeSlot,
    payload: &(dyn Any + Send),
    clock: &PassClock,
) {
    counters.panics += 1;
    slot.consecutive_panics = slot.consecutive_panics.saturating_add(1);
    let message = panic_message(payload);
    report_panic(hook, &slot.name, &message);

    let node = &mut slot.node;
    match catch_unwind(AssertUnwindSafe(|| node.restart(&message))) {
        Ok(()) => counters.restarts += 1,
        Err(payload) => {
            counters.panics += 1;
            let message = format!("restart panicked: {}", panic_message(&*payload));
            report_panic(hook, &slot.name, &message);
        }
    }

    if slot.consecutive_panics >= PANIC_BACKOFF_AFTER {
        let doublings = (slot.consecutive_panics - PANIC_BACKOFF_AFTER).min(16);
        let wait = PANIC_BACKOFF_BASE
            .saturating_mul(1 << doublings)
            .min(PANIC_BACKOFF_MAX);
        slot.backoff_until = Some(clock.now() + wait);
    }
}

fn report_panic(hook: &PanicHook, name: &str, message: &str) {
    if catch_unwind(AssertUnwindSafe(|| hook(name, message))).is_err() {
        tracing::error!(node = name, message, "the node panic callback panicked too");
    }
}
