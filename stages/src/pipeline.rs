//! The stage pipeline: ordered, isolated, time-limited handler runs.

use std::fmt;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::runner::RunnerPool;
use crate::stage_job::{Advance, StageDone, StageJob, StageStep, Walk};
use crate::stage_run::{Entry, StageRun};
use crate::{CallContext, HandlerId, HandlerSpec, Stage, StageContext, StageHandler};

/// The seven stages' handler lists and the machinery to run them.
///
/// Deterministic by design (the original ran a stage's handlers in parallel on one shared mutable
/// context, which raced): handlers run one after another, higher `priority` first, then in
/// registration order. Each works on its own copy of the context, which replaces the caller's
/// context only when the handler returns (within its timeout), so a panicking or hung handler never
/// leaves a half-written context. Once `ctx.response` is `Some`, the rest of the stage is skipped.
///
/// Where a handler runs depends on what it declared ([`HandlerSpec::inline`]): an inline handler
/// runs on the thread running the stage, a blocking one on a pooled runner thread under its
/// timeout. [`StagePipeline::start`] runs what it can without blocking and hands back the rest as a
/// [`StageJob`]; [`StagePipeline::run`] does both on the calling thread.
///
/// `after_output` is run the same way, sequentially. It is read-only in intent and could fan out,
/// but a sequential run keeps the one rule "response short-circuits, order is priority" true at
/// every stage; the turn engine runs it after the reply has left, so its latency is not the
/// user's.
///
/// Registration and runs may happen concurrently from any thread: a run works on a snapshot of the
/// list taken when it starts, so handlers registered or removed meanwhile affect only later runs.
pub struct StagePipeline {
    stages: [RwLock<Arc<Vec<Entry>>>; 7],
    next_seq: Mutex<u64>,
    runners: Arc<RunnerPool>,
}

impl Default for StagePipeline {
    fn default() -> Self {
        StagePipeline::new()
    }
}

impl fmt::Debug for StagePipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for stage in Stage::ALL {
            map.entry(&stage.as_str(), &self.plugins(stage));
        }
        map.finish()
    }
}

impl StagePipeline {
    /// A pipeline with no handlers.
    pub fn new() -> StagePipeline {
        StagePipeline {
            stages: std::array::from_fn(|_| RwLock::new(Arc::new(Vec::new()))),
            next_seq: Mutex::new(0),
            runners: Arc::default(),
        }
    }

    /// Add a handler to `stage`.
    pub fn register(
        &self,
        stage: Stage,
        spec: HandlerSpec,
        handler: impl StageHandler,
    ) -> HandlerId {
        self.register_shared(stage, spec, Arc::new(handler))
    }

    /// Add a handler that is already shared (e.g. one bridge object serving several stages).
    pub fn register_shared(
        &self,
        stage: Stage,
        spec: HandlerSpec,
        handler: Arc<dyn StageHandler>,
    ) -> HandlerId {
        let mut list = self.stages[stage.index()].write();
        // Taken under the list lock so sequence order is the order entries land in the lists.
        let seq = {
            let mut next = self.next_seq.lock();
            *next += 1;
            *next
        };
        let id = HandlerId { stage, seq };
        // Sequence numbers only grow, so the new entry goes after every entry of equal or higher
        // priority: that is "priority, then registration order".
        let at = list.partition_point(|e| e.spec.priority >= spec.priority);
        Arc::make_mut(&mut list).insert(at, Entry { id, spec, handler });
        id
    }

    /// Remove one registration; false when it was already gone.
    pub fn unregister(&self, id: HandlerId) -> bool {
        let mut list = self.stages[id.stage.index()].write();
        match list.iter().position(|e| e.id == id) {
            Some(at) => {
                Arc::make_mut(&mut list).remove(at);
                true
            }
            None => false,
        }
    }

    /// Remove every handler of `plugin` on every stage; returns how many were removed.
    pub fn unregister_plugin(&self, plugin: &str) -> usize {
        let mut removed = 0;
        for slot in &self.stages {
            let mut list = slot.write();
            if list.iter().any(|e| e.spec.plugin == plugin) {
                let list = Arc::make_mut(&mut list);
                let before = list.len();
                list.retain(|e| e.spec.plugin != plugin);
                removed += before - list.len();
            }
        }
        removed
    }

    /// How many handlers `stage` has.
    pub fn handlers(&self, stage: Stage) -> usize {
        self.stages[stage.index()].read().len()
    }

    /// The owning plugins of `stage`'s handlers, in run order.
    pub fn plugins(&self, stage: Stage) -> Vec<String> {
        self.snapshot(stage)
            .iter()
            .map(|e| e.spec.plugin.clone())
            .collect()
    }

    fn snapshot(&self, stage: Stage) -> Arc<Vec<Entry>> {
        Arc::clone(&self.stages[stage.index()].read())
    }

    /// Start `stage` over `ctx` without blocking: set `ctx.phase`, then run handlers in order
    /// until one responds, the stage ends, or the next handler is a blocking one; in that last case
    /// the rest is handed back as a [`StageJob`].
    ///
    /// A handler's `Err(e)` is appended to `ctx.errors` as `"<plugin>: <e>"` (its writes are
    /// kept: it returned normally); a panic or timeout appends `"<plugin>: handler panicked: ..."`
    /// / `"<plugin>: handler timed out after 5s"` and discards its writes. If `ctx.response` is
    /// already `Some` on entry, no handler runs. Each handler gets `call` narrowed to its own
    /// timeout; if `call` is already cancelled, no handler runs and the result is
    /// [`StageRun::cancelled`].
    pub fn start(&self, stage: Stage, call: &CallContext, mut ctx: StageContext) -> StageStep {
        if ctx.phase != stage.as_str() {
            ctx.phase.clear();
            ctx.phase.push_str(stage.as_str());
        }
        let list = self.snapshot(stage);
        let mut walk = Walk::new(stage, list, call, ctx);
        let ended = if call.is_cancelled() {
            Advance::Cancelled
        } else {
            walk.advance(None)
        };
        match ended {
            Advance::Blocked => StageStep::Pending(StageJob::new(walk, Arc::clone(&self.runners))),
            ended => StageStep::Done(walk.finish(ended)),
        }
    }

    /// Run `stage` over `ctx` to its end on this thread, blocking while blocking handlers run:
    /// [`StagePipeline::start`] and then, if needed, [`StageJob::run`].
    pub fn run(&self, stage: Stage, call: &CallContext, ctx: &mut StageContext) -> StageRun {
        let StageDone { ctx: after, run } = match self.start(stage, call, std::mem::take(ctx)) {
            StageStep::Done(done) => done,
            StageStep::Pending(job) => job.run(),
        };
        *ctx = after;
        run
    }

    #[cfg(test)]
    fn idle_runners(&self) -> usize {
        self.runners.idle_count()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::stage_fn;

    fn mark(tag: &'static str) -> impl StageHandler {
        stage_fn(move |ctx: &mut StageContext| {
            ctx.final_text.push_str(tag);
            Ok(())
        })
    }

    fn call() -> CallContext {
        CallContext::kernel(Duration::from_secs(10))
    }

    #[test]
    fn runners_are_reused_not_spawned_per_handler() {
        let pipeline = StagePipeline::new();
        assert_eq!(pipeline.idle_runners(), 0);
        for tag in ["a", "b", "c"] {
            pipeline.register(Stage::OnInput, HandlerSpec::new(tag), mark(tag));
        }
        let mut ctx = StageContext::default();
        pipeline.run(Stage::OnInput, &call(), &mut ctx);
        pipeline.run(Stage::OnInput, &call(), &mut ctx);
        assert_eq!(ctx.final_text, "abcabc");
        // One run uses one runner for all its handlers and hands it back.
        assert_eq!(pipeline.idle_runners(), 1);
    }

    #[test]
    fn inline_handlers_never_take_a_runner() {
        let pipeline = StagePipeline::new();
        for tag in ["a", "b"] {
            pipeline.register(Stage::OnInput, HandlerSpec::new(tag).inline(), mark(tag));
        }
        let mut ctx = StageContext::default();
        pipeline.run(Stage::OnInput, &call(), &mut ctx);
        assert_eq!(ctx.final_text, "ab");
        assert_eq!(pipeline.idle_runners(), 0);
    }

    #[test]
    fn a_stage_without_handlers_takes_no_runner() {
        let pipeline = StagePipeline::new();
        let mut ctx = StageContext::default();
        let run = pipeline.run(Stage::PreAction, &call(), &mut ctx);
        assert_eq!(run, StageRun::default());
        assert_eq!(ctx.phase, "pre_action");
        assert_eq!(pipeline.idle_runners(), 0);
    }

    #[test]
    fn unregister_by_id_removes_only_that_handler() {
        let pipeline = StagePipeline::new();
        let a = pipeline.register(Stage::PostAction, HandlerSpec::new("a"), mark("a"));
        pipeline.register(Stage::PostAction, HandlerSpec::new("b"), mark("b"));
        assert_eq!(a.stage(), Stage::PostAction);
        assert!(pipeline.unregister(a));
        assert!(!pipeline.unregister(a));
        assert_eq!(pipeline.plugins(Stage::PostAction), vec!["b".to_owned()]);
    }
}
