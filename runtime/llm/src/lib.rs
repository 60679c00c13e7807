//! How Hearth reaches a language model. [`provider::ChatProvider`] is the one trait the turn
//! engine calls; this crate owns its request and response types ([`provider::ChatRequest`],
//! [`provider::Usage`], ...), the accumulation of streamed deltas, the provider manager that
//! walks a fallback chain of configured sources ([`provider::SourceConfig`]), the Lua adapter
//! sandbox that turns one wire format into another ([`adapter`]), and the blocking HTTP/SSE
//! client that carries it ([`http`]).
//!
//! It owns no threads of the kernel and knows nothing of turns, tasks or memory: a provider
//! call blocks its caller, and `hearth-kernel` runs it on a service thread. Cancellation is
//! [`hearth_engine::CancelToken`].
//!
//! ```
//! use hearth_engine::CancelToken;
//! use hearth_llm::provider::{ChatProvider, ChatRequest, ScriptStep, ScriptedProvider};
//!
//! let provider = ScriptedProvider::new([ScriptStep::text("Hello from Hearth")]);
//! let mut text = String::new();
//! provider.chat_stream(&ChatRequest::new(Vec::new(), Vec::new()), &CancelToken::new(), &mut |chunk| {
//!     text.push_str(&chunk.content);
//! })?;
//! assert_eq!(text, "Hello from Hearth");
//! # Ok::<(), hearth_llm::provider::ProviderError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod adapter;
pub mod http;
pub mod provider;
