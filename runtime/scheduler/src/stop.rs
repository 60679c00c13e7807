//! The stop button (SPEC §2.8): end the current generation and cancel what was waiting.

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StopState {
    /// The next cancelled LLM call ends its task instead of being retried.
    pub(super) armed: bool,
    /// How many of the tasks that were waiting at the stop still finish at once.
    pub(super) cancel_budget: usize,
}

impl StopState {
    /// Arms a stop over `queued` waiting tasks; repeated stops take the larger count.
    pub(super) fn arm(&mut self, queued: usize) -> usize {
        self.cancel_budget = self.cancel_budget.max(queued);
        self.armed = true;
        self.cancel_budget
    }

    /// Consumes the armed flag.
    pub(super) fn take(&mut self) -> bool {
        std::mem::take(&mut self.armed)
    }

    /// Consumes one unit of the cancel budget, if any is left.
    pub(super) fn consume(&mut self) -> bool {
        match self.cancel_budget.checked_sub(1) {
            Some(rest) => {
                self.cancel_budget = rest;
                true
            }
            None => false,
        }
    }
}
