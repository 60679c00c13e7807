//! The turn engine: runs the task state machine of SPEC §3 under the input scheduler of SPEC §2.
//!
//! It is event-driven. A step either completes at once or starts asynchronous work (an LLM
//! call on the provider thread, tools on the tool pool) and waits for its [`Completion`]. While
//! a task waits, interrupts and stops are still taken: the scheduler arms a preemption and the
//! in-flight LLM call is cancelled. Safe points lie only between steps: there the engine
//! re-arms pending interrupts and suspends the task if a preemption was granted. Every task
//! ends in exactly one terminal reply (I5), including on shutdown.

mod abandon;
mod backlog;
mod finish;
mod frame;
mod intake;
mod llm;
mod offer;
mod prepare;
mod stage;
pub mod texts;
mod tool_media;
mod tool_memory;
mod tools;

pub use frame::{Step, TaskFrame, Terminal, ToolOutcome};

use crate::completion::Completion;
use crate::durable::{Durable, Recovered};
use crate::events::EventBus;
use crate::input::{InputEvent, Reply, Trust, skip};
use crate::memory_service::{MemoryDone, MemoryService, PassBudget, PassRequest};
use crate::provider_service::{LlmDone, ProviderService};
use crate::stage_service::{StageJobDone, StageService};
use crate::tool_pool::{ToolDone, ToolPool};
use hearth_engine::{CancelToken, panic_message};
use hearth_ipc::EventKind;
use hearth_memory::ContextWindow;
use hearth_scheduler::{
    Level, Next, Scheduler, SchedulerConfig, SchedulerSnapshot, Task, TaskClass, TaskKind,
};
use serde_json::{Map, Value, json};
use stage::Then;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// Settings of the turn engine (every one has a default).
#[derive(Clone, Debug)]
pub struct TurnConfig {
    /// Base system prompt (persona and rules).
    pub system_prompt: String,
    /// Tool batches per task before it is stopped; 0 = unlimited.
    pub max_tool_turns: u32,
    /// How long the engine waits for one tool.
    pub tool_timeout: Duration,
    /// The same text from the same source inside this window is skipped as `duplicate`.
    pub duplicate_window: Duration,
    /// The user's zone, for timeline stamps.
    pub zone: hearth_engine::LocalZone,
    /// Settings of the input scheduler.
    pub scheduler: SchedulerConfig,
    /// The language of every user-visible text; `None` decides per input (see [`crate::lang`]).
    pub language: Option<crate::lang::Lang>,
}

/// Default `core.agent.max_tool_turns`.
pub const DEFAULT_MAX_TOOL_TURNS: u32 = 10;
/// Default per-tool timeout (SPEC §8.2).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// Window of the duplicate-input check.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(10);

impl Default for TurnConfig {
    fn default() -> Self {
        Self {
            system_prompt:
                "You are Hearth, a helpful assistant running on the user's own hardware.".into(),
            max_tool_turns: DEFAULT_MAX_TOOL_TURNS,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            duplicate_window: DUPLICATE_WINDOW,
            zone: hearth_engine::LocalZone::default(),
            scheduler: SchedulerConfig::default(),
            language: None,
        }
    }
}

/// What the current task is waiting for.
#[derive(Debug)]
enum Wait {
    Ready,
    Llm {
        call: u64,
        cancel: CancelToken,
    },
    /// Tool calls still out: (call number, batch index, deadline).
    Tools(Vec<(u64, usize, Instant)>),
    /// A memory pass (pruning, recall): the input's, or one a tool declared.
    Memory {
        call: u64,
        after: tool_memory::AfterMemory,
    },
    /// A stage's blocking handlers, on the stage service; `then` is where the task goes next.
    Stage {
        call: u64,
        then: Then,
    },
}

#[derive(Debug)]
struct Current {
    task: Task<InputEvent>,
    frame: TaskFrame,
    wait: Wait,
    /// Fired by a stop: handlers and cancellable tools of this task see it through their
    /// `CallContext` (a preemption does not fire it; the task resumes later).
    cancel: CancelToken,
    /// The reply went out: the task is over and is not put back.
    done: bool,
    /// Its caller hung up: the task ends `cancelled` at the next safe point.
    abandoned: bool,
    /// The `memory_candidate` event of a task that ended well, published after its reply.
    candidate: Option<serde_json::Value>,
}

impl Current {
    fn new(task: Task<InputEvent>, frame: TaskFrame) -> Current {
        Current {
            task,
            frame,
            wait: Wait::Ready,
            cancel: CancelToken::new(),
            done: false,
            abandoned: false,
            candidate: None,
        }
    }

    /// Whether the task is past its terminal, waiting for before_output before its reply.
    fn finishing(&self) -> bool {
        matches!(
            self.wait,
            Wait::Stage {
                then: Then::BeforeOutput { .. },
                ..
            }
        )
    }
}

/// The task state machine over the scheduler, the services and the context window.
pub struct TurnEngine {
    cfg: TurnConfig,
    sched: Scheduler<InputEvent, TaskFrame>,
    current: Option<Current>,
    context: ContextWindow,
    provider: ProviderService,
    pool: ToolPool,
    events: EventBus,
    recent_inputs: HashMap<(String, String), Instant>,
    next_call: u64,
    durable: Option<Durable>,
    memory: Option<MemoryService>,
    /// Where blocking stage handlers run; without it (a bare engine in tests) they run here.
    stage_service: Option<StageService>,
    /// Frames of tasks suspended before a restart, by request id (with their old task id).
    recovered_frames: HashMap<String, (u64, TaskFrame)>,
    /// Inputs resumed after a restart that have not fit the ready queue yet.
    backlog: backlog::Backlog,
    /// Inputs whose caller hung up before they ran.
    abandoned: abandon::Abandoned,
    /// Tool vectors for choosing the tools a request carries.
    tool_index: std::sync::Arc<crate::tool_choice::ToolIndex>,
}

impl std::fmt::Debug for TurnEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnEngine")
            .field("current", &self.current.as_ref().map(|c| c.task.id))
            .finish()
    }
}

impl TurnEngine {
    /// A turn engine over these services, with an empty context.
    pub fn new(
        cfg: TurnConfig,
        provider: ProviderService,
        pool: ToolPool,
        events: EventBus,
    ) -> Self {
        let tool_index = std::sync::Arc::new(crate::tool_choice::ToolIndex::new());
        if let Err(e) =
            crate::tool_choice::register_tool_search(&pool.env().tools, tool_index.clone())
        {
            tracing::error!("tool_search is not available: {e}");
        }
        Self {
            sched: Scheduler::new(cfg.scheduler),
            cfg,
            current: None,
            context: ContextWindow::new(),
            provider,
            pool,
            events,
            recent_inputs: HashMap::new(),
            next_call: 0,
            durable: None,
            memory: None,
            stage_service: None,
            recovered_frames: HashMap::new(),
            backlog: backlog::Backlog::default(),
            abandoned: abandon::Abandoned::default(),
            tool_index,
        }
    }

    /// Makes the engine durable and takes over what the store held: the working window, the
    /// inputs accepted but never answered (queued again in acceptance order), and the frames of
    /// tasks that were suspended (they resume from where they were, with a visible notice).
    pub fn with_durable(mut self, durable: Durable, recovered: Recovered) -> Self {
        for event in recovered.events {
            self.context.append(event);
        }
        for record in recovered.frames {
            match serde_json::from_value::<TaskFrame>(record.frame) {
                Ok(frame) => {
                    self.recovered_frames
                        .insert(record.request_id, (record.task_id, frame));
                }
                Err(e) => {
                    tracing::error!(request = %record.request_id, "suspended frame unreadable, the task restarts: {e}")
                }
            }
        }
        let now = Instant::now();
        let resumed = recovered.pending.len();
        let (interrupts, inputs): (Vec<_>, Vec<_>) = recovered
            .pending
            .into_iter()
            .partition(|entry| entry.kind == "interrupt");
        // Interrupts have their own, unbounded stack; queued inputs wait in the backlog and
        // enter the ready queue as it has room.
        for input in interrupts.into_iter().filter_map(backlog::rebuild) {
            let level = crate::admission::interrupt_level(&input);
            self.register(input, level, now);
        }
        self.backlog.extend(inputs);
        self.feed_backlog(now);
        if resumed > 0 {
            tracing::info!(
                resumed,
                waiting_for_room = self.backlog.len(),
                frames = self.recovered_frames.len(),
                "resuming inputs accepted before the restart"
            );
        }
        self.durable = Some(durable);
        self
    }

    /// Routes context events, pruning and recall through the memory service (which then owns
    /// the window's persistence, vectors included).
    pub fn with_memory(mut self, memory: MemoryService) -> Self {
        self.memory = Some(memory);
        self
    }

    /// Appends to the working window, durably when the engine is.
    fn commit_event(&mut self, event: hearth_memory::ContextEvent) {
        if let Some(memory) = &self.memory {
            memory.append(event.clone());
        } else if let Some(durable) = &self.durable {
            durable.record_event(event.clone());
        }
        self.context.append(event);
    }

    /// The working context window the kernel mirrors.
    pub fn context(&self) -> &ContextWindow {
        &self.context
    }

    /// The input scheduler.
    pub fn scheduler(&self) -> &Scheduler<InputEvent, TaskFrame> {
        &self.sched
    }

    /// Runs blocking stage handlers on `service`, off the kernel's worker.
    pub fn with_stage_service(mut self, service: StageService) -> Self {
        self.stage_service = Some(service);
        self
    }

    fn cancel_llm(&mut self) {
        if let Some(Current {
            wait: Wait::Llm { cancel, .. },
            ..
        }) = &self.current
        {
            cancel.cancel();
        }
    }

    fn next_call_id(&mut self) -> u64 {
        self.next_call += 1;
        self.next_call
    }

    /// Delivers a service thread's result. Results of abandoned calls are dropped.
    pub fn complete(&mut self, completion: Completion, now: Instant) {
        self.guarded(now, |engine| engine.apply_completion(completion, now));
    }

    fn apply_completion(&mut self, completion: Completion, now: Instant) {
        let Some(mut cur) = self.current.take() else {
            return;
        };
        match (completion, &mut cur.wait) {
            (
                Completion::Llm(LlmDone {
                    call,
                    result,
                    partial,
                }),
                Wait::Llm { call: waiting, .. },
            ) if call == *waiting => {
                cur.wait = Wait::Ready;
                self.on_llm_result(&mut cur, result, partial);
            }
            (
                Completion::Tool(ToolDone {
                    call,
                    result,
                    media,
                }),
                Wait::Tools(pending),
            ) => {
                if let Some(pos) = pending.iter().position(|(c, _, _)| *c == call) {
                    let (_, index, _) = pending.swap_remove(pos);
                    let outcome = match result {
                        Ok(raw) => ToolOutcome {
                            success: true,
                            raw,
                            media: media.iter().map(|m| m.part()).collect(),
                        },
                        Err(e) => ToolOutcome::failed(format!("error: {e}")),
                    };
                    cur.frame.batch_results[index] = Some(outcome);
                    if pending.is_empty() {
                        cur.wait = Wait::Ready;
                    }
                }
            }
            (
                Completion::Stage(job),
                Wait::Stage {
                    call: waiting,
                    then,
                },
            ) if job.call == *waiting => {
                let then = *then;
                cur.wait = Wait::Ready;
                let StageJobDone { done, .. } = *job;
                self.after_stage_job(&mut cur, then, done);
            }
            (
                Completion::Memory(MemoryDone { call, result }),
                Wait::Memory {
                    call: waiting,
                    after,
                },
            ) if call == *waiting => {
                let after = *after;
                cur.wait = Wait::Ready;
                if after == tool_memory::AfterMemory::Tool {
                    self.tool_memory_done(&mut cur, result);
                    self.settle(cur);
                    return;
                }
                match result {
                    Ok(pass) => {
                        self.adopt_window(pass.window);
                        cur.frame.memory_block = pass.block;
                        cur.frame.recalled = pass.recalled;
                        cur.frame.shown_facts =
                            pass.facts.iter().map(ToString::to_string).collect();
                        cur.frame.tool_ranking = pass.tool_ranking;
                    }
                    // Memory is an aid, not a gate: the turn goes on with what the kernel has.
                    Err(e) => tracing::warn!("memory pass failed, answering without it: {e}"),
                }
                cur.frame.step = Step::Prepare;
            }
            _ => {}
        }
        let _ = now;
        self.settle(cur);
    }

    /// Puts the task back, or finishes it when a terminal was reached.
    fn settle(&mut self, mut cur: Current) {
        if cur.done {
            return;
        }
        match cur.frame.terminal.take() {
            Some(terminal) => self.finish(cur, terminal),
            None => self.current = Some(cur),
        }
    }

    /// Runs steps until the current task waits or nothing is ready. Returns whether anything happened.
    pub fn drive(&mut self, now: Instant) -> bool {
        let mut progress = false;
        loop {
            if self.current.is_none() {
                let Some(next) = self.sched.next(now) else {
                    return progress;
                };
                progress = true;
                match next {
                    Next::New(task) => self.start(task),
                    Next::Resume(task, frame) => self.resume(task, frame),
                }
                continue;
            }
            self.expire_tools(now);
            let waiting = self
                .current
                .as_ref()
                .is_some_and(|c| !matches!(c.wait, Wait::Ready));
            if waiting {
                // A preemption held back by the cooldown is armed as soon as the cooldown ends,
                // even mid-stream: the LLM call is cut and simply sent again on resume.
                if self
                    .current
                    .as_ref()
                    .is_some_and(|c| matches!(c.wait, Wait::Llm { .. }))
                    && self.sched.rearm_pending(now)
                {
                    self.cancel_llm();
                }
                return progress;
            }
            progress = true;
            if !self.safe_point(now) {
                continue;
            }
            self.guarded(now, |engine| engine.step(now));
        }
    }

    /// The checks between two steps. Returns false when the task left the processor.
    fn safe_point(&mut self, now: Instant) -> bool {
        let Some(cur) = self.current.as_mut() else {
            return false;
        };
        if cur.abandoned {
            cur.frame.terminal = Some(Terminal::Skipped(skip::CANCELLED.into()));
            let cur = self.current.take().expect("checked above");
            self.settle(cur);
            return false;
        }
        if cur.frame.step != Step::Input && self.sched.take_stop() {
            let text = if cur.frame.last_content.trim().is_empty() {
                texts::stopped(cur.frame.lang).to_string()
            } else {
                cur.frame.last_content.clone()
            };
            cur.frame.terminal = Some(Terminal::Ok(text));
            let cur = self.current.take().expect("checked above");
            self.settle(cur);
            return false;
        }
        self.sched.rearm_pending(now);
        if !cur.frame.critical && self.sched.should_suspend() {
            let cur = self.current.take().expect("checked above");
            let (id, level) = (cur.task.id, cur.task.level);
            if let Some(durable) = &self.durable {
                durable.save_frame(hearth_memory::FrameRecord {
                    task_id: id,
                    request_id: cur.task.input.request_id.clone(),
                    level: level.as_u8(),
                    preempt_count: cur.task.preempt_count + 1,
                    frame: serde_json::to_value(&cur.frame).unwrap_or(Value::Null),
                    stack_pos: self.sched.stack_depth() as u32,
                });
            }
            self.sched.set_critical(false);
            self.sched.suspend(cur.task, cur.frame, now);
            self.events.publish(
                EventKind::Scheduler,
                &json!({"action": "suspend", "task": id, "level": level.as_str()}),
            );
            return false;
        }
        true
    }

    /// Runs `f`; a panic discards the current task with an error reply and raises a kernel
    /// interrupt (SPEC §2.9), so the scheduler survives whatever a step does.
    fn guarded(&mut self, now: Instant, f: impl FnOnce(&mut Self)) {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| f(self))) {
            self.recover(&panic_message(&*panic), now);
        }
    }

    /// Fails the current task after a panic. Also called by the node after a panic escaped it.
    pub fn recover(&mut self, msg: &str, now: Instant) {
        let Some(mut cur) = self.current.take() else {
            return;
        };
        if let Wait::Llm { cancel, .. } = &cur.wait {
            cancel.cancel();
        }
        cur.cancel.cancel();
        let id = cur.task.id;
        let kernel_l4 = cur.task.class == TaskClass::Interrupt && cur.task.level == Level::L4;
        let lang = cur.frame.lang;
        tracing::error!(task = id, "task panicked: {msg}");
        cur.input_reply(Reply {
            content: texts::processing_error(lang, &format!("task panicked: {msg}")),
            error: true,
            ..Reply::default()
        });
        self.sched.set_critical(false);
        self.sched.done(id);
        self.events.publish(
            EventKind::System,
            &json!({"event": "task_panicked", "task": id, "error": msg}),
        );
        // A panicking kernel interrupt must not raise another one: that could loop forever.
        if !kernel_l4 {
            self.raise_kernel_interrupt(texts::task_panicked(lang, id, msg), now);
        }
    }

    fn step(&mut self, now: Instant) {
        let Some(mut cur) = self.current.take() else {
            return;
        };
        match cur.frame.step {
            Step::Input => self.prepare_input(&mut cur, now),
            Step::Memory => self.memory_step(&mut cur),
            Step::Prepare => self.prepare(&mut cur),
            Step::Llm => self.llm_step(&mut cur),
            Step::ToolBatch => self.tool_batch(&mut cur, now),
            Step::ToolBegin => self.tool_begin(&mut cur, now),
            Step::ToolExec => self.tool_exec(&mut cur, now),
            Step::ToolAfter => self.tool_after(&mut cur),
            Step::TurnEnd => {
                tool_memory::place_tool_recall(&mut cur.frame);
                tool_media::place_tool_media(&mut cur.frame);
                cur.frame.last_batch_reply_only = cur.frame.reply_only;
                cur.frame.turn += 1;
                cur.frame.step = Step::Llm;
            }
        }
        self.settle(cur);
    }

    /// Asks the memory service to prune the window for this input and to recall what relates
    /// to it. Inputs prune unless they declare `context_policy: "none"`; interrupts and the
    /// consolidation channel never prune; recall runs unless `recall_policy` is `"none"`.
    fn memory_step(&mut self, cur: &mut Current) {
        let Some(memory) = self.memory.clone() else {
            cur.frame.step = Step::Prepare;
            return;
        };
        let input = &cur.task.input;
        let prune = input.str_field("context_policy") != Some("none")
            && !cur.frame.is_interrupt
            && !cur.frame.critical;
        let recall = input.str_field("recall_policy") != Some("none") && !cur.frame.critical;
        let (ranking, schemas) = self.tools_to_rank(&cur.frame);
        let budget = self.turn_budget(&schemas);
        // The turn's scene: its channel, partner and declared scenes (never a consolidation
        // task's, nor under `scene_policy: "none"`); the tools it will use are not known yet.
        let scene = if cur.frame.critical {
            None
        } else {
            crate::turn_scene::TurnScene::of_input(input)
        };
        let call = self.next_call_id();
        memory.pass(PassRequest {
            call,
            query: cur.frame.input.clone(),
            budget: PassBudget {
                prune,
                recall,
                context_tokens: budget.context_tokens,
                memory_tokens: budget.memory_tokens,
            },
            tools: ranking,
            scene,
        });
        cur.wait = Wait::Memory {
            call,
            after: tool_memory::AfterMemory::Prepare,
        };
    }

    /// The token budget of a turn: the model's context less the system prompt and the tool
    /// schemas `schemas` sent with every request — unless the source drops them (`no_tools`,
    /// the embedded default's): reserving room for schemas its model never reads left the
    /// embedded model's 4,096-token window no room for the conversation.
    fn turn_budget(&self, schemas: &str) -> hearth_memory::TokenBudget {
        let schemas = if self.provider.takes_tools() {
            schemas
        } else {
            ""
        };
        hearth_memory::compute_token_budget(
            self.provider.max_context_tokens(),
            &format!("{}{schemas}", self.cfg.system_prompt),
        )
    }

    /// Makes `events` (a memory pass's window, oldest first) the kernel's working window.
    fn adopt_window(&mut self, events: Vec<hearth_memory::ContextEvent>) {
        let mut window = hearth_memory::ContextWindow::new();
        for event in events {
            window.append(event);
        }
        self.context = window;
    }

    fn expire_tools(&mut self, now: Instant) {
        let Some(cur) = self.current.as_mut() else {
            return;
        };
        let Wait::Tools(pending) = &mut cur.wait else {
            return;
        };
        let after = self.cfg.tool_timeout;
        let lang = cur.frame.lang;
        pending.retain(|&(_, index, deadline)| {
            if now < deadline {
                return true;
            }
            let name = cur.frame.batch.get(index).map_or("?", |c| c.name.as_str());
            cur.frame.batch_results[index] = Some(ToolOutcome::failed(texts::tool_timed_out(
                lang, name, after,
            )));
            false
        });
        if pending.is_empty() {
            cur.wait = Wait::Ready;
        }
    }

    /// The earliest moment the engine must look again without any new message (tool deadline, cooldown end).
    pub fn next_deadline(&self) -> Option<Instant> {
        let tools = match &self.current {
            Some(Current {
                wait: Wait::Tools(p),
                ..
            }) => p.iter().map(|&(_, _, d)| d).min(),
            _ => None,
        };
        let cooldown = self
            .sched
            .running()
            .and_then(|r| r.last_preempt_at)
            .map(|at| at + self.cfg.scheduler.cooldown)
            .filter(|_| self.sched.pending_interrupts() > 0);
        [tools, cooldown].into_iter().flatten().min()
    }

    /// Whether no task runs, waits or is queued.
    pub fn is_idle(&self) -> bool {
        self.current.is_none() && self.sched.is_idle()
    }

    /// A snapshot of the scheduler for `hearth status`.
    pub fn snapshot(&self) -> SchedulerSnapshot {
        self.sched.snapshot_with(|i: &InputEvent| {
            format!("{} {}: {}", i.request_id, i.source, i.content())
        })
    }

    /// Gives every task the engine holds its terminal reply (SPEC §2.10, shutdown).
    pub fn shutdown(&mut self) -> usize {
        let mut replied = 0;
        if let Some(mut cur) = self.current.take() {
            if let Wait::Llm { cancel, .. } = &cur.wait {
                cancel.cancel();
            }
            cur.cancel.cancel();
            replied += usize::from(self.end_at_shutdown(&mut cur.task.input));
            self.sched.done(cur.task.id);
        }
        for drained in self.sched.drain_all() {
            let (mut task, _frame) = drained.into_parts();
            replied += usize::from(self.end_at_shutdown(&mut task.input));
        }
        replied
    }

    fn start(&mut self, task: Task<InputEvent>) {
        if let Some((old_id, mut frame)) = self.recovered_frames.remove(&task.input.request_id) {
            // Suspended before the restart: continue where it was, and say so.
            frame.resumed_after_restart = true;
            if let Some(durable) = &self.durable {
                durable.remove_frame(old_id);
            }
            self.events.publish(
                EventKind::System,
                &json!({"event": "task_resumed_after_restart", "request_id": task.input.request_id}),
            );
            self.resume_frame(task, frame);
            return;
        }
        let frame = TaskFrame::new(
            &task.input.source,
            &task.input.output_channel,
            task.input.received_at_ms,
        );
        self.make_current(task, frame);
    }

    fn resume(&mut self, task: Task<InputEvent>, frame: TaskFrame) {
        if let Some(durable) = &self.durable {
            durable.remove_frame(task.id);
        }
        self.events.publish(
            EventKind::Scheduler,
            &json!({"action": "resume", "task": task.id, "level": task.level.as_str()}),
        );
        self.resume_frame(task, frame);
    }

    /// Rebuilds the prompt prefix (the timeline now holds what happened meanwhile) and makes
    /// the task current again, keeping the tail of its messages (SPEC §2.11).
    fn resume_frame(&mut self, task: Task<InputEvent>, mut frame: TaskFrame) {
        if frame.prefix_len > 0 {
            let prefix = self.build_prefix(&frame);
            frame.rebase_prefix(prefix);
        }
        if frame.critical {
            self.sched.set_critical(true);
        }
        self.make_current(task, frame);
    }

    /// Makes `task` the running one; a task whose caller hung up meanwhile ends at once.
    fn make_current(&mut self, task: Task<InputEvent>, frame: TaskFrame) {
        let mut cur = Current::new(task, frame);
        cur.abandoned =
            cur.task.input.has_reply() && self.abandoned.take(&cur.task.input.request_id);
        self.current = Some(cur);
    }
}

impl Current {
    fn input_reply(&mut self, reply: Reply) -> bool {
        self.task.input.send_reply(reply)
    }
}
