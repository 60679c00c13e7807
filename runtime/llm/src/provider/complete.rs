//! One answer as one string, for the callers that do not stream: a source's self-test, a
//! plugin's `llm.complete`, the distillation bench.

use super::{ChatProvider, ChatRequest, ProviderError};
use hearth_engine::CancelToken;
use std::time::Duration;

/// Asks `provider` for its whole answer to `request`, cancelled once `timeout` has passed
/// ([`ProviderError::Cancelled`] then); the streamed text, joined.
pub fn complete_text(
    provider: &dyn ChatProvider,
    request: &ChatRequest,
    timeout: Duration,
) -> Result<String, ProviderError> {
    let cancel = CancelToken::new();
    let _deadline = cancel.cancel_after(timeout);
    let mut text = String::new();
    provider.chat_stream(request, &cancel, &mut |chunk| text.push_str(&chunk.content))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, ScriptStep, ScriptedProvider};

    #[test]
    fn the_streamed_text_is_joined_and_a_deadline_cancels() {
        let request = ChatRequest::new(vec![Message::user("hi")], Vec::new());
        let quick = ScriptedProvider::new(vec![ScriptStep::text("hello there")]);
        assert_eq!(
            complete_text(&quick, &request, Duration::from_secs(5)).expect("answered"),
            "hello there"
        );
        let slow = ScriptedProvider::new(vec![ScriptStep::slow_text(
            "one two three",
            Duration::from_secs(5),
        )]);
        let started = std::time::Instant::now();
        assert_eq!(
            complete_text(&slow, &request, Duration::from_millis(50)),
            Err(ProviderError::Cancelled)
        );
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "cut at its deadline"
        );
    }
}
