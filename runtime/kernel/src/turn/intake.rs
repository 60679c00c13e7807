//! What arrives at the turn engine: inputs into the ready queue (and those resumed after a
//! restart), interrupts and stops, the kernel's own L4, and the inputs it answers without
//! running them.

use super::*;

impl TurnEngine {
    /// Answers `shutdown` to an input whose caller waits, journaled as its end so it does not run
    /// again after a restart; an input nobody waits for (resumed from the journal) is left
    /// pending and resumes at the next start. Returns whether a caller was answered.
    pub fn end_at_shutdown(&self, input: &mut InputEvent) -> bool {
        let waited = input.has_reply();
        if waited {
            self.skip(input, skip::SHUTDOWN);
        }
        waited
    }

    /// Answers an input the engine will not run (`queue_full`), journaled when durable.
    pub fn skip_input(&self, input: &mut InputEvent, reason: &str) {
        self.skip(input, reason);
    }

    /// Moves inputs resumed after a restart into the ready queue while it has room, oldest
    /// first. The kernel's pump calls it before it takes new inputs, so acceptance order holds.
    /// Returns whether any input moved.
    pub fn feed_backlog(&mut self, now: Instant) -> bool {
        let mut moved = false;
        while self.has_room() {
            let Some(input) = self.backlog.pop() else {
                break;
            };
            moved = true;
            if let Err(input) = self.accept_input(input, TaskKind::Input, now) {
                // Room was just checked; should the queue refuse anyway, the input stays
                // pending in the journal and resumes at the next start.
                tracing::error!(request = %input.request_id, "ready queue refused a resumed input; left pending");
            }
        }
        moved
    }

    /// Inputs resumed after a restart still waiting for room in the ready queue.
    pub fn backlog_len(&self) -> usize {
        self.backlog.len()
    }

    /// Whether the ready queue can take another queued input.
    pub fn has_room(&self) -> bool {
        self.sched.has_room()
    }

    /// Records whether inputs are waiting for room; logs only on the transition to full.
    pub fn note_backpressure(&mut self, full: bool) {
        if self.sched.note_backpressure(full) {
            tracing::warn!(
                max = self.sched.max_queue(),
                "ready queue full: new inputs are answered queue_full"
            );
        }
    }

    /// Queues an ordinary input. A full queue hands it back (the caller keeps it in the edge).
    // Handing the input back whole is the point (its caller must still be answered), and it
    // happens only on the cold full-queue path, so its size does not matter.
    #[allow(clippy::result_large_err)]
    pub fn accept_input(
        &mut self,
        input: InputEvent,
        kind: TaskKind,
        now: Instant,
    ) -> Result<(), InputEvent> {
        self.sched
            .enqueue(input, kind, now)
            .map(|_| ())
            .map_err(|full| full.into_inner())
    }

    /// Takes an interrupt (SPEC §2.5) or a stop (SPEC §2.8). `pending_inputs` is the number of
    /// inputs accepted by the ingress but not yet pumped into the scheduler.
    pub fn accept_interrupt(&mut self, mut input: InputEvent, pending_inputs: usize, now: Instant) {
        // The front door refuses these already; a journal row or a test harness must not
        // smuggle one past it.
        if crate::admission::deny_if_refused(&mut input) {
            return;
        }
        if input.flag("stop") {
            let budget = self.sched.arm_stop(pending_inputs);
            // A task already past its terminal (its reply waits only for before_output) has
            // nothing left to stop.
            let stopping = self.current.as_ref().is_some_and(|c| !c.finishing());
            if !stopping {
                // Nothing runs: the stop is only a budget for queued inputs, never for later ones.
                self.sched.take_stop();
            }
            self.cancel_llm();
            if let Some(cur) = self.current.as_ref().filter(|_| stopping) {
                cur.cancel.cancel();
            }
            // A task waiting on memory, on a stage's handlers or on a tool ends now; the late
            // result is dropped by its call number (the cancel above ends a stage job and a
            // cancellable tool early). One waiting on the LLM ends when the cut call comes back,
            // which the socket shutdown makes immediate.
            let waiting_elsewhere = stopping
                && self.current.as_ref().is_some_and(|c| {
                    matches!(
                        c.wait,
                        Wait::Memory { .. } | Wait::Tools(_) | Wait::Stage { .. }
                    )
                });
            if waiting_elsewhere && self.sched.take_stop() {
                let mut cur = self.current.take().expect("checked above");
                cur.wait = Wait::Ready;
                let text = if cur.frame.last_content.trim().is_empty() {
                    texts::stopped(cur.frame.lang).to_string()
                } else {
                    cur.frame.last_content.clone()
                };
                cur.frame.terminal = Some(Terminal::Ok(text));
                self.settle(cur);
            }
            let content = json!({"stopped": stopping, "cancel_budget": budget}).to_string();
            input.send_reply(Reply {
                content,
                ..Reply::default()
            });
            return;
        }
        if input.content().trim().is_empty() {
            input.skip(skip::EMPTY_INPUT);
            return;
        }
        let level = crate::admission::interrupt_level(&input);
        self.register(input, level, now);
    }

    /// Registers an interrupt; a preemption cuts the in-flight call, an overflow eviction is
    /// answered `queue_full`.
    pub(super) fn register(&mut self, input: InputEvent, level: Level, now: Instant) {
        let registered = self.sched.register_interrupt(input, level, now);
        let preempted = registered.preempted();
        if let Some(mut evicted) = registered.into_dropped() {
            self.skip(&mut evicted.input, skip::QUEUE_FULL);
        }
        if preempted {
            self.cancel_llm();
        }
    }

    /// Raises a kernel L4 interrupt (never clamped).
    pub fn raise_kernel_interrupt(&mut self, text: String, now: Instant) {
        let mut payload = Map::new();
        payload.insert("content".into(), Value::String(text));
        payload.insert("kernel".into(), Value::Bool(true));
        payload.insert("interrupt".into(), Value::Bool(true));
        payload.insert("interrupt_source".into(), "kernel".into());
        payload.insert("interrupt_channel".into(), "kernel".into());
        let input = InputEvent::new("kernel", payload).with_trust(Trust::Kernel);
        self.register(input, Level::L4, now);
    }
}
