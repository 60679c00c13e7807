//! Worker counters: written by the worker alone (plain stores, no read-modify-write on the hot
//! path), read by anyone through [`Engine::stats`](super::Engine::stats).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A snapshot of one worker's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkerStats {
    /// Index of the worker.
    pub worker: usize,
    /// Nodes the worker owns.
    pub nodes: usize,
    /// Node polls (one per node per pass).
    pub polls: u64,
    /// Passes over all nodes.
    pub passes: u64,
    /// Times the worker parked.
    pub parks: u64,
    /// Unparks other threads issued to it.
    pub wakeups: u64,
    /// Panics caught at the node boundary (in `poll`, `restart` or `shutdown`).
    pub panics: u64,
    /// `restart` calls after a panic in `poll`.
    pub restarts: u64,
    /// Whether the worker is parked (or about to park) right now.
    pub parked: bool,
}

/// The worker's own tally, published after every pass.
#[derive(Clone, Copy, Default)]
pub(crate) struct Counters {
    pub(crate) polls: u64,
    pub(crate) passes: u64,
    pub(crate) parks: u64,
    pub(crate) panics: u64,
    pub(crate) restarts: u64,
}

#[derive(Default)]
pub(crate) struct StatsCells {
    nodes: AtomicUsize,
    polls: AtomicU64,
    passes: AtomicU64,
    parks: AtomicU64,
    panics: AtomicU64,
    restarts: AtomicU64,
}

impl StatsCells {
    /// Single writer: a relaxed store is enough, readers only want a recent value.
    pub(crate) fn publish(&self, counters: &Counters, nodes: usize) {
        self.nodes.store(nodes, Ordering::Relaxed);
        self.polls.store(counters.polls, Ordering::Relaxed);
        self.passes.store(counters.passes, Ordering::Relaxed);
        self.parks.store(counters.parks, Ordering::Relaxed);
        self.panics.store(counters.panics, Ordering::Relaxed);
        self.restarts.store(counters.restarts, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, worker: usize, wakeups: u64, parked: bool) -> WorkerStats {
        WorkerStats {
            worker,
            nodes: self.nodes.load(Ordering::Relaxed),
            polls: self.polls.load(Ordering::Relaxed),
            passes: self.passes.load(Ordering::Relaxed),
            parks: self.parks.load(Ordering::Relaxed),
            wakeups,
            panics: self.panics.load(Ordering::Relaxed),
            restarts: self.restarts.load(Ordering::Relaxed),
            parked,
        }
    }
}
