//! The Rust SDK for Hearth plugins that run in their own process.
//!
//! A plugin is a type implementing [`Plugin`]; [`run`] connects it to the kernel over
//! stdin/stdout and does the rest: the handshake (protocol version, SDK version, pid), the
//! lifecycle (`plugin.init` → `plugin.start` → `plugin.stop`), the registration of tools, stage
//! handlers and channels, and the dispatch of every call to them on the connection's threads
//! with panic isolation. Handlers get a [`CallContext`] (task, caller and trust, deadline,
//! cancellation) and return [`ToolError`], the same typed error the kernel's own handlers use;
//! [`CallContext::host`] calls back into the kernel (memory, settings, inputs, log) on the task's
//! behalf. Stop handlers run newest first, once. The wire is `hearth-rpc`, documented in
//! `ipc/PROTOCOL.md`.
//!
//! A first plugin, whole (it is `examples/echo.rs`):
//!
//! ```no_run
//! use std::process::ExitCode;
//!
//! use hearth_plugin::{CallContext, Plugin, Registrar, ToolDef, ToolError, Value, json};
//!
//! struct Echo;
//!
//! impl Plugin for Echo {
//!     fn name(&self) -> &str {
//!         "echo"
//!     }
//!
//!     fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
//!         let def = ToolDef::new("echo", "Repeats the text it is given.").parameters(json!({
//!             "type": "object",
//!             "properties": {"text": {"type": "string"}},
//!             "required": ["text"],
//!         }));
//!         reg.tool(def, |ctx: &CallContext, args: Value| {
//!             let text = args["text"]
//!                 .as_str()
//!                 .ok_or_else(|| ToolError::invalid_arguments("text must be a string"))?;
//!             Ok(json!({"text": text, "task": ctx.task_id()}))
//!         })?;
//!         reg.on_stop(|| eprintln!("echo: stopped"));
//!         Ok(())
//!     }
//! }
//!
//! fn main() -> ExitCode {
//!     hearth_plugin::run(Echo)
//! }
//! ```
//!
//! **Stage handlers.** A stage handler edits the stage context, a JSON object with the kernel's
//! field names (`final_text`, `memory`, `context_msgs`, `no_memory`, `extra.output_channel`, …;
//! `ipc/PROTOCOL.md` §9.4). How it travels is the SDK's business: inline on the pipe, or, when
//! the process attached the data plane, read from the shared stage-context area, with only the
//! fields the handler changed written back (so two plugins editing different fields of one
//! stage never undo each other). An edit too large for its field fails the call, and none of it
//! is applied.
//!
//! ```no_run
//! use hearth_plugin::{Registrar, StageSpec, ToolError, json};
//!
//! fn start(reg: &mut Registrar<'_>) -> Result<(), ToolError> {
//!     // Signs every answer before it reaches the user.
//!     reg.stage(StageSpec::new("before_output"), |_, context| {
//!         let text = context["final_text"].as_str().unwrap_or("").to_owned();
//!         context["final_text"] = json!(format!("{text}\n-- sent by hearth"));
//!         Ok(())
//!     })
//! }
//! ```
//!
//! **Data plane.** The shared segment (fd 3) and the event-ring notifications (fd 4) are
//! described in `ipc/DESIGN.md`. When the handshake offers them the SDK attaches
//! ([`Host::data_plane`]): [`DataPlane::events`] reads the kernel's event ring filtered by type
//! and stream tag and says when it lagged, and tool arguments and results larger than the
//! offer's inline limit travel through the exchange arena instead of the pipe, without the
//! handler noticing. Without an offer every call travels inline over the control plane, which
//! is complete on its own.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use hearth_plugin::{EventKind, Host, Next, decode_envelope};
//!
//! /// Prints the tokens of the answer streamed under `tag` as they are published.
//! fn follow(host: &Host, tag: u64) {
//!     let Some(plane) = host.data_plane() else { return };
//!     let mut events = plane
//!         .events(&[EventKind::ContentDelta, EventKind::AgentOutput])
//!         .with_tag(tag);
//!     loop {
//!         match events.next(Duration::from_secs(30)) {
//!             Next::Event { kind: EventKind::AgentOutput, .. } | Next::Closed => break,
//!             Next::Event { payload, .. } => {
//!                 if let Ok(event) = decode_envelope(payload) {
//!                     eprint!("{}", event.payload["content"].as_str().unwrap_or(""));
//!                 }
//!             }
//!             Next::Lagged { missed } => eprintln!("[{missed} events lost]"),
//!             Next::TimedOut => {}
//!         }
//!     }
//! }
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod context;
mod data_plane;
mod defs;
mod error;
mod exchange;
mod host;
mod plugin;
mod registrar;
mod runtime;
mod stage;

pub use context::CallContext;
pub use data_plane::{DataPlane, EventStream, Next};
pub use defs::{OutputChannel, StageSpec, ToolDef};
pub use error::{PluginError, ToolError};
pub use hearth_ipc::{Envelope, EventKind, StageField, decode_envelope};
pub use hearth_rpc::{ErrorKind, Priority, Trust};
pub use host::{DEFAULT_CALL_TIMEOUT, Host, InjectOptions, Submitted};
pub use plugin::Plugin;
pub use registrar::{OutputHandler, Registrar, StageHandler, ToolHandler};
pub use runtime::{SDK_VERSION, ServeConfig, run, serve};
pub use serde_json::{Value, json};
