//! Tool execution off the kernel's worker: an elastic pool of service threads. A tool may block
//! for as long as it likes; the turn engine stops waiting after its timeout and the late result
//! is dropped. Idle threads are reused; a new one is started only when all are busy, so a hung
//! tool never starves the next call.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use hearth_engine::{Sink, panic_message};
use hearth_stages::{CallContext, HandlerError, OutputChannels, StagePipeline, ToolRegistry};
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The registries a tool call may need.
#[derive(Clone)]
pub struct ToolEnv {
    /// Registered tools.
    pub tools: Arc<ToolRegistry>,
    /// Output channel tools.
    pub outputs: Arc<OutputChannels>,
    /// The stage pipeline output tools run through.
    pub stages: Arc<StagePipeline>,
}

impl ToolEnv {
    /// Dispatches one call for `call`: output channel tools first, then registered tools
    /// (SPEC §8.2 order, restricted to what exists in this build).
    pub fn execute(
        &self,
        call: &CallContext,
        name: &str,
        args: &Value,
    ) -> Result<Value, HandlerError> {
        if let Some(result) = self.outputs.dispatch(call, name, args, &self.stages) {
            return result.map(Value::String);
        }
        self.tools.execute(call, name, args)
    }
}

/// The end of one tool call, as the pool reports it.
#[derive(Debug)]
pub struct ToolDone {
    /// The call number given to [`ToolPool::spawn`].
    pub call: u64,
    /// The tool's result (its media replaced by marker lines), or why it has none.
    pub result: Result<Value, HandlerError>,
    /// The media items the result brought, stored (see [`crate::tool_media`]).
    pub media: Vec<crate::input_media::MediaRef>,
}

struct Job {
    call: u64,
    name: String,
    args: Value,
    ctx: CallContext,
}

/// The elastic pool tools run on; cheap to clone.
#[derive(Clone)]
pub struct ToolPool {
    tx: Sender<Job>,
    rx: Receiver<Job>,
    idle: Arc<AtomicUsize>,
    env: ToolEnv,
    done: Sink<ToolDone>,
    /// Where a result's media are stored (none: they are replaced by a line saying so).
    media: Option<crate::durable::Durable>,
}

/// Tool calls queued for the pool. A batch runs its calls at once, each claiming an idle
/// thread or starting one, so the queue holds at most one batch; a call past this bound is
/// answered `unavailable` at once instead of waiting.
pub const TOOL_QUEUE: usize = 256;

/// Idle pool threads exit after this long without work.
const IDLE_EXIT: Duration = Duration::from_secs(30);

impl ToolPool {
    /// A pool with no threads yet; results go to `done`.
    pub fn new(env: ToolEnv, done: Sink<ToolDone>) -> Self {
        let (tx, rx) = crossbeam_channel::bounded(TOOL_QUEUE);
        Self {
            tx,
            rx,
            idle: Arc::new(AtomicUsize::new(0)),
            env,
            done,
            media: None,
        }
    }

    /// The same pool storing the media of tool results through `store`'s owner.
    pub fn with_media_store(mut self, store: crate::durable::Durable) -> Self {
        self.media = Some(store);
        self
    }

    /// The registries calls run against.
    pub fn env(&self) -> &ToolEnv {
        &self.env
    }

    /// Runs tool `name` on a pool thread for `ctx` (its task, caller, stop and deadline); the
    /// result arrives on the sink with `call`. Refused without waiting when [`TOOL_QUEUE`]
    /// calls are queued already.
    pub fn spawn(
        &self,
        call: u64,
        name: String,
        args: Value,
        ctx: CallContext,
    ) -> Result<(), HandlerError> {
        // Claim an idle thread if there is one; otherwise start another.
        let claimed = self
            .idle
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok();
        let job = Job {
            call,
            name,
            args,
            ctx,
        };
        if let Err(e) = self.tx.try_send(job) {
            if claimed {
                self.idle.fetch_add(1, Ordering::AcqRel);
            }
            return Err(HandlerError::Unavailable(match e {
                TrySendError::Full(_) => format!("the tool queue is full ({TOOL_QUEUE} calls)"),
                TrySendError::Disconnected(_) => "the tool pool has stopped".to_string(),
            }));
        }
        if !claimed {
            let pool = self.clone();
            let spawned = std::thread::Builder::new()
                .name("hearth-tool".into())
                .spawn(move || pool.work());
            if let Err(e) = spawned {
                tracing::error!("cannot start a tool thread: {e}");
            }
        }
        Ok(())
    }

    fn work(self) {
        loop {
            let Ok(job) = self.rx.recv_timeout(IDLE_EXIT) else {
                // Leave only if nobody claimed us in the meantime.
                if self
                    .idle
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                    .is_ok()
                {
                    return;
                }
                continue;
            };
            let result = catch_unwind(AssertUnwindSafe(|| {
                self.env.execute(&job.ctx, &job.name, &job.args)
            }))
            .unwrap_or_else(|p| {
                Err(HandlerError::Failed(format!(
                    "tool {} handler panic: {}",
                    job.name,
                    panic_message(&*p)
                )))
            });
            // Stored here, on the tool's thread: the kernel's worker never waits for a disk.
            let (result, media) = match result {
                Ok(value) => {
                    let (value, media) =
                        crate::tool_media::keep_tool_media(self.media.as_ref(), value);
                    (Ok(value), media)
                }
                Err(e) => (Err(e), Vec::new()),
            };
            self.done.send(ToolDone {
                call: job.call,
                result,
                media,
            });
            self.idle.fetch_add(1, Ordering::AcqRel);
        }
    }
}
