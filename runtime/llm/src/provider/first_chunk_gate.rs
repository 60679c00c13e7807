//! The first-chunk gate (SPEC §7.2): a source's stream is held back until its first chunk of
//! substance, so falling back to another source stays harmless while the caller has seen
//! nothing.

use super::{ChatProvider, ChatRequest, ProviderError, StreamChunk};
use hearth_engine::CancelToken;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Finish reasons that, on a first chunk with nothing else in it, mean the source failed
/// instead of answering: `error` is what gateways send for an upstream failure, and a bare
/// `content_filter` is a refusal that another source may not make.
pub const ERROR_FINISH_REASONS: &[&str] = &["error", "content_filter"];

/// How one attempt ended, as seen through the first-chunk gate.
pub(super) enum Attempt {
    Answered,
    /// Failed before the caller saw anything: a retry or fallback is still harmless.
    Failed(ProviderError),
    /// Failed after chunks reached the caller.
    Committed(ProviderError),
}

/// One attempt of source `name` through the first-chunk gate; a panicking adapter is a failed
/// attempt.
pub(super) fn call_gated(
    name: &str,
    provider: &dyn ChatProvider,
    request: &ChatRequest,
    cancel: &CancelToken,
    sink: &mut dyn FnMut(StreamChunk),
) -> Attempt {
    let mut gate = FirstChunkGate {
        sink,
        held: Vec::new(),
        state: GateState::Holding,
    };
    // A panicking adapter is a failed source, not a reason to abandon the other sources.
    let result = catch_unwind(AssertUnwindSafe(|| {
        provider.chat_stream(request, cancel, &mut |chunk| gate.push(chunk))
    }))
    .unwrap_or_else(|panic| {
        Err(ProviderError::Other(format!(
            "source {} panicked: {}",
            name,
            hearth_engine::panic_message(&*panic)
        )))
    });
    match (gate.state, result) {
        (GateState::Open, Ok(())) => Attempt::Answered,
        (GateState::Open, Err(e)) => Attempt::Committed(e),
        (_, Err(e)) => Attempt::Failed(e),
        (GateState::Rejected(reason), Ok(())) => Attempt::Failed(ProviderError::Other(format!(
            "source {}: first chunk carries only finish_reason {reason:?}",
            name
        ))),
        (GateState::Holding, Ok(())) => Attempt::Failed(ProviderError::Other(format!(
            "source {}: empty stream",
            name
        ))),
    }
}

enum GateState {
    /// Nothing of substance yet; blank chunks are held.
    Holding,
    /// The caller has been given chunks: no fallback from here.
    Open,
    /// The first chunk of substance was an error finish; the rest of the stream is dropped.
    Rejected(String),
}

/// Holds a stream back until its first chunk of substance (SPEC §7.2). Blank chunks (role
/// announcements, keep-alives, a bare `done`, usage alone) do not count, so a stream of only
/// those is an empty stream; a first chunk whose only news is an error finish reason is a
/// failure; anything else opens the gate and the held chunks follow in order.
struct FirstChunkGate<'a> {
    sink: &'a mut dyn FnMut(StreamChunk),
    held: Vec<StreamChunk>,
    state: GateState,
}

impl FirstChunkGate<'_> {
    fn push(&mut self, chunk: StreamChunk) {
        match self.state {
            GateState::Open => (self.sink)(chunk),
            GateState::Rejected(_) => {}
            GateState::Holding => {
                let visible = !chunk.content.is_empty()
                    || !chunk.reasoning.is_empty()
                    || chunk
                        .tool_calls
                        .iter()
                        .any(|d| !d.id.is_empty() || !d.name.is_empty() || !d.arguments.is_empty());
                match chunk.finish_reason.as_deref() {
                    Some(reason) if !visible && ERROR_FINISH_REASONS.contains(&reason) => {
                        self.state = GateState::Rejected(reason.to_string());
                    }
                    None if !visible => self.held.push(chunk),
                    _ => {
                        self.state = GateState::Open;
                        for held in self.held.drain(..) {
                            (self.sink)(held);
                        }
                        (self.sink)(chunk);
                    }
                }
            }
        }
    }
}
