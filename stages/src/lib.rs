//! The vocabulary of one Hearth turn: the seven stages plugins hook into, the [`StageContext`]
//! those hooks see, the [`StagePipeline`] that runs them, the [`ToolRegistry`] of plugin tools and
//! the [`OutputChannels`] the model sends through, and the contract every handler of theirs keeps.
//!
//! This crate owns the rules (handler order, scopes, short-circuit, per-handler timeout and panic
//! isolation, tool and channel naming, output-tool semantics, the handler contract). It does not
//! own the turn engine, the scheduler, the plugin transport or any I/O: the kernel calls into it.
//! Its only threads are the pooled runners that make blocking handlers' timeouts possible.
//!
//! # The handler contract
//!
//! Tool ([`ToolHandler`]), stage ([`StageHandler`]) and output-channel ([`OutputHandler`])
//! handlers all get a [`CallContext`] and return a [`HandlerError`] on failure:
//!
//! - **The call context** names the task (`task_id`), the [`Caller`] (the input's source, the
//!   plugin that sent it, and its [`Trust`]), a [`Cancel`] view of the task's stop, and the
//!   deadline after which nobody waits for the answer. A stage handler's deadline is its own
//!   timeout (or the caller's, if sooner).
//! - **Typed errors**: `InvalidArguments`, `Denied`, `TimedOut`, `Cancelled`, `Unavailable`,
//!   `Failed(message)`. The kind is for the kernel, the text for the model and the log; a bare
//!   `String` converts into `Failed`.
//! - **Cancellation**: a handler that can stop early checks `call.check()?` (or
//!   `call.is_cancelled()`) between units of work. A tool that does so declares
//!   [`ToolDef::cancellable`]; a stop then cancels it instead of waiting for it.
//! - **Inline or blocking**: a stage handler declared [`HandlerSpec::inline`] is in-process code
//!   that cannot block; it runs on the thread running the stage, with panic isolation and no
//!   thread hop. Every other handler is blocking (the default) and runs on a runner thread,
//!   abandoned at its timeout. Either way it works on a copy of the context that is kept only when
//!   it returns, so a panic or a timeout leaves the context unchanged.
//! - **The caller never waits**: [`StagePipeline::start`] runs the stage's handlers up to the first
//!   blocking one and hands the rest back as a [`StageJob`] for a service thread; the kernel keeps
//!   answering stops and interrupts meanwhile. A cancelled job keeps none of the stage's writes.
//!   [`StagePipeline::run`] does both on the calling thread, for callers that may block.
//!
//! ```
//! use std::time::Duration;
//! use hearth_stages::{
//!     CallContext, Caller, Cancel, HandlerError, HandlerSpec, Stage, StageContext, StagePipeline,
//!     StageStep, ToolDef, ToolRegistry, Trust,
//! };
//! use serde_json::{Value, json};
//!
//! let pipeline = StagePipeline::new();
//! // Inline: pure in-process logic, runs where the stage runs.
//! pipeline.register(
//!     Stage::OnInput,
//!     HandlerSpec::new("greeter").inline(),
//!     |_: &CallContext, ctx: &mut StageContext| {
//!         if ctx.raw_message == "ping" {
//!             ctx.response = Some("pong".into());
//!         }
//!         Ok(())
//!     },
//! );
//! // Blocking (the default): may wait on I/O, so it runs on a runner thread under its timeout.
//! pipeline.register(
//!     Stage::PreAction,
//!     HandlerSpec::new("audit").timeout(Duration::from_secs(1)),
//!     |call: &CallContext, ctx: &mut StageContext| {
//!         call.check()?; // Err(Cancelled) after a stop, Err(TimedOut) past the deadline
//!         if call.trust() == Trust::External {
//!             ctx.extra.insert("audited".into(), Value::Bool(true));
//!         }
//!         Ok(())
//!     },
//! );
//!
//! let deadline = std::time::Instant::now() + Duration::from_secs(10);
//! let call = CallContext::new(1, Caller::new("qq", Trust::External), Cancel::never(), deadline);
//!
//! // Only inline handlers on on_input: the stage is over when `start` returns.
//! let ctx = StageContext { raw_message: "ping".into(), ..StageContext::default() };
//! let StageStep::Done(done) = pipeline.start(Stage::OnInput, &call, ctx) else {
//!     unreachable!("no blocking handler on on_input")
//! };
//! assert!(done.run.responded);
//! assert_eq!(done.ctx.response.as_deref(), Some("pong"));
//!
//! // A blocking handler comes back as a job; here a thread stands in for the kernel's service.
//! let StageStep::Pending(job) = pipeline.start(Stage::PreAction, &call, StageContext::default())
//! else {
//!     unreachable!("pre_action has a blocking handler")
//! };
//! let done = std::thread::spawn(move || job.run()).join().expect("the job thread");
//! assert_eq!(done.run.ran, ["audit"]);
//! assert_eq!(done.ctx.extra["audited"], true);
//!
//! // Tools get the same context and answer with typed errors.
//! let tools = ToolRegistry::new();
//! tools
//!     .register(
//!         ToolDef { name: "weather_now".into(), cancellable: true, ..ToolDef::default() },
//!         |call: &CallContext, args: &Value| {
//!             call.check()?;
//!             match args["city"].as_str() {
//!                 Some(city) => Ok(json!(format!("sunny in {city}"))),
//!                 None => Err(HandlerError::InvalidArguments("city is required".into())),
//!             }
//!         },
//!     )
//!     .expect("a valid, new tool");
//! assert_eq!(tools.execute(&call, "weather_now", &json!({"city": "Oslo"})), Ok(json!("sunny in Oslo")));
//! let err = tools.execute(&call, "weather_now", &json!({})).unwrap_err();
//! assert_eq!(err.to_string(), "invalid arguments: city is required");
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod call;
mod cancel;
mod caps;
mod channel_name;
mod context;
mod error;
mod function_name;
mod handler;
mod handler_error;
mod output_channels;
mod pipeline;
mod runner;
mod stage;
mod stage_job;
mod stage_run;
mod tool;
mod tool_owner;
mod tool_registry;
mod trust;

pub use call::{CallContext, Caller};
pub use cancel::Cancel;

pub use caps::{CAP_AUDIO, CAP_FILE, CAP_IMAGE, CAP_STRUCTURED, CAP_TEXT, Caps};
pub use channel_name::{
    LIST_CHANNELS_TOOL, MAX_CHANNEL_NAME_LEN, OUTPUT_HELP_SUFFIX, OUTPUT_SEND_PREFIX,
    help_tool_name, is_output_tool, is_reply_only_tool, send_tool_name, validate_channel_name,
};
pub use context::{ContextMsg, MemoryItem, StageContext, ToolCall, ToolResult};
pub use error::StagesError;
pub use function_name::{MAX_FUNCTION_NAME_LEN, valid_function_name};
pub use handler::{DEFAULT_HANDLER_TIMEOUT, HandlerId, HandlerSpec, Scope, StageHandler, stage_fn};
pub use handler_error::HandlerError;
pub use output_channels::{ChannelInfo, OutputChannels, OutputHandler, output_fn};
pub use pipeline::StagePipeline;
pub use stage::Stage;
pub use stage_job::{StageDone, StageJob, StageStep};
pub use stage_run::StageRun;
pub use tool::{ContextPolicy, RecallPolicy, ToolDef, ToolHandler, batch_is_parallel, tool_fn};
pub use tool_owner::{ToolOwner, ToolPolicy, ToolSource};
pub use tool_registry::{
    DEFAULT_CAPABILITY, RegisteredTool, ToolEntry, ToolRegistry, infer_plugin,
};
pub use trust::Trust;

/// The registries are shared between plugin threads and the turn engine.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<StagePipeline>();
    shared::<ToolRegistry>();
    shared::<OutputChannels>();
    shared::<StageContext>();
    shared::<CallContext>();
    const fn sendable<T: Send + 'static>() {}
    sendable::<StageJob>();
};
