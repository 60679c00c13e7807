//! Hearth's daemon and CLI: `hearth.toml` and its environment overrides ([`config`]), the LLM
//! sources the daemon keeps and the embedded default model it can start ([`embedded`]), the
//! assembly of a running daemon ([`daemon`]), the Unix-socket protocol between `hearth` and
//! `hearthd` ([`socket`]), signal handling ([`signals`]) and the user's zone ([`zone`]).
//!
//! The kernel itself lives in `hearth-kernel` (graph, turn engine, services), the engine in
//! `hearth-engine`, scheduling in `hearth-scheduler`, providers in `hearth-llm`; this crate only
//! reads configuration, wires those together and runs them as processes.
//!
//! ```no_run
//! use hearth_runtime::config::Config;
//! use hearth_runtime::daemon::Daemon;
//!
//! let config = Config::load(None)?;
//! let daemon = Daemon::start(config)?;
//! daemon.shutdown();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod daemon;
pub mod embedded;
pub mod recall_graph;
pub mod signals;
pub mod socket;
pub mod zone;
