//! The vocabulary of one Hearth turn: the seven stages plugins hook into, the [`StageContext`]
//! those hooks see, the [`StagePipeline`] that runs them, the [`ToolRegistry`] of plugin tools and
//! the [`OutputChannels`] the model sends through.
//!
//! This crate owns the rules (handler order, scopes, short-circuit, per-handler timeout and panic
//! isolation, tool and channel naming, output-tool semantics). It does not own the turn engine,
//! the scheduler, the plugin transport or any I/O: the runtime calls into it. Its only threads are
//! the pooled runners that make handler timeouts possible.
//!
//! ```
//! use hearth_stages::{HandlerSpec, Stage, StageContext, StagePipeline};
//!
//! let pipeline = StagePipeline::new();
//! pipeline.register(Stage::OnInput, HandlerSpec::new("greeter"), |ctx: &mut StageContext| {
//!     if ctx.raw_message == "ping" {
//!         ctx.response = Some("pong".into());
//!     }
//!     Ok(())
//! });
//! let mut ctx = StageContext { raw_message: "ping".into(), ..StageContext::default() };
//! let run = pipeline.run(Stage::OnInput, &mut ctx);
//! assert!(run.responded);
//! assert_eq!(ctx.response.as_deref(), Some("pong"));
//! assert_eq!(ctx.phase, "on_input");
//! ```

#![forbid(unsafe_code)]

mod caps;
mod channel_name;
mod context;
mod error;
mod function_name;
mod handler;
mod output_channels;
mod pipeline;
mod runner;
mod stage;
mod tool;
mod tool_registry;

pub use caps::{CAP_AUDIO, CAP_FILE, CAP_IMAGE, CAP_STRUCTURED, CAP_TEXT, Caps};
pub use channel_name::{
    LIST_CHANNELS_TOOL, MAX_CHANNEL_NAME_LEN, OUTPUT_HELP_SUFFIX, OUTPUT_SEND_PREFIX,
    help_tool_name, is_output_tool, is_reply_only_tool, send_tool_name, validate_channel_name,
};
pub use context::{ContextMsg, MemoryItem, StageContext, ToolCall, ToolResult};
pub use error::StagesError;
pub use function_name::{MAX_FUNCTION_NAME_LEN, valid_function_name};
pub use handler::{DEFAULT_HANDLER_TIMEOUT, HandlerId, HandlerSpec, Scope, StageHandler};
pub use output_channels::{ChannelInfo, OutputChannels, OutputHandler};
pub use pipeline::{StagePipeline, StageRun};
pub use stage::Stage;
pub use tool::{ContextPolicy, RecallPolicy, ToolDef, ToolHandler, batch_is_parallel};
pub use tool_registry::{RegisteredTool, ToolRegistry, infer_plugin};

/// The registries are shared between plugin threads and the turn engine.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<StagePipeline>();
    shared::<ToolRegistry>();
    shared::<OutputChannels>();
    shared::<StageContext>();
};
