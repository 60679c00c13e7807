//! Waking a parked worker without putting a syscall on the awake path.
//!
//! A worker announces that it is about to park by setting `sleeping` and issuing a SeqCst fence, then
//! polls every node one last time before it parks. Anything that makes a node ready (an edge send, a
//! flag set by a service thread) first publishes its change, then fences, then reads `sleeping`. The two
//! fences form a Dekker pair: either the worker's last pass sees the change, or the waker sees
//! `sleeping` and unparks. While the worker is awake a waker pays one fence and one load, no syscall.

use std::cell::OnceCell;
use std::fmt;
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicBool, AtomicU64, Ordering, Unparker, fence};

/// The part of a worker that other threads touch to wake it.
pub(crate) struct WorkerSignal {
    worker: usize,
    /// Read by every sender to this worker; padded so the worker's own writes elsewhere never
    /// invalidate the line senders keep in cache.
    sleeping: CachePadded<AtomicBool>,
    unparker: Unparker,
    /// Unparks actually issued (the slow path only).
    wakeups: AtomicU64,
}

impl WorkerSignal {
    pub(crate) fn new(worker: usize, unparker: Unparker) -> Self {
        Self {
            worker,
            sleeping: CachePadded::new(AtomicBool::new(false)),
            unparker,
            wakeups: AtomicU64::new(0),
        }
    }

    pub(crate) fn worker(&self) -> usize {
        self.worker
    }

    /// Wakes the worker if it is parked or about to park. Call after publishing the change that
    /// makes one of its nodes ready.
    pub(crate) fn notify(&self) {
        // SYNC: pairs with the fence in `prepare_park`: either the worker's last pass sees what the
        // caller published before this fence, or this load sees `sleeping == true`.
        fence(Ordering::SeqCst);
        self.wake_if_sleeping();
    }

    /// `notify` for callers that have already issued the SeqCst fence after publishing.
    pub(crate) fn wake_if_sleeping(&self) {
        // The swap lets exactly one of many concurrent wakers pay for the unpark. Relaxed is enough:
        // the unpark/park pair itself carries the happens-before edge to the woken worker.
        if self.sleeping.load(Ordering::Relaxed) && self.sleeping.swap(false, Ordering::Relaxed) {
            self.wakeups.fetch_add(1, Ordering::Relaxed);
            self.unparker.unpark();
        }
    }

    /// Announces the intent to park. The worker must poll every node once more afterwards and park
    /// only if that pass found nothing to do.
    pub(crate) fn prepare_park(&self) {
        // A swap, not a store, here and in `awake`: every write to `sleeping` is then a
        // read-modify-write, so its writes form one chain that a model checker sees as such (see
        // `loom_park`). The value read is not needed; the cost is on the park path only.
        self.sleeping.swap(true, Ordering::Relaxed);
        // SYNC: pairs with the fence in `notify` (and the edge fences that precede
        // `wake_if_sleeping`): the final pass after this fence sees every change published before a
        // waker's fence that read `sleeping == false`.
        fence(Ordering::SeqCst);
    }

    /// The worker is awake again (its final pass found work, or park returned).
    pub(crate) fn awake(&self) {
        self.sleeping.swap(false, Ordering::Relaxed);
    }

    /// The worker's whole side of the handshake: announce, run `final_pass` over `worker`, and
    /// only if it found nothing to do (`Some(plan)`) sleep with `park(worker, plan)`. Returns
    /// whether the worker slept. A waker that published before the final pass is seen by it;
    /// one that published after it sees `sleeping` and unparks.
    pub(crate) fn park_unless<W, P>(
        &self,
        worker: &mut W,
        final_pass: impl FnOnce(&mut W) -> Option<P>,
        park: impl FnOnce(&mut W, P),
    ) -> bool {
        self.prepare_park();
        let slept = match final_pass(worker) {
            Some(plan) => {
                park(worker, plan);
                true
            }
            None => false,
        };
        self.awake();
        slept
    }

    pub(crate) fn is_sleeping(&self) -> bool {
        self.sleeping.load(Ordering::Relaxed)
    }

    pub(crate) fn wakeups(&self) -> u64 {
        self.wakeups.load(Ordering::Relaxed)
    }
}

thread_local! {
    /// Set once on each worker thread; lets an edge endpoint learn which worker uses it.
    static CURRENT: OnceCell<Arc<WorkerSignal>> = const { OnceCell::new() };
}

/// Marks the calling thread as the worker behind `signal`.
pub(crate) fn enter_worker(signal: Arc<WorkerSignal>) {
    CURRENT.with(|current| {
        if current.set(signal).is_err() {
            tracing::warn!("thread already hosts a worker; keeping the first");
        }
    });
}

/// The signal of the worker running on this thread, if this is a worker thread.
pub(crate) fn current_worker() -> Option<Arc<WorkerSignal>> {
    CURRENT.with(|current| current.get().cloned())
}

/// A handle that wakes one worker from any thread: give it to a node's service thread, a timer, or a
/// signal-handling thread, publish the change the node will look for, then call [`Wake::wake`].
///
/// Waking an awake worker costs a fence and a load. A wake-up is never lost: it either reaches the
/// worker's last check before parking or unparks it.
#[derive(Clone)]
pub struct Wake {
    signal: Arc<WorkerSignal>,
}

impl Wake {
    pub(crate) fn new(signal: Arc<WorkerSignal>) -> Self {
        Self { signal }
    }

    /// Makes the worker poll all of its nodes soon (at once if it is parked).
    pub fn wake(&self) {
        self.signal.notify();
    }

    /// Index of the worker this handle wakes.
    pub fn worker(&self) -> usize {
        self.signal.worker()
    }
}

impl fmt::Debug for Wake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wake")
            .field("worker", &self.signal.worker())
            .finish()
    }
}
