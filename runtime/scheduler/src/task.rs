//! The unit the scheduler moves around, and the effective-level rule (SPEC §2.1–§2.2).

use std::time::{Duration, Instant};

use serde::Serialize;

use super::level::Level;

/// Per-scheduler task number; the first task gets 1. A task keeps its id for its whole life,
/// including when it is demoted out of the immediate slot.
pub type TaskId = u64;

/// Each preemption raises a task's effective level by one, at most this many times: the
/// starvation guard that lets a repeatedly interrupted task catch up with the stream that
/// keeps interrupting it.
pub const PREEMPT_PROMOTION_CAP: u32 = 2;

/// Decided by the injection API that was used, never by the channel name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskClass {
    /// Ordinary and self inputs: no level, preemptible by any interrupt.
    Queued = 0,
    /// Injected as an interrupt: carries a level, preemptible only by a strictly higher one.
    Interrupt = 1,
}

/// Which inbox a task came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// The IO input channel (external sources and plugins).
    Input,
    /// The kernel's self-input channel (consolidation, child-agent notices).
    #[serde(rename = "self")]
    SelfInput,
}

/// The effective level used by every preemption and selection comparison: 0 for a queued task
/// (so any interrupt beats it), otherwise `min(4, level + min(preempt_count, PREEMPT_PROMOTION_CAP))`.
pub fn effective_level(class: TaskClass, level: Level, preempt_count: u32) -> u8 {
    match class {
        TaskClass::Queued => 0,
        TaskClass::Interrupt => {
            // The cap keeps the sum within u8 and the result never passes L4, so a promoted
            // task can never preempt a kernel-critical interrupt.
            let promotion = preempt_count.min(PREEMPT_PROMOTION_CAP) as u8;
            (level.as_u8() + promotion).min(Level::L4.as_u8())
        }
    }
}

/// A task as handed to the executor. `I` is the input payload.
#[derive(Clone, Debug, PartialEq)]
pub struct Task<I> {
    /// Unique, increasing id.
    pub id: TaskId,
    /// Input or interrupt.
    pub class: TaskClass,
    /// Meaningful only for [`TaskClass::Interrupt`]; queued tasks carry the default level.
    pub level: Level,
    /// Where it came from.
    pub kind: TaskKind,
    /// How often it was preempted.
    pub preempt_count: u32,
    /// When it was last preempted.
    pub last_preempt_at: Option<Instant>,
    /// When it was queued.
    pub enqueued_at: Instant,
    /// The input it runs.
    pub input: I,
}

impl<I> Task<I> {
    /// See [`effective_level`].
    pub fn effective_level(&self) -> u8 {
        effective_level(self.class, self.level, self.preempt_count)
    }

    /// Whether this task may take the processor from `running` (SPEC §2.2 `canPreempt`): only
    /// interrupts preempt, and only with a strictly greater effective level. The cooldown is a
    /// separate gate, see [`RunningTask::in_cooldown`].
    pub fn can_preempt(&self, running: &RunningTask) -> bool {
        self.class == TaskClass::Interrupt && self.effective_level() > running.effective_level
    }
}

/// What the scheduler remembers about the task the executor currently holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunningTask {
    /// The task's id.
    pub id: TaskId,
    /// Input or interrupt.
    pub class: TaskClass,
    /// Its level.
    pub level: Level,
    /// Where it came from.
    pub kind: TaskKind,
    /// Its level after preemption promotion.
    pub effective_level: u8,
    /// How often it was preempted.
    pub preempt_count: u32,
    /// When it was last preempted.
    pub last_preempt_at: Option<Instant>,
    /// When this run (first start or resume) began.
    pub started: Instant,
}

impl RunningTask {
    pub(crate) fn of<I>(task: &Task<I>, started: Instant) -> Self {
        RunningTask {
            id: task.id,
            class: task.class,
            level: task.level,
            kind: task.kind,
            effective_level: task.effective_level(),
            preempt_count: task.preempt_count,
            last_preempt_at: task.last_preempt_at,
            started,
        }
    }

    /// A task preempted less than `cooldown` ago may not be preempted again yet, so a stream
    /// of higher interrupts cannot keep it from ever finishing.
    pub fn in_cooldown(&self, now: Instant, cooldown: Duration) -> bool {
        self.last_preempt_at
            .is_some_and(|at| now.saturating_duration_since(at) < cooldown)
    }
}
