//! A global allocator that counts every allocation of the process, for benches that report
//! allocations per token or per call. A bench binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and reads [`allocations`] around
//! the part it measures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counts allocations and reallocations, then defers to the system allocator.
pub struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Allocations (and reallocations) made so far by every thread of the process.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Relaxed)
}

// SAFETY: defers to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations between the first and the last token a reader took, per token: what a per-token
/// bench reports beside its latencies.
#[derive(Debug, Default)]
pub struct PerToken {
    first: Option<u64>,
    last: u64,
    tokens: u64,
}

impl PerToken {
    /// One token taken now.
    pub fn token(&mut self) {
        let now = allocations();
        self.first.get_or_insert(now);
        self.last = now;
        self.tokens += 1;
    }

    /// Allocations per token over the tokens taken (0 with fewer than two).
    pub fn per_token(&self) -> f64 {
        let first = self.first.unwrap_or(self.last);
        (self.last - first) as f64 / self.tokens.saturating_sub(1).max(1) as f64
    }
}

/// [`PerToken`] summed over several rounds, each measured on its own: benches that alternate
/// two paths within one run count each path's rounds apart.
#[derive(Debug, Default)]
pub struct PerTokenRounds {
    allocations: u64,
    intervals: u64,
}

impl PerTokenRounds {
    /// Adds one round's count.
    pub fn add(&mut self, round: &PerToken) {
        let first = round.first.unwrap_or(round.last);
        self.allocations += round.last - first;
        self.intervals += round.tokens.saturating_sub(1);
    }

    /// Allocations per token over every round (0 with no interval).
    pub fn per_token(&self) -> f64 {
        self.allocations as f64 / self.intervals.max(1) as f64
    }
}
