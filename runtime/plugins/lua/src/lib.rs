//! Lua script plugins. A plugin whose manifest `entry` is a `.lua` file runs in the sandbox of
//! the provider adapters (`hearth_llm::adapter::sandbox`: no io/os/require/bytecode, a memory
//! limit, an instruction and a time budget per call) on a thread of its own, and declares its
//! tools, stage handlers and output channels through an `sdk` table:
//!
//! ```lua
//! sdk.tool{
//!   name = "dice_roll",
//!   description = "Roll a die with the given number of sides.",
//!   parameters = { type = "object", properties = { sides = { type = "integer" } } },
//!   handler = function(args, ctx) return { rolled = 1 + (args.sides or 6) // 2 } end,
//!   -- optional: its output recalls related memories into the prompt ("auto") and prunes
//!   -- the working window ("prune"); "none" (the default) for neither
//!   recall_policy = "none", context_policy = "none",
//! }
//! sdk.stage{
//!   stage = "before_output", priority = 10,
//!   handler = function(context, ctx)
//!     context.final_text = context.final_text:gsub("colour", "color")
//!     return context
//!   end,
//! }
//! sdk.channel{
//!   name = "lamp", description = "Blinks the hall lamp.", caps = { "text" },
//!   handler = function(message, ctx) return { blinked = #message.text } end,
//! }
//! ```
//!
//! Its tools join the one tool registry owned by `lua:<name>`; its stage handlers and output
//! channels join the kernel's `StagePipeline` and `OutputChannels` through the plugin host's
//! own registration code and proxies ([`hearth_plugin_host::InProcessPlugin`]), named by the
//! plugin as a process plugin's are. `sdk.call(method, params)` (and `sdk.memory_search`,
//! `sdk.memory_recall`, `sdk.settings_get`, `sdk.settings_set`) is a reverse call through the
//! same capability gate and dispatch as a process's, at most [`MAX_REVERSE_CALLS`] per call.
//!
//! A handler runs per call with the call's context (`ctx.task`, `ctx.trust`, `ctx.caller`); an
//! error or a budget overrun is that call's error. A failed call also discards the script's
//! state, which is rebuilt from the file as a crashed process is restarted, under the same
//! [`hearth_plugin_host::RestartPolicy`]: a script that keeps failing is stopped and everything
//! it registered leaves the kernel. A changed file is reloaded and its declarations replace
//! the previous ones.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod plugin;
mod script;

pub use error::LuaPluginError;
pub use plugin::{LuaPlugin, LuaPluginConfig, RELOAD_POLL};
pub use script::{ChannelDecl, Declarations, MAX_REVERSE_CALLS, ScriptError, StageDecl, ToolDecl};
