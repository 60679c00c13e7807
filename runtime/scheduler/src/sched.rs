//! The scheduler state and its transitions (SPEC §2.3–§2.7, §2.10).

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use super::config::{MAX_INTERRUPT_FRAMES, SchedulerConfig};
use super::level::{DEFAULT_LEVEL, Level};
use super::outcome::{Drained, Next, QueueFull, Registered};
use super::queues::InterruptQueues;
use super::stats::SchedulerStats;
use super::stop::StopState;
use super::task::{RunningTask, Task, TaskClass, TaskId, TaskKind};

/// Hearth's input scheduler: which task runs next, when the running one must yield, and what
/// is still owed a reply. Pure state with no clock of its own: every time-dependent operation
/// takes `now`. `I` is the input payload, `F` the frame of a suspended task (plain data).
///
/// The scheduler never holds the running task itself: [`next`](Self::next) hands it to the
/// executor, which gives it back through [`suspend`](Self::suspend) or reports it finished
/// through [`done`](Self::done). Until then `next` returns `None`, so at most one task runs.
pub struct Scheduler<I, F> {
    pub(super) max_queue: usize,
    pub(super) cooldown: Duration,
    pub(super) last_id: TaskId,
    pub(super) ready: VecDeque<Task<I>>,
    pub(super) interrupts: InterruptQueues<I>,
    /// The interrupt that has just won a preemption; it runs at the next selection.
    pub(super) immediate: Option<Task<I>>,
    /// Suspended tasks with their frames; only the top takes part in selection.
    pub(super) stack: Vec<(Task<I>, F)>,
    pub(super) running: Option<RunningTask>,
    /// `Some(level)` while the running task has been asked to yield to an interrupt of that
    /// base level.
    pub(super) preempt: Option<Level>,
    pub(super) critical: bool,
    pub(super) stop: StopState,
    pub(super) backpressured: bool,
    pub(super) stats: SchedulerStats,
}

/// Counts and flags only, so neither payloads nor frames need to be `Debug`.
impl<I, F> fmt::Debug for Scheduler<I, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scheduler")
            .field("running", &self.running.map(|r| r.id))
            .field("ready", &self.ready.len())
            .field("pending_interrupts", &self.pending_interrupt_count())
            .field("immediate", &self.immediate.as_ref().map(|t| t.id))
            .field("stack", &self.stack.len())
            .field("preempt", &self.preempt)
            .field("critical", &self.critical)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<I, F> Scheduler<I, F> {
    /// An empty scheduler.
    pub fn new(cfg: SchedulerConfig) -> Self {
        Scheduler {
            max_queue: cfg.effective_max_queue(),
            cooldown: cfg.cooldown,
            last_id: 0,
            ready: VecDeque::new(),
            interrupts: InterruptQueues::new(),
            immediate: None,
            stack: Vec::new(),
            running: None,
            preempt: None,
            critical: false,
            stop: StopState::default(),
            backpressured: false,
            stats: SchedulerStats::default(),
        }
    }

    fn new_task(
        &mut self,
        class: TaskClass,
        level: Level,
        kind: TaskKind,
        input: I,
        now: Instant,
    ) -> Task<I> {
        self.last_id += 1;
        self.stats.enqueued += 1;
        Task {
            id: self.last_id,
            class,
            level,
            kind,
            preempt_count: 0,
            last_preempt_at: None,
            enqueued_at: now,
            input,
        }
    }

    /// Accepts an ordinary (queued) input into the ready FIFO. When the queue already holds
    /// `max_queue` tasks the input is handed back and counted as rejected.
    pub fn enqueue(
        &mut self,
        input: I,
        kind: TaskKind,
        now: Instant,
    ) -> Result<TaskId, QueueFull<I>> {
        if self.ready.len() >= self.max_queue {
            self.stats.rejected += 1;
            return Err(QueueFull(input));
        }
        let task = self.new_task(TaskClass::Queued, DEFAULT_LEVEL, kind, input, now);
        let id = task.id;
        self.ready.push_back(task);
        Ok(id)
    }

    /// Registers an interrupt whose level the caller has already resolved (privileged or
    /// clamped). It takes the immediate slot and arms the scheduler when it can preempt the
    /// running task (not critical, strictly higher effective level, victim outside its
    /// cooldown) and the slot is free or held by a strictly lower interrupt, which is then
    /// demoted into its level queue with its id unchanged. Otherwise it is queued at its level.
    ///
    /// The interrupt set (level queues plus the immediate slot) is bounded by `max_queue`:
    /// when it is full, the oldest entry of the lowest non-empty level is evicted first and
    /// handed back in `dropped`.
    pub fn register_interrupt(&mut self, input: I, level: Level, now: Instant) -> Registered<I> {
        self.stats.interrupts_by_level[level.index()] += 1;
        let dropped = self.make_room_for_interrupt();
        let task = self.new_task(TaskClass::Interrupt, level, TaskKind::Input, input, now);
        let id = task.id;
        if self.may_preempt_running(&task, now) && self.immediate_admits(&task) {
            if let Some(demoted) = self.immediate.replace(task) {
                self.interrupts.push(demoted);
            }
            self.arm(level);
            Registered::Preempted { id, dropped }
        } else {
            self.interrupts.push(task);
            Registered::Queued { id, dropped }
        }
    }

    fn pending_interrupt_count(&self) -> usize {
        self.interrupts.len() + usize::from(self.immediate.is_some())
    }

    fn make_room_for_interrupt(&mut self) -> Option<Task<I>> {
        if self.pending_interrupt_count() < self.max_queue {
            return None;
        }
        let victim = self.interrupts.evict_oldest_lowest()?;
        self.stats.rejected += 1;
        Some(victim)
    }

    fn may_preempt_running(&self, task: &Task<I>, now: Instant) -> bool {
        !self.critical
            && self
                .running
                .is_some_and(|r| task.can_preempt(&r) && !r.in_cooldown(now, self.cooldown))
    }

    fn immediate_admits(&self, task: &Task<I>) -> bool {
        self.immediate
            .as_ref()
            .is_none_or(|occupant| occupant.effective_level() < task.effective_level())
    }

    fn arm(&mut self, level: Level) {
        self.preempt = Some(level);
        self.stats.preempts_by_level[level.index()] += 1;
    }

    /// Selects the next task (SPEC §2.4) and marks it running: the immediate slot; else the
    /// stack top when its *effective* level is at least the *base* level of the highest
    /// non-empty interrupt queue (ties go to the stack); else that queue's head; else the
    /// ready queue's head. Returns `None` when nothing is ready or a task is still running.
    pub fn next(&mut self, now: Instant) -> Option<Next<I, F>> {
        if self.running.is_some() {
            return None;
        }
        let picked = match self.immediate.take() {
            Some(task) => Next::New(task),
            None => self.select_waiting()?,
        };
        self.running = Some(RunningTask::of(picked.task(), now));
        Some(picked)
    }

    fn select_waiting(&mut self) -> Option<Next<I, F>> {
        let queue_level = self.interrupts.highest_head().map(|(_, level)| level);
        let stack_wins = self.stack.last().is_some_and(|(top, _)| {
            queue_level.is_none_or(|level| top.effective_level() >= level.as_u8())
        });
        if stack_wins {
            let (task, frame) = self.stack.pop()?;
            self.stats.resumed += 1;
            return Some(Next::Resume(task, frame));
        }
        match queue_level {
            Some(level) => self.interrupts.pop(level).map(Next::New),
            None => self.ready.pop_front().map(Next::New),
        }
    }

    /// Re-evaluates the queued interrupts at a safe point (SPEC §2.6 step 1), so that one that
    /// arrived during a critical section or the victim's cooldown is not left waiting until
    /// the running task ends. Returns true when it armed; the caller then cancels the
    /// in-flight LLM call.
    pub fn rearm_pending(&mut self, now: Instant) -> bool {
        if self.preempt.is_some() || self.immediate.is_some() || self.critical {
            return false;
        }
        let Some(running) = self.running else {
            return false;
        };
        if running.in_cooldown(now, self.cooldown) {
            return false;
        }
        let Some(task) = self.interrupts.pop_first_head(|t| t.can_preempt(&running)) else {
            return false;
        };
        let level = task.level;
        self.immediate = Some(task);
        self.arm(level);
        true
    }

    /// Whether the running task must yield at this safe point: not critical, armed for an
    /// interrupt whose base level is above the running task's effective level, and the stack
    /// has room below its structural depth.
    pub fn should_suspend(&self) -> bool {
        let granted = match (self.preempt, self.running) {
            (Some(level), Some(running)) => level.as_u8() > running.effective_level,
            _ => false,
        };
        !self.critical && granted && self.stack.len() < MAX_INTERRUPT_FRAMES
    }

    /// Saves a yielding task with its frame. A frame is never dropped: pushing beyond the
    /// structural depth only counts a rejection. The task's preemption count (its starvation
    /// guard) rises and its cooldown starts now.
    pub fn suspend(&mut self, mut task: Task<I>, frame: F, now: Instant) {
        if self.stack.len() >= MAX_INTERRUPT_FRAMES {
            self.stats.rejected += 1;
        }
        task.preempt_count = task.preempt_count.saturating_add(1);
        task.last_preempt_at = Some(now);
        self.release_running(task.id);
        self.stack.push((task, frame));
        self.stats.suspended += 1;
        self.stats.max_stack_depth = self.stats.max_stack_depth.max(self.stack.len() as u64);
        self.preempt = None;
    }

    /// Reports a task finished (whatever its outcome): clears it as running, disarms (a
    /// pending interrupt is already in the immediate slot or a queue) and counts it executed.
    pub fn done(&mut self, id: TaskId) {
        self.release_running(id);
        self.preempt = None;
        self.stats.executed += 1;
    }

    /// The critical flag belongs to the running task, so it ends with that task's run.
    fn release_running(&mut self, id: TaskId) {
        if self.running.is_some_and(|r| r.id == id) {
            self.running = None;
            self.critical = false;
        }
    }

    /// Set while the running task is on the critical channel: interrupts are then only
    /// queued, never armed, and the task never yields.
    pub fn set_critical(&mut self, on: bool) {
        self.critical = on;
    }

    /// Whether the running task came on the critical channel.
    pub fn is_critical(&self) -> bool {
        self.critical
    }

    /// The running task, if any.
    pub fn running(&self) -> Option<RunningTask> {
        self.running
    }

    /// The base level the running task has been asked to yield to, if armed.
    pub fn preempt_level(&self) -> Option<Level> {
        self.preempt
    }

    /// Records the state of the ready queue as seen by the inbox pump. Returns true on the
    /// transition from having room to full, which is the one moment worth a log line; only
    /// that transition is counted in `backpressure`.
    pub fn note_backpressure(&mut self, full: bool) -> bool {
        let became_full = full && !self.backpressured;
        if became_full {
            self.stats.backpressure += 1;
        }
        self.backpressured = full;
        became_full
    }

    /// Whether the ready queue can take another input; the pump stops when it cannot, so
    /// senders block on their channel instead of being turned away.
    pub fn has_room(&self) -> bool {
        self.ready.len() < self.max_queue
    }

    /// Counters since start.
    pub fn stats(&self) -> &SchedulerStats {
        &self.stats
    }

    /// Takes every task still owed a terminal reply out of the scheduler (shutdown): the
    /// immediate slot, the interrupt queues (L4 first), the suspend stack (top first, with
    /// frames) and the ready queue. The running task stays with the executor.
    pub fn drain_all(&mut self) -> Vec<Drained<I, F>> {
        let mut out = Vec::with_capacity(
            self.pending_interrupt_count() + self.stack.len() + self.ready.len(),
        );
        out.extend(self.immediate.take().map(Drained::Pending));
        out.extend(self.interrupts.drain().map(Drained::Pending));
        out.extend(
            self.stack
                .drain(..)
                .rev()
                .map(|(task, frame)| Drained::Suspended(task, frame)),
        );
        out.extend(self.ready.drain(..).map(Drained::Pending));
        self.preempt = None;
        out
    }

    /// Nothing running and nothing waiting.
    pub fn is_idle(&self) -> bool {
        self.running.is_none()
            && self.immediate.is_none()
            && self.ready.is_empty()
            && self.interrupts.len() == 0
            && self.stack.is_empty()
    }

    /// Inputs in the ready queue.
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Interrupts waiting in the level queues plus the immediate slot.
    pub fn pending_interrupts(&self) -> usize {
        self.pending_interrupt_count()
    }

    /// Suspended tasks on the stack.
    pub fn stack_depth(&self) -> usize {
        self.stack.len()
    }

    /// The ready queue's capacity.
    pub fn max_queue(&self) -> usize {
        self.max_queue
    }

    /// Arms a stop. `pending_inputs` counts inputs still in the inbox channel and not yet
    /// pumped: while a task runs the ready queue is usually empty, so counting it alone would
    /// cancel nothing. The budget is a snapshot of what was waiting, and repeated stops (two
    /// clients pressing at once) take the larger count instead of adding up. Returns the
    /// budget now in force.
    pub fn arm_stop(&mut self, pending_inputs: usize) -> usize {
        let queued = self.ready.len().saturating_add(pending_inputs);
        self.stop.arm(queued)
    }

    /// Consumes the armed stop: true means the cancelled LLM call ends its task.
    pub fn take_stop(&mut self) -> bool {
        self.stop.take()
    }

    /// Consumes one unit of the cancel budget: true means the task reaching its pre-action
    /// point finishes at once as cancelled. The budget is a count, not tied to tasks.
    pub fn consume_cancel(&mut self) -> bool {
        self.stop.consume()
    }

    /// Whether a stop is armed and not yet consumed.
    pub fn stop_armed(&self) -> bool {
        self.stop.armed
    }

    /// The cancel budget still in force.
    pub fn cancel_budget(&self) -> usize {
        self.stop.cancel_budget
    }
}
