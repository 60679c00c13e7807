//! Lua script plugins. A plugin whose manifest `entry` is a `.lua` file runs in the sandbox of
//! the provider adapters (`hearth_llm::adapter::sandbox`: no io/os/require/bytecode, a memory
//! limit, an instruction and a time budget per call) on a thread of its own, and registers its
//! tools through an `sdk` table:
//!
//! ```lua
//! sdk.tool{
//!   name = "dice_roll",
//!   description = "Roll a die with the given number of sides.",
//!   parameters = { type = "object", properties = { sides = { type = "integer" } } },
//!   handler = function(args, ctx) return { rolled = 1 + (args.sides or 6) // 2 } end,
//! }
//! ```
//!
//! Its tools join the one tool registry owned by `lua:<name>`. A handler runs per call with the
//! call's context (`ctx.task`, `ctx.trust`); an error or a budget overrun is that call's error.
//! A failed call also discards the script's state, which is rebuilt from the file as a crashed
//! process is restarted, under the same [`hearth_plugin_host::RestartPolicy`]: a script that
//! keeps failing is stopped and its tools leave the registry. A changed file is reloaded.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod plugin;
mod script;

pub use error::LuaPluginError;
pub use plugin::{LuaPlugin, LuaPluginConfig, RELOAD_POLL};
pub use script::ToolDecl;
