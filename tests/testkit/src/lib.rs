//! What Hearth's tests share: one watchdog ([`within`]) so a hung test fails instead of hanging
//! the run, fresh scratch directories ([`fresh_dir`]), and a scriptable OpenAI-compatible LLM
//! server on loopback ([`llm_server::LlmServer`]) that stands in for a remote paid API.
//!
//! A dev-dependency only, and it depends on no Hearth crate, so any crate's tests can use it
//! without a cycle.
//!
//! ```
//! use std::time::Duration;
//!
//! let dir = hearth_testkit::fresh_dir("doc");
//! let written = hearth_testkit::within(Duration::from_secs(5), move || {
//!     std::fs::write(dir.join("note"), "hi").map(|()| dir)
//! });
//! let dir = written.expect("the scratch dir is writable");
//! assert!(dir.join("note").exists());
//! std::fs::remove_dir_all(dir).expect("remove");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod datagram;
mod dir;
pub mod llm_server;
pub mod tool_set;
mod watchdog;

pub use dir::fresh_dir;
pub use watchdog::within;
