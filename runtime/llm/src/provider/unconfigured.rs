//! The source used when none is configured: every call fails with a message that says so,
//! and the turn engine turns it into the task's reply. Better than a silent daemon.

use super::{ChatProvider, ChatRequest, ProviderError, StreamChunk};
use hearth_engine::CancelToken;

/// Reply text of a turn when no LLM source exists.
pub const NO_SOURCE: &str = "no LLM source answers. Add one with `hearth source add NAME --base-url URL --model MODEL \
[--adapter openai|anthropic|gemini|ollama] [--api-key KEY]`, start Ollama on 127.0.0.1:11434, \
or run `make setup` to install the embedded local model";

/// The provider used when no source is configured: every call fails with a clear message.
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
