//! The input scheduler: which task runs next, when the running task must yield to an
//! interrupt, and what is still owed a reply.
//!
//! Tasks come in two classes chosen by the injection API: queued inputs (no level, preemptible
//! by any interrupt) and interrupts (levels L1..L4, preemptible only by a strictly higher
//! effective level). Preemption happens only at safe points between steps of a task: the
//! executor asks [`Scheduler::should_suspend`] there and hands the task and its frame back with
//! [`Scheduler::suspend`]. Suspended tasks form a LIFO stack that is never re-sorted.
//!
//! This crate is pure, synchronous and deterministic: no threads, no channels, no I/O, and no
//! clock (time is passed in), and it depends on no other Hearth crate. The node that owns the
//! scheduler (the kernel node in `hearth-kernel`) does the waking, the LLM cancellation and the
//! replies.
//!
//! ```
//! use std::time::Instant;
//! use hearth_scheduler::{Level, Next, Registered, Scheduler, SchedulerConfig, TaskKind};
//!
//! let now = Instant::now();
//! let mut s: Scheduler<&str, u32> = Scheduler::new(SchedulerConfig::default());
//! s.enqueue("summarise my mail", TaskKind::Input, now).expect("room in a new queue");
//! let Some(Next::New(task)) = s.next(now) else { unreachable!() };
//! // An interrupt of any level preempts a queued task.
//! assert!(matches!(s.register_interrupt("stop", Level::L4, now), Registered::Preempted { .. }));
//! assert!(s.should_suspend());
//! s.suspend(task, 3, now);
//! assert!(matches!(s.next(now), Some(Next::New(t)) if t.input == "stop"));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod level;
mod outcome;
mod queues;
mod sched;
mod snapshot;
mod stats;
mod stop;
mod task;

#[cfg(test)]
mod cooldown_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use config::{
    CRITICAL_CHANNEL, DEFAULT_MAX_QUEUE, MAX_INTERRUPT_FRAMES, PREEMPT_COOLDOWN, SchedulerConfig,
};
pub use level::{DEFAULT_LEVEL, Level, clamp_plugin_level, level_name, parse_priority};
pub use outcome::{Drained, Next, QueueFull, Registered};
pub use sched::Scheduler;
pub use snapshot::{LevelQueueSnapshot, RunningSummary, SchedulerSnapshot, TaskSummary};
pub use stats::SchedulerStats;
pub use task::{
    PREEMPT_PROMOTION_CAP, RunningTask, Task, TaskClass, TaskId, TaskKind, effective_level,
};
