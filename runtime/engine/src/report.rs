//! What [`Engine::shutdown`](super::Engine::shutdown) hands back.

use super::stats::WorkerStats;

/// The outcome of a shutdown, one entry per worker in index order.
#[derive(Clone, Debug)]
pub struct ShutdownReport {
    /// One report per worker, in worker order.
    pub workers: Vec<WorkerReport>,
}

impl ShutdownReport {
    /// Names of every node whose `shutdown` ran, worker by worker.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.workers
            .iter()
            .flat_map(|worker| worker.nodes.iter().map(String::as_str))
    }

    /// Whether every worker thread ended normally.
    pub fn all_joined(&self) -> bool {
        self.workers.iter().all(|worker| !worker.thread_panicked)
    }
}

/// How one worker ended.
#[derive(Clone, Debug)]
pub struct WorkerReport {
    /// The worker's index.
    pub worker: usize,
    /// The core it was pinned to, if pinning was asked for and succeeded.
    pub core: Option<usize>,
    /// Names of its nodes, in placement order; each got its final poll and `shutdown`.
    pub nodes: Vec<String>,
    /// Its counters at the end.
    pub stats: WorkerStats,
    /// The thread died outside the node panic boundary (a bug in the engine); `nodes` is empty.
    pub thread_panicked: bool,
}
