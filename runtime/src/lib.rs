//! The Hearth kernel process: the thread-per-core engine, the input scheduler, the turn engine,
//! the provider and tool services, and the one function that wires them into a graph.
//!
//! `hearth-stages` supplies the vocabulary of a turn, `hearth-memory` what the model is shown of
//! the past, `hearth-ipc` the event ring; this crate owns the threads and the order of things.
//!
//! ```no_run
//! use hearth_runtime::graph::{self, GraphConfig, Registries};
//! use hearth_runtime::provider::{ScriptStep, ScriptedProvider};
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

pub mod adapter;
pub mod completion;
pub mod config;
pub mod daemon;
pub mod durable;
pub mod embedded;
pub mod engine;
pub mod events;
pub mod graph;
pub mod http;
pub mod ingress;
pub mod input;
pub mod kernel_node;
pub mod memory_service;
pub mod memory_tools;
pub mod provider;
pub mod provider_service;
pub mod scheduler;
pub mod signals;
pub mod socket;
pub mod tool_pool;
pub mod turn;
