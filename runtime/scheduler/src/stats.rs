//! Cumulative scheduler counters (SPEC §2.7).

use serde::Serialize;

/// Counters since the scheduler was created. The per-level arrays are indexed by level
/// (1..=4); index 0 stays 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SchedulerStats {
    /// Tasks accepted (ready queue or interrupt set), each counted once.
    pub enqueued: u64,
    /// Tasks reported finished through `done`.
    pub executed: u64,
    /// Inputs not accepted or later evicted: a full ready queue, an interrupt overflow, and
    /// (defensively) a suspend beyond the structural depth, which still keeps the frame.
    pub rejected: u64,
    /// Times the ready queue went from having room to full while inputs were waiting.
    pub backpressure: u64,
    /// Tasks suspended by a preemption.
    pub suspended: u64,
    /// Counted only when `next` hands back a suspended task; once everything has drained
    /// through `next`, `suspended == resumed`.
    pub resumed: u64,
    /// Interrupts registered per level, whether or not they preempted.
    pub interrupts_by_level: [u64; 5],
    /// Interrupts that won the immediate slot per level. Not the same as `suspended`: the
    /// victim may finish on its own before reaching a safe point.
    pub preempts_by_level: [u64; 5],
    /// Deepest the suspend stack has been; never above `MAX_INTERRUPT_FRAMES` while the
    /// executor honours `should_suspend`.
    pub max_stack_depth: u64,
}

impl SchedulerStats {
    /// The status view's `preempted`: the sum of `preempts_by_level`, not `suspended`.
    pub fn preempted(&self) -> u64 {
        self.preempts_by_level.iter().sum()
    }
}
