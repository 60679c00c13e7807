//! How the turn engine reaches a language model: one [`ChatProvider`] trait that streams
//! deltas and tool-call fragments into a sink and can be cancelled from another thread.
//!
//! The turn engine never sees HTTP: providers (Lua-adapted HTTP sources, the scripted provider
//! used by tests and benches) implement this trait and run on the provider service thread.

mod accumulate;
mod availability;
mod complete;
mod first_chunk_gate;
mod lua_source;
mod manager;
mod media_parts;
mod openai_stream;
mod request;
mod retry_after;
mod scripted;
mod source_config;
mod unconfigured;
mod unified;

use hearth_engine::CancelToken;

pub use accumulate::{Accumulator, TRUNCATED_ARGS_KEY, parse_tool_arguments};
pub use complete::complete_text;
pub use first_chunk_gate::ERROR_FINISH_REASONS;
pub use lua_source::{BaseUrl, LuaSource, classify_status};
pub use manager::{
    Clock, ManagerConfig, ProviderManager, SourceInfo, SourceStatus, SystemClock, UnknownSource,
};
pub use media_parts::{Images, MediaReader, RECENT_IMAGE_BYTES, shown_to};
pub use openai_stream::{NativeChunk, parse_openai_stream_chunk};
pub use request::{
    ChatRequest, ChatResponse, MediaPart, Message, Role, StreamChunk, ToolCallDelta, ToolCallOut,
    ToolSpec, Usage,
};
pub use retry_after::parse_retry_after;
pub use scripted::{ScriptStep, ScriptedProvider};
pub use source_config::{SourceConfig, SourceConfigError};
pub use unconfigured::{NO_SOURCE, Unconfigured};
pub use unified::{ChunkError, parse_openai_chunk, parse_unified_chunk};

/// Why a provider call did not produce a response.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The call was cancelled (stop, preemption, shutdown). Never retried on another source.
    #[error("cancelled")]
    Cancelled,
    /// The source answered with an HTTP error status.
    #[error("api error {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The response body.
        body: String,
    },
    /// The source is overloaded or rate-limiting us (429, 503) and said when to come back.
    #[error("api error {status}: {body} (retry after {} s)", retry_after.as_secs())]
    Busy {
        /// The status code.
        status: u16,
        /// The response body.
        body: String,
        /// The wait its `Retry-After` header asked for.
        retry_after: std::time::Duration,
    },
    /// The prompt does not fit the model's window; walking the fallback chain will not help.
    #[error("context overflow: {0}")]
    ContextOverflow(String),
    /// Anything else: connection refused, malformed stream, adapter error.
    #[error("{0}")]
    Other(String),
}

/// A language model source. Implementations block the calling (service) thread while the
/// answer streams, push every chunk into `sink` as it arrives, and return promptly with
/// [`ProviderError::Cancelled`] once `cancel` fires.
pub trait ChatProvider: Send + Sync + 'static {
    /// The provider's name, for logs and errors.
    fn name(&self) -> &str;

    /// The model's context window in tokens; 0 = unknown (the budget then assumes 32 768).
    fn max_context_tokens(&self) -> usize {
        0
    }

    /// Whether requests reach the model with their tool schemas (`no_tools` sources drop
    /// them): the turn's budget reserves room for the schemas only then.
    fn takes_tools(&self) -> bool {
        true
    }

    /// Streams the answer to `request` into `sink`; returns when it is complete, failed or cancelled.
    fn chat_stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        sink: &mut dyn FnMut(StreamChunk),
    ) -> Result<(), ProviderError>;
}
