//! Running a stage for the current task without waiting on it. A stage whose due handlers are all
//! inline ends on the spot; one that reaches a blocking handler becomes a request to the stage
//! service, like an LLM call, and the task waits in `Wait::Stage` while the kernel keeps taking
//! stops and interrupts. Either way the task then goes on at the step named by [`Then`].

use super::{Current, TurnEngine, Wait};
use hearth_engine::CancelToken;
use hearth_ipc::EventKind;
use hearth_llm::provider::Usage;
use hearth_stages::{CallContext, Caller, Cancel, Stage, StageContext, StageDone, StageStep};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The longest a stage as a whole may take; each handler has its own (shorter) timeout.
pub(super) const STAGE_DEADLINE: Duration = Duration::from_secs(60);

/// Where a task goes once a stage's handlers are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Then {
    /// on_input ran: short-circuit or go on to memory / prepare.
    OnInput,
    /// pre_action ran: build the LLM request.
    PreAction,
    /// post_action ran over the LLM's answer (with the usage it reported, if any).
    PostAction { usage: Option<Usage> },
    /// before_toolcall ran for tool `index` of a parallel batch.
    BatchBefore { index: usize },
    /// before_toolcall ran for the next tool of a serial batch.
    SerialBefore { index: usize },
    /// after_toolcall ran for tool `index`.
    AfterTool { index: usize },
    /// before_output ran over the reply.
    BeforeOutput { error: bool },
}

/// A view of a task's stop token for its handlers.
pub(super) fn cancel_view(token: &CancelToken) -> Cancel {
    let token = token.clone();
    Cancel::observe(move || token.is_cancelled())
}

impl TurnEngine {
    /// The context of a handler call made for `cur`: its task, its input's source and trust,
    /// `cancel`, due `within` from now.
    pub(super) fn call_context(cur: &Current, cancel: Cancel, within: Duration) -> CallContext {
        let input = &cur.task.input;
        CallContext::new(
            cur.task.id,
            Caller::new(input.source.clone(), input.trust).in_turn(input.request_id.clone()),
            cancel,
            Instant::now() + within,
        )
    }

    /// Publishes the `stage` event and starts `stage` over `ctx`: it either ends now (the task
    /// goes on at `then` at once) or leaves the task waiting for the stage service.
    pub(super) fn run_stage(
        &mut self,
        cur: &mut Current,
        stage: Stage,
        ctx: StageContext,
        then: Then,
    ) {
        let mut event = json!({"phase": stage.as_str(), "channel": cur.frame.output_channel});
        if let Some(call) = ctx.tool_calls.first() {
            event["tool"] = Value::String(call.name.clone());
        }
        self.events.publish(EventKind::Stage, &event);
        // The reply goes out through before_output whatever stopped the task: a stop must not
        // skip a filter.
        let cancel = match then {
            Then::BeforeOutput { .. } => Cancel::never(),
            _ => cancel_view(&cur.cancel),
        };
        let call_ctx = Self::call_context(cur, cancel, STAGE_DEADLINE);
        let job = match self.pool.env().stages.start(stage, &call_ctx, ctx) {
            StageStep::Done(done) => return self.after_stage(cur, then, done),
            StageStep::Pending(job) => job,
        };
        let call = self.next_call_id();
        let job = match &self.stage_service {
            Some(service) => match service.submit(call, job, true) {
                Ok(()) => {
                    cur.wait = Wait::Stage { call, then };
                    return;
                }
                Err(job) => {
                    tracing::error!(
                        stage = stage.as_str(),
                        "stage service stopped; running the stage on the kernel's worker"
                    );
                    job
                }
            },
            None => job,
        };
        let done = job.run();
        self.after_stage(cur, then, done);
    }

    /// Runs an observer-only stage (after_output) without waiting for it at all.
    pub(super) fn run_stage_detached(&mut self, cur: &Current, stage: Stage, ctx: StageContext) {
        self.events.publish(
            EventKind::Stage,
            &json!({"phase": stage.as_str(), "channel": cur.frame.output_channel}),
        );
        let call_ctx = Self::call_context(cur, Cancel::never(), STAGE_DEADLINE);
        if let StageStep::Pending(job) = self.pool.env().stages.start(stage, &call_ctx, ctx) {
            let call = self.next_call_id();
            let dropped = match &self.stage_service {
                Some(service) => service.submit(call, job, false).is_err(),
                None => {
                    let _ = job.run();
                    false
                }
            };
            if dropped {
                tracing::warn!(
                    stage = stage.as_str(),
                    "stage service queue full; observers skipped"
                );
            }
        }
    }

    /// A stage job came back; `None` when the job itself broke outside any handler (their
    /// panics are caught inside it): the context went with it, so the task fails, and a reply
    /// that was waiting for before_output goes out as an error without its text.
    pub(super) fn after_stage_job(
        &mut self,
        cur: &mut Current,
        then: Then,
        done: Option<StageDone>,
    ) {
        match (done, then) {
            (Some(done), then) => self.after_stage(cur, then, done),
            (None, Then::BeforeOutput { .. }) => {
                let ctx = StageContext::with_final_text(super::texts::processing_error(
                    cur.frame.lang,
                    "the reply filter failed",
                ));
                self.emit_reply(cur, ctx, false, true);
            }
            (None, _) => {
                cur.frame.terminal = Some(super::Terminal::Failed("a stage job failed".into()));
            }
        }
    }

    fn after_stage(&mut self, cur: &mut Current, then: Then, done: StageDone) {
        let StageDone { ctx, run } = done;
        let responded = run.responded && !run.cancelled;
        match then {
            Then::OnInput => self.after_on_input(cur, ctx, responded),
            Then::PreAction => self.after_pre_action(cur, ctx, responded),
            Then::PostAction { usage } => self.after_post_action(cur, ctx, responded, usage),
            Then::BatchBefore { index } => {
                self.after_before_toolcall(cur, index, ctx, responded);
                cur.frame.tool_idx += 1;
            }
            Then::SerialBefore { index } => {
                if self.after_before_toolcall(cur, index, ctx, responded) {
                    cur.frame.step = super::Step::ToolExec;
                } else {
                    self.deliver_denial(cur, index);
                    cur.frame.tool_idx += 1;
                }
            }
            Then::AfterTool { index } => self.after_after_toolcall(cur, index, ctx),
            Then::BeforeOutput { error } => self.emit_reply(cur, ctx, responded, error),
        }
    }
}
