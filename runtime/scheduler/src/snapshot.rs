//! A consistent, serialisable picture of the scheduler for the status view (SPEC §2.7
//! `DumpScheduler`). Frames are never exposed.

use serde::Serialize;

use super::config::MAX_INTERRUPT_FRAMES;
use super::sched::Scheduler;
use super::stats::SchedulerStats;
use super::task::{RunningTask, Task, TaskClass, TaskId, TaskKind};

/// One waiting or suspended task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskSummary {
    /// The task's id.
    pub id: TaskId,
    /// Input or interrupt.
    pub class: TaskClass,
    /// Where it came from.
    pub kind: TaskKind,
    /// Base level, 0 for a queued task (queued tasks have no level).
    pub level: u8,
    /// Its level after preemption promotion.
    pub effective_level: u8,
    /// How often it was preempted.
    pub preempt_count: u32,
    /// A short description of the input, when the caller supplied a summariser.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// The running task, as far as the scheduler knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RunningSummary {
    /// The task's id.
    pub id: TaskId,
    /// Input or interrupt.
    pub class: TaskClass,
    /// Where it came from.
    pub kind: TaskKind,
    /// Its level (0 for inputs).
    pub level: u8,
    /// Its level after preemption promotion.
    pub effective_level: u8,
    /// How often it was preempted.
    pub preempt_count: u32,
}

/// One interrupt level's FIFO, head first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LevelQueueSnapshot {
    /// The level.
    pub level: u8,
    /// Its name (`L1`..`L4`).
    pub name: &'static str,
    /// Its queued interrupts, oldest first.
    pub tasks: Vec<TaskSummary>,
}

/// What `hearth status` shows of the scheduler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SchedulerSnapshot {
    /// The running task.
    pub running: Option<RunningSummary>,
    /// The ready queue, head first.
    pub queue: Vec<TaskSummary>,
    /// L1 first.
    pub interrupt_queues: Vec<LevelQueueSnapshot>,
    /// The interrupt in the immediate slot.
    pub immediate: Option<TaskSummary>,
    /// Interrupts in the level queues plus the immediate slot.
    pub pending_interrupts: usize,
    /// Bottom first; the last entry is the next to resume.
    pub stack: Vec<TaskSummary>,
    /// Counters since start.
    pub stats: SchedulerStats,
    /// Sum of `stats.preempts_by_level`.
    pub preempted: u64,
    /// Capacity of the suspended stack.
    pub max_interrupt_frames: usize,
    /// Capacity of the ready queue.
    pub max_queue: usize,
    /// The running task is critical.
    pub critical: bool,
    /// The base level the running task has been asked to yield to, if armed.
    pub preempt_level: Option<u8>,
    /// A stop is armed.
    pub stop_armed: bool,
    /// Tasks a stop still cancels.
    pub cancel_budget: usize,
}

fn shown_level(class: TaskClass, level: u8) -> u8 {
    match class {
        TaskClass::Queued => 0,
        TaskClass::Interrupt => level,
    }
}

fn summarize<I>(task: &Task<I>, describe: &mut impl FnMut(&I) -> Option<String>) -> TaskSummary {
    TaskSummary {
        id: task.id,
        class: task.class,
        kind: task.kind,
        level: shown_level(task.class, task.level.as_u8()),
        effective_level: task.effective_level(),
        preempt_count: task.preempt_count,
        summary: describe(&task.input),
    }
}

impl From<RunningTask> for RunningSummary {
    fn from(r: RunningTask) -> Self {
        RunningSummary {
            id: r.id,
            class: r.class,
            kind: r.kind,
            level: shown_level(r.class, r.level.as_u8()),
            effective_level: r.effective_level,
            preempt_count: r.preempt_count,
        }
    }
}

impl<I, F> Scheduler<I, F> {
    /// The snapshot without input summaries.
    pub fn snapshot(&self) -> SchedulerSnapshot {
        self.build_snapshot(|_| None)
    }

    /// The snapshot with each task's input described by `describe`.
    pub fn snapshot_with(&self, mut describe: impl FnMut(&I) -> String) -> SchedulerSnapshot {
        self.build_snapshot(|input| Some(describe(input)))
    }

    fn build_snapshot(&self, mut describe: impl FnMut(&I) -> Option<String>) -> SchedulerSnapshot {
        let interrupt_queues = self
            .interrupts
            .levels()
            .map(|(level, queue)| LevelQueueSnapshot {
                level: level.as_u8(),
                name: level.as_str(),
                tasks: queue.iter().map(|t| summarize(t, &mut describe)).collect(),
            })
            .collect();
        SchedulerSnapshot {
            running: self.running.map(RunningSummary::from),
            queue: self
                .ready
                .iter()
                .map(|t| summarize(t, &mut describe))
                .collect(),
            interrupt_queues,
            immediate: self.immediate.as_ref().map(|t| summarize(t, &mut describe)),
            pending_interrupts: self.pending_interrupts(),
            stack: self
                .stack
                .iter()
                .map(|(t, _)| summarize(t, &mut describe))
                .collect(),
            stats: self.stats,
            preempted: self.stats.preempted(),
            max_interrupt_frames: MAX_INTERRUPT_FRAMES,
            max_queue: self.max_queue,
            critical: self.critical,
            preempt_level: self.preempt.map(|l| l.as_u8()),
            stop_armed: self.stop.armed,
            cancel_budget: self.stop.cancel_budget,
        }
    }
}
