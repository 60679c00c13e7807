//! Hearth's plugin host: every external plugin is a child process the daemon starts, speaks the
//! control plane to (`ipc/PROTOCOL.md`, via `hearth-rpc`), and supervises.
//!
//! - [`manifest`]: `plugin.json`, parsed and validated; every error names the file and the fix.
//! - [`order`]: the start order computed once from the facilities each manifest needs.
//! - [`supervisor`]: one thread per child that spawns it, waits for it (`waitpid`, never stdout
//!   end of file), and restarts it after 1 s, 2 s, 3 s until the 4th crash within 5 minutes
//!   ([`restart`] holds that rule as a pure function of the crash times).
//! - [`session`]: one plugin's process seen from the kernel: handshake, `plugin.init`,
//!   `plugin.start`, the capability-gated reverse calls, and detaching everything it registered
//!   when it exits.
//! - [`in_process`]: plugins that run in the daemon's process (Lua scripts) behind the same
//!   registration code, proxies and capability gate.
//! - [`host`]: the set of installed plugins under `<data_dir>/plugins/`, their enabled state and
//!   the `hearth plugin …` operations.
//!
//! The kernel's side stays behind [`KernelPort`], so this crate depends on the stage tables only.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod by_tool;
pub mod data_plane;
mod error;
pub mod host;
pub mod in_process;
mod in_process_handlers;
mod invoke;
mod link;
pub mod manifest;
pub mod order;
mod port;
pub mod restart;
mod reverse;
mod service;
pub mod session;
mod stage_area;
mod stage_lock;
mod state;
pub mod status;
pub mod supervisor;
mod tables;
pub mod text_event;
mod tool_blocks;
mod tool_proxy;
mod triples;

pub use data_plane::DataPlane;
pub use error::PluginError;
pub use host::{HostConfig, PluginHost};
pub use in_process::{InProcess, InProcessHost, InProcessPlugin};
pub use manifest::Manifest;
pub use port::{Injection, KernelPort, NoKernel, wire_error};
pub use restart::{CrashHistory, RestartDecision, RestartPolicy};
pub use stage_lock::STAGE_LOCK_WAIT;
pub use status::{PluginState, PluginStatus};
pub use text_event::TextEvent;
