//! The source used when none is configured: every call fails with a message that says so,
//! and the turn engine turns it into the task's reply. Better than a silent daemon.

use super::{CancelToken, ChatProvider, ChatRequest, ProviderError, StreamChunk};

/// Reply text of a turn when no LLM source exists.
pub const NO_SOURCE: &str = "no LLM source is configured: start an OpenAI-compatible server on 127.0.0.1:11434 \
(for example Ollama) or add a source to hearth.toml";

#[derive(Debug, Default)]
pub struct Unconfigured;

impl ChatProvider for Unconfigured {
    fn name(&self) -> &str {
        "none"
    }

    fn chat_stream(
        &self,
        _: &ChatRequest,
        _: &CancelToken,
        _: &mut dyn FnMut(StreamChunk),
    ) -> Result<(), ProviderError> {
        Err(ProviderError::Other(NO_SOURCE.into()))
    }
}
