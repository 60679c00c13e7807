//! Bounds and tunables of the scheduler (SPEC §2.2, §2.3, §2.6).

use std::time::Duration;

use super::level::Level;

/// Bound of the ready queue, and of all pending interrupts together.
pub const DEFAULT_MAX_QUEUE: usize = 256;

/// A task preempted less than this long ago cannot be preempted again.
pub const PREEMPT_COOLDOWN: Duration = Duration::from_secs(2);

/// Structural bound of the suspend stack, equal to the number of levels: the deepest chain is
/// queued ← L1 ← L2 ← L3 with L4 running. It is a consequence, not a setting.
pub const MAX_INTERRUPT_FRAMES: usize = Level::L4 as usize;

/// The one channel whose tasks (memory consolidation) must never be preempted.
pub const CRITICAL_CHANNEL: &str = "_consolidation_";

/// Settings of one [`Scheduler`](super::Scheduler).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// Bound of the ready queue and of the pending interrupts; 0 means [`DEFAULT_MAX_QUEUE`].
    pub max_queue: usize,
    /// Preemption cooldown; [`PREEMPT_COOLDOWN`] by default.
    pub cooldown: Duration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            max_queue: DEFAULT_MAX_QUEUE,
            cooldown: PREEMPT_COOLDOWN,
        }
    }
}

impl SchedulerConfig {
    pub(crate) fn effective_max_queue(&self) -> usize {
        if self.max_queue == 0 {
            DEFAULT_MAX_QUEUE
        } else {
            self.max_queue
        }
    }
}
