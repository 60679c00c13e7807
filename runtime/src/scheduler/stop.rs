//! The stop button (SPEC §2.8): end the current generation and cancel what was waiting.

use super::sched::Scheduler;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StopState {
    /// The next cancelled LLM call ends its task instead of being retried.
    pub(super) armed: bool,
    /// How many of the tasks that were waiting at the stop still finish at once.
    pub(super) cancel_budget: usize,
}

impl<I, F> Scheduler<I, F> {
    /// Arms a stop. `pending_inputs` counts inputs still in the inbox channel and not yet
    /// pumped: while a task runs the ready queue is usually empty, so counting it alone would
    /// cancel nothing. The budget is a snapshot of what was waiting, and repeated stops (two
    /// clients pressing at once) take the larger count instead of adding up. Returns the
    /// budget now in force.
    pub fn arm_stop(&mut self, pending_inputs: usize) -> usize {
        let queued = self.ready.len().saturating_add(pending_inputs);
        self.stop.cancel_budget = self.stop.cancel_budget.max(queued);
        self.stop.armed = true;
        self.stop.cancel_budget
    }

    /// Consumes the armed stop: true means the cancelled LLM call ends its task.
    pub fn take_stop(&mut self) -> bool {
        std::mem::take(&mut self.stop.armed)
    }

    /// Consumes one unit of the cancel budget: true means the task reaching its pre-action
    /// point finishes at once as cancelled. The budget is a count, not tied to tasks.
    pub fn consume_cancel(&mut self) -> bool {
        match self.stop.cancel_budget.checked_sub(1) {
            Some(rest) => {
                self.stop.cancel_budget = rest;
                true
            }
            None => false,
        }
    }

    pub fn stop_armed(&self) -> bool {
        self.stop.armed
    }

    pub fn cancel_budget(&self) -> usize {
        self.stop.cancel_budget
    }
}
