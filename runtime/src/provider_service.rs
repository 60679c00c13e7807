//! The provider I/O service: one thread that runs blocking provider calls so the kernel's
//! worker never waits on the network. Deltas go to the event ring as they arrive; the
//! accumulated answer goes back to the turn engine as a [`Completion`].

use crate::completion::{Completion, CompletionSink};
use crate::events::EventBus;
use crate::provider::{Accumulator, CancelToken, ChatProvider, ChatRequest, ProviderError};
use crossbeam_channel::{Receiver, Sender};
use hearth_ipc::EventKind;
use serde_json::json;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One LLM call handed to the service.
#[derive(Debug)]
pub struct LlmCall {
    pub call: u64,
    pub request: ChatRequest,
    pub cancel: CancelToken,
    /// Output channel the deltas are tagged with.
    pub channel: String,
    /// The task's request id, so a reader can follow the deltas of its own request.
    pub request_id: String,
}

/// Handle used by the turn engine; dropping every handle stops the thread.
#[derive(Clone)]
pub struct ProviderService {
    tx: Sender<LlmCall>,
    provider: Arc<dyn ChatProvider>,
}

impl std::fmt::Debug for ProviderService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderService")
            .field("provider", &self.provider.name())
            .finish()
    }
}

impl ProviderService {
    pub fn start(
        provider: Arc<dyn ChatProvider>,
        events: EventBus,
        done: CompletionSink,
    ) -> (Self, JoinHandle<()>) {
        let (tx, rx) = crossbeam_channel::unbounded();
        let served = provider.clone();
        let handle = std::thread::Builder::new()
            .name("hearth-provider".into())
            .spawn(move || serve(served, &events, &done, &rx))
            .expect("spawning the provider thread at startup");
        (Self { tx, provider }, handle)
    }

    pub fn call(&self, call: LlmCall) {
        // The thread only exits when every handle is gone, so this cannot fail while we hold one.
        let _ = self.tx.send(call);
    }

    /// Asked at every turn: sources added or removed at run time change the budget.
    pub fn max_context_tokens(&self) -> usize {
        self.provider.max_context_tokens()
    }
}

fn serve(
    provider: Arc<dyn ChatProvider>,
    events: &EventBus,
    done: &CompletionSink,
    rx: &Receiver<LlmCall>,
) {
    for LlmCall {
        call,
        request,
        cancel,
        channel,
        request_id,
    } in rx.iter()
    {
        let mut acc = Accumulator::new();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            provider.chat_stream(&request, &cancel, &mut |chunk| {
                if !chunk.reasoning.is_empty() {
                    events.publish(EventKind::ReasoningDelta, &json!({"content": chunk.reasoning, "channel": channel, "request_id": request_id}));
                }
                if !chunk.content.is_empty() {
                    events.publish(EventKind::ContentDelta, &json!({"content": chunk.content, "channel": channel, "request_id": request_id}));
                }
                acc.push(&chunk);
            })
        }));
        let outcome = match outcome {
            Ok(r) => r,
            Err(panic) => Err(ProviderError::Other(format!(
                "provider {} panicked: {}",
                provider.name(),
                panic_message(&*panic)
            ))),
        };
        // A cancel that raced with a successful finish still counts as a cancel: the caller
        // asked for the call to end, and acting on its answer would contradict that.
        let outcome = if cancel.is_cancelled() {
            Err(ProviderError::Cancelled)
        } else {
            outcome
        };
        let partial = acc.content().to_string();
        let result = match outcome {
            Ok(()) => Ok(acc.finish()),
            Err(e) => {
                if e == ProviderError::Cancelled {
                    events.publish(EventKind::ContentDelta, &json!({"content": "", "channel": channel, "request_id": request_id, "reset": true}));
                }
                Err(e)
            }
        };
        done(Completion::Llm {
            call,
            result,
            partial,
        });
    }
}

/// The text of a caught panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}
