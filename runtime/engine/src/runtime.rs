//! The engine: builder, node placement, start and shutdown.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use parking_lot::Mutex;

use super::error::EngineError;
use super::node::{Node, NodeId};
use super::pin::{allowed_cores, core_for};
use super::report::{ShutdownReport, WorkerReport};
use super::stats::WorkerStats;
use super::waker::{Wake, WorkerSignal};
use super::worker::{EngineShared, NodeSlot, PanicHook, Worker, WorkerShared};
use crate::sync::Parker;

/// How long a worker keeps polling after a pass made no progress before it parks. A message that
/// arrives within this window is picked up without a wake-up syscall.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(30);

/// Configures an [`Engine`].
pub struct EngineBuilder {
    workers: Option<usize>,
    pin: bool,
    spin: Duration,
    on_node_panic: Option<PanicHook>,
}

impl EngineBuilder {
    /// One worker per available core, pinned, [`DEFAULT_SPIN`], panics logged through `tracing`.
    pub fn new() -> Self {
        Self {
            workers: None,
            pin: true,
            spin: DEFAULT_SPIN,
            on_node_panic: None,
        }
    }

    /// Number of worker threads (default: `available_parallelism`).
    pub fn workers(mut self, count: usize) -> Self {
        self.workers = Some(count);
        self
    }

    /// Whether to pin worker `i` to the `i`-th core the process may use (default: true). A pinning
    /// failure is logged and the worker runs unpinned.
    pub fn pin(mut self, pin: bool) -> Self {
        self.pin = pin;
        self
    }

    /// How long an idle worker spins before parking (default: [`DEFAULT_SPIN`]; zero parks at once).
    pub fn spin(mut self, spin: Duration) -> Self {
        self.spin = spin;
        self
    }

    /// Called with `(node_name, panic_message)` for every panic caught at a node boundary, on the
    /// node's worker thread. Keep it short and non-blocking (publish an event, count). A panic
    /// inside the callback is caught and logged.
    pub fn on_node_panic(mut self, hook: impl Fn(&str, &str) + Send + Sync + 'static) -> Self {
        self.on_node_panic = Some(Arc::new(hook));
        self
    }

    /// Creates the workers (not yet started); fails on zero workers.
    pub fn build(self) -> Result<Engine, EngineError> {
        let count = self
            .workers
            .unwrap_or_else(|| thread::available_parallelism().map_or(1, NonZeroUsize::get));
        if count == 0 {
            return Err(EngineError::NoWorkers);
        }
        let hook = self.on_node_panic.unwrap_or_else(|| {
            Arc::new(|node: &str, message: &str| {
                tracing::error!(node, message, "node panicked and was restarted");
            })
        });
        let shared = Arc::new(EngineShared::new(hook, self.spin));
        let workers = (0..count)
            .map(|index| {
                let parker = Parker::new();
                let signal = Arc::new(WorkerSignal::new(index, parker.unparker().clone()));
                WorkerHandle {
                    shared: Arc::new(WorkerShared::new(signal)),
                    parker: Mutex::new(Some(parker)),
                    thread: None,
                }
            })
            .collect();
        Ok(Engine {
            shared,
            workers,
            next_id: AtomicU32::new(0),
            pin: self.pin,
            started: false,
            stopped: false,
        })
    }
}

impl Default for EngineBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("workers", &self.workers)
            .field("pin", &self.pin)
            .field("spin", &self.spin)
            .field("on_node_panic", &self.on_node_panic.is_some())
            .finish()
    }
}

struct WorkerHandle {
    shared: Arc<WorkerShared>,
    /// Its unparker lives in the worker's signal; moved to the thread on start. Behind a lock only
    /// so that `Engine` is `Sync` (the lock is taken once, with `&mut`).
    parker: Mutex<Option<Parker>>,
    thread: Option<JoinHandle<WorkerReport>>,
}

/// A thread-per-core engine: a fixed set of pinned workers, each owning the nodes placed on it.
/// `Send + Sync`: placement, wakers and stats work through `&Engine` from any thread.
///
/// Dropping an engine shuts it down as [`Engine::shutdown`] does, discarding the report.
pub struct Engine {
    shared: Arc<EngineShared>,
    workers: Vec<WorkerHandle>,
    next_id: AtomicU32,
    pin: bool,
    started: bool,
    stopped: bool,
}

impl Engine {
    /// A builder with the defaults (one worker per core, pinned).
    pub fn builder() -> EngineBuilder {
        EngineBuilder::new()
    }

    /// How many workers the engine runs.
    pub fn worker_count(&self) -> usize {
        self.workers.len()
    }

    /// Places `node` on worker `worker` for the rest of its life. Works before and after
    /// [`Engine::start`]; a running worker adopts the node on its next pass.
    pub fn spawn<N: Node>(&self, worker: usize, node: N) -> Result<NodeId, EngineError> {
        let handle = self.handle(worker)?;
        let id = NodeId(self.next_id.fetch_add(1, Ordering::Relaxed));
        handle.shared.place(NodeSlot::new(id, Box::new(node)));
        Ok(id)
    }

    /// A handle that wakes worker `worker`, for threads outside the engine. Available before start.
    pub fn waker(&self, worker: usize) -> Option<Wake> {
        let handle = self.workers.get(worker)?;
        Some(Wake::new(Arc::clone(&handle.shared.signal)))
    }

    /// A recent snapshot of worker `worker`'s counters.
    pub fn stats(&self, worker: usize) -> Option<WorkerStats> {
        let handle = self.workers.get(worker)?;
        Some(handle.shared.stats(worker))
    }

    /// Whether `start` has been called.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Starts the worker threads (pinning each to its core if configured).
    pub fn start(&mut self) -> Result<(), EngineError> {
        if self.started {
            return Err(EngineError::AlreadyStarted);
        }
        self.started = true;
        let allowed = if self.pin {
            allowed_cores()
        } else {
            Vec::new()
        };
        for (index, handle) in self.workers.iter_mut().enumerate() {
            let Some(parker) = handle.parker.get_mut().take() else {
                continue;
            };
            let worker = Worker::new(
                index,
                Arc::clone(&handle.shared),
                Arc::clone(&self.shared),
                parker,
                core_for(index, &allowed),
            );
            let thread = thread::Builder::new()
                .name(format!("hearth-worker-{index}"))
                .spawn(move || worker.run())
                .map_err(|source| EngineError::ThreadSpawn {
                    worker: index,
                    source,
                })?;
            handle.thread = Some(thread);
        }
        Ok(())
    }

    /// Sets the shutdown latch, wakes every worker, lets each run a final poll pass over its nodes
    /// (repeated while some node reports progress, up to a bound) so nodes can flush and answer,
    /// calls `shutdown` on every node, and joins the threads. Nodes of a worker that never started
    /// get the same treatment on the calling thread.
    pub fn shutdown(mut self) -> ShutdownReport {
        self.stop()
    }

    fn stop(&mut self) -> ShutdownReport {
        self.stopped = true;
        self.shared.begin_shutdown();
        for handle in &self.workers {
            handle.shared.signal.notify();
        }
        let mut reports = Vec::with_capacity(self.workers.len());
        for (index, handle) in self.workers.iter_mut().enumerate() {
            let report = match handle.thread.take() {
                Some(thread) => thread.join().unwrap_or_else(|_| WorkerReport {
                    worker: index,
                    core: None,
                    nodes: Vec::new(),
                    stats: handle.shared.stats(index),
                    thread_panicked: true,
                }),
                None => Worker::new(
                    index,
                    Arc::clone(&handle.shared),
                    Arc::clone(&self.shared),
                    handle.parker.get_mut().take().unwrap_or_default(),
                    None,
                )
                .finish(),
            };
            reports.push(report);
        }
        ShutdownReport { workers: reports }
    }

    fn handle(&self, worker: usize) -> Result<&WorkerHandle, EngineError> {
        self.workers.get(worker).ok_or(EngineError::NoSuchWorker {
            worker,
            count: self.workers.len(),
        })
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if !self.stopped {
            self.stop();
        }
    }
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("workers", &self.workers.len())
            .field("pin", &self.pin)
            .field("started", &self.started)
            .field("stopped", &self.stopped)
            .finish()
    }
}
