//! One stage run as a request: the part that must not leave the caller's thread, and the part that
//! may block, packed so a service thread can finish it while the caller keeps working.

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use crate::runner::{Lease, Outcome, RunnerPool, invoke};
use crate::stage_run::{Entry, StageRun};
use crate::{CallContext, Stage, StageContext};

/// What [`StagePipeline::start`](crate::StagePipeline::start) returns.
#[must_use = "a pending stage must be run, or its handlers never see the context"]
#[derive(Debug)]
// `Done` is the hot path (every turn, every stage); boxing it would allocate per stage, while the
// rare `Pending` is already a box.
#[allow(clippy::large_enum_variant)]
pub enum StageStep {
    /// No blocking handler had to run: the stage is over (on the caller's thread).
    Done(StageDone),
    /// A blocking handler is next: run the job on a service thread and take its result back
    /// through whatever the caller waits on (an edge, a channel).
    Pending(StageJob),
}

/// A finished (or cancelled) stage run.
#[derive(Debug, Clone, PartialEq)]
pub struct StageDone {
    /// The context after the stage; when [`StageRun::cancelled`] it is the context as given.
    pub ctx: StageContext,
    /// What ran, what was skipped, what failed.
    pub run: StageRun,
}

/// The rest of a stage run, from its first blocking handler on. `Send`, so it can be moved to the
/// thread that runs it; dropping it unrun runs none of the remaining handlers.
pub struct StageJob {
    /// Boxed: only the blocking path pays for moving two contexts around.
    walk: Box<Walk>,
    runners: Arc<RunnerPool>,
}

impl fmt::Debug for StageJob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StageJob")
            .field("stage", &self.walk.stage)
            .field("next", &self.next_plugin())
            .finish_non_exhaustive()
    }
}

impl StageJob {
    pub(crate) fn new(walk: Walk, runners: Arc<RunnerPool>) -> StageJob {
        StageJob {
            walk: Box::new(walk),
            runners,
        }
    }

    /// The stage this job finishes.
    pub fn stage(&self) -> Stage {
        self.walk.stage
    }

    /// The plugin whose (blocking) handler runs next.
    pub fn next_plugin(&self) -> &str {
        self.walk
            .list
            .get(self.walk.at)
            .map_or("", |e| e.spec.plugin.as_str())
    }

    /// Run the remaining handlers here, blocking: inline ones directly, blocking ones on runner
    /// threads under their timeouts. The call's cancellation is checked before every handler and
    /// while waiting for one; once cancelled, the run ends within a few milliseconds and none of the
    /// stage's writes are kept.
    pub fn run(mut self) -> StageDone {
        let mut lease = Lease::new(Arc::clone(&self.runners));
        let ended = self.walk.advance(Some(&mut lease));
        self.walk.finish(ended)
    }
}

/// How far [`Walk::advance`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Advance {
    /// Every handler ran or was skipped.
    Finished,
    /// The next handler blocks and there is no runner lease here.
    Blocked,
    Cancelled,
}

/// The state of one stage run between handlers.
pub(crate) struct Walk {
    pub(crate) stage: Stage,
    pub(crate) list: Arc<Vec<Entry>>,
    /// The next handler to consider.
    pub(crate) at: usize,
    pub(crate) call: CallContext,
    pub(crate) ctx: StageContext,
    /// The context as given, kept only when a blocking handler may run (only then can a cancel
    /// arrive mid-run): a cancelled run hands it back instead of the half-run context.
    pub(crate) original: Option<StageContext>,
    pub(crate) report: StageRun,
}

impl Walk {
    pub(crate) fn new(
        stage: Stage,
        list: Arc<Vec<Entry>>,
        call: &CallContext,
        ctx: StageContext,
    ) -> Walk {
        let original = list.iter().any(|e| !e.spec.inline).then(|| ctx.clone());
        Walk {
            stage,
            list,
            at: 0,
            call: call.clone(),
            ctx,
            original,
            report: StageRun::default(),
        }
    }

    /// Run handlers in order until the stage is over, or (without a lease) until the next one
    /// blocks. Inline handlers run here; with a lease, blocking ones run on its runners.
    pub(crate) fn advance(&mut self, mut lease: Option<&mut Lease>) -> Advance {
        while let Some(entry) = self.list.get(self.at) {
            // Without a lease this runs on the caller's thread, which is what cancels: nothing can
            // fire in between, and the caller checked once before the first handler.
            if lease.is_some() && self.call.is_cancelled() {
                return Advance::Cancelled;
            }
            if self.ctx.response.is_some() {
                self.report
                    .skipped_after_response
                    .extend(self.list[self.at..].iter().map(|e| e.spec.plugin.clone()));
                self.at = self.list.len();
                break;
            }
            let plugin = &entry.spec.plugin;
            if !entry.spec.scope.applies(self.stage, plugin, &self.ctx) {
                self.report.skipped_scope.push(plugin.clone());
                self.at += 1;
                continue;
            }
            let started = Instant::now();
            let call = self.call.narrowed(started + entry.spec.timeout);
            let limit = call.deadline().saturating_duration_since(started);
            let outcome = if limit.is_zero() {
                Outcome::TimedOut
            } else if entry.spec.inline {
                let outcome = invoke(&*entry.handler, &call, self.ctx.clone());
                let took = started.elapsed();
                if took > limit {
                    tracing::warn!(
                        stage = self.stage.as_str(),
                        plugin = plugin.as_str(),
                        "inline handler took {took:?}, over its {limit:?}; it should be declared blocking"
                    );
                }
                outcome
            } else {
                match lease.as_deref_mut() {
                    Some(lease) => lease.execute(&entry.handler, call, self.ctx.clone()),
                    None => return Advance::Blocked,
                }
            };
            let failure = match outcome {
                Outcome::Returned(copy, result) => {
                    self.ctx = copy;
                    self.report.ran.push(plugin.clone());
                    if self.ctx.response.is_some() {
                        self.report.responded_by = Some(plugin.clone());
                    }
                    result.err().map(|err| format!("{plugin}: {err}"))
                }
                Outcome::Panicked(msg) => {
                    self.report.panicked.push(plugin.clone());
                    Some(format!("{plugin}: handler panicked: {msg}"))
                }
                Outcome::TimedOut => {
                    self.report.timed_out.push(plugin.clone());
                    Some(format!("{plugin}: handler timed out after {limit:?}"))
                }
                Outcome::Cancelled => return Advance::Cancelled,
            };
            if let Some(line) = failure {
                tracing::warn!(stage = self.stage.as_str(), "{line}");
                self.ctx.errors.push(line.clone());
                self.report.errors.push(line);
            }
            self.at += 1;
        }
        Advance::Finished
    }

    /// The result of a walk that ended as `ended` (`Finished` or `Cancelled`).
    pub(crate) fn finish(self, ended: Advance) -> StageDone {
        let Walk {
            ctx,
            original,
            mut report,
            ..
        } = self;
        let ctx = if ended == Advance::Cancelled {
            report.cancelled = true;
            original.unwrap_or(ctx)
        } else {
            ctx
        };
        report.responded = ctx.is_responded();
        StageDone { ctx, run: report }
    }
}
