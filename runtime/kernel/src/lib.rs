//! Hearth's kernel graph: the ingress that admits submissions, the kernel node that runs the
//! input scheduler and the turn engine, inputs and their replies, the event bus over the
//! event ring, durability (journal and frames), and the service threads the turn engine hands
//! blocking work to (provider calls, tools, memory). [`graph::build`] wires all of it onto a
//! `hearth-engine` engine.
//!
//! It reads no configuration file and starts no daemon: `hearth-runtime` does that. Providers
//! come from `hearth-llm`, scheduling from `hearth-scheduler`, turn vocabulary from
//! `hearth-stages`, the past from `hearth-memory`, the event ring from `hearth-ipc`.
//!
//! ```no_run
//! use hearth_kernel::graph::{self, GraphConfig, Registries};
//! use hearth_llm::provider::{ScriptStep, ScriptedProvider};
//! use std::{sync::Arc, time::Duration};
//!
//! let provider = Arc::new(ScriptedProvider::new([ScriptStep::text("Hello from Hearth")]));
//! let kernel = graph::build(GraphConfig::default(), provider, Registries::default())?;
//! let reply = kernel.handle().send_text("cli", "hi").recv_timeout(Duration::from_secs(5))?;
//! assert_eq!(reply.content, "Hello from Hearth");
//! kernel.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod admission;
pub mod completion;
mod dense_slot;
pub mod durable;
pub mod entry_ref;
mod error;
pub mod events;
pub mod graph;
pub mod graph_service;
pub mod ingress;
pub mod input;
pub mod input_media;
pub mod journal_trim;
pub mod kernel_node;
mod kernel_tool;
pub mod knowledge_tools;
pub mod lang;
mod memory_forget;
pub mod memory_service;
mod memory_state;
pub mod memory_tools;
pub mod model_distill;
mod model_loads;
pub mod provider_service;
pub mod recalled;
pub mod stage_service;
pub mod tool_choice;
pub mod tool_media;
pub mod tool_pool;
pub mod turn;
pub mod turn_scene;

pub use error::{GraphMemoryError, KernelError, MemoryError};
pub use model_loads::wait_for_model_loads;
