//! The provider I/O service: one thread that runs blocking provider calls so the kernel's
//! worker never waits on the network. Deltas go to the event ring as they arrive; the
//! accumulated answer goes back to the turn engine as an [`LlmDone`].

use crate::KernelError;
use crate::events::{Delta, EventBus};
use crossbeam_channel::{Receiver, Sender};
use hearth_engine::{CancelToken, Sink, panic_message};
use hearth_ipc::EventKind;
use hearth_llm::provider::{Accumulator, ChatProvider, ChatRequest, ChatResponse, ProviderError};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One LLM call handed to the service.
#[derive(Debug)]
pub struct LlmCall {
    /// The call number the result carries back.
    pub call: u64,
    /// What to ask the provider.
    pub request: ChatRequest,
    /// Fires to end the call early.
    pub cancel: CancelToken,
    /// Output channel the deltas are tagged with.
    pub channel: String,
    /// The task's request id, so a reader can follow the deltas of its own request.
    pub request_id: String,
}

/// The end of one LLM call, as the provider service reports it.
#[derive(Debug)]
pub struct LlmDone {
    /// The call number of the [`LlmCall`].
    pub call: u64,
    /// The accumulated answer, or why there is none.
    pub result: Result<ChatResponse, ProviderError>,
    /// Text streamed before the call ended; kept when a stop ends the task.
    pub partial: String,
}

/// Calls queued for the provider thread. Tasks run one at a time and a task has at most one
/// call in flight, so the queue holds one call plus the cancelled ones still draining.
pub const PROVIDER_QUEUE: usize = 4;

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
    /// Starts the provider thread; deltas go to `events`, results to `done`.
    pub fn start(
        provider: Arc<dyn ChatProvider>,
        events: EventBus,
        done: Sink<LlmDone>,
    ) -> (Self, JoinHandle<()>) {
        let (tx, rx) = crossbeam_channel::bounded(PROVIDER_QUEUE);
        let served = provider.clone();
        let handle = std::thread::Builder::new()
            .name("hearth-provider".into())
            .spawn(move || serve(served, &events, &done, &rx))
            .expect("spawning the provider thread at startup");
        (Self { tx, provider }, handle)
    }

    /// Queues one call without waiting; refuses it when [`PROVIDER_QUEUE`] calls are already
    /// waiting (the thread only exits when every handle is gone, so it is never gone while one
    /// is held).
    pub fn call(&self, call: LlmCall) -> Result<(), KernelError> {
        self.tx
            .try_send(call)
            .map_err(|_| KernelError::ProviderQueueFull)
    }

    /// Asked at every turn: sources added or removed at run time change the budget.
    pub fn max_context_tokens(&self) -> usize {
        self.provider.max_context_tokens()
    }

    /// Whether the default source sends the tool schemas to its model, so the budget must
    /// count them; asked at every turn like the window.
    pub fn takes_tools(&self) -> bool {
        self.provider.takes_tools()
    }
}

fn serve(
    provider: Arc<dyn ChatProvider>,
    events: &EventBus,
    done: &Sink<LlmDone>,
    rx: &Receiver<LlmCall>,
) {
    // One envelope buffer for every delta of every call: its capacity is reused.
    let mut envelope = Vec::with_capacity(256);
    for LlmCall {
        call,
        request,
        cancel,
        channel,
        request_id,
    } in rx.iter()
    {
        let mut acc = Accumulator::new();
        fn delta<'a>(content: &'a str, channel: &'a str, request_id: &'a str) -> Delta<'a> {
            Delta {
                content,
                channel,
                request_id,
                reset: false,
            }
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            provider.chat_stream(&request, &cancel, &mut |chunk| {
                if !chunk.reasoning.is_empty() {
                    events.publish_delta(
                        &mut envelope,
                        EventKind::ReasoningDelta,
                        &delta(&chunk.reasoning, &channel, &request_id),
                    );
                }
                if !chunk.content.is_empty() {
                    events.publish_delta(
                        &mut envelope,
                        EventKind::ContentDelta,
                        &delta(&chunk.content, &channel, &request_id),
                    );
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
                    let reset = Delta {
                        reset: true,
                        ..delta("", &channel, &request_id)
                    };
                    events.publish_delta(&mut envelope, EventKind::ContentDelta, &reset);
                }
                Err(e)
            }
        };
        done.send(LlmDone {
            call,
            result,
            partial,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_llm::provider::StreamChunk;
    use std::time::Duration;

    /// Streams one chunk once `gate` lets it through: holds the provider thread on demand.
    struct Gated {
        gate: Receiver<()>,
    }

    impl ChatProvider for Gated {
        fn name(&self) -> &str {
            "gated"
        }

        fn chat_stream(
            &self,
            _request: &ChatRequest,
            _cancel: &CancelToken,
            sink: &mut dyn FnMut(StreamChunk),
        ) -> Result<(), ProviderError> {
            self.gate
                .recv_timeout(Duration::from_secs(10))
                .map_err(|_| ProviderError::Other("gate never opened".into()))?;
            sink(StreamChunk {
                content: "ok".into(),
                ..StreamChunk::default()
            });
            Ok(())
        }
    }

    fn call(n: u64) -> LlmCall {
        LlmCall {
            call: n,
            request: ChatRequest::new(Vec::new(), Vec::new()),
            cancel: CancelToken::new(),
            channel: "cli".into(),
            request_id: format!("req-{n}"),
        }
    }

    #[test]
    fn a_call_past_the_queue_bound_is_refused_at_once_and_the_queued_ones_all_finish() {
        let (open, gate) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::unbounded();
        let (service, thread) = ProviderService::start(
            Arc::new(Gated { gate }),
            EventBus::with_default_ring("test"),
            Sink::new(move |d: LlmDone| {
                let _ = done_tx.send(d);
            }),
        );
        service.call(call(0)).expect("the first call is taken");
        // The thread holds call 0 once the queue has room for PROVIDER_QUEUE more.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !service.tx.is_empty() {
            assert!(std::time::Instant::now() < deadline, "call 0 taken");
            std::thread::sleep(Duration::from_millis(1));
        }
        for n in 1..=PROVIDER_QUEUE as u64 {
            service.call(call(n)).expect("room in the queue");
        }
        let started = std::time::Instant::now();
        assert!(matches!(
            service.call(call(99)),
            Err(KernelError::ProviderQueueFull)
        ));
        assert!(
            started.elapsed() < Duration::from_millis(100),
            "never waits"
        );
        for _ in 0..=PROVIDER_QUEUE {
            open.send(()).expect("gate");
        }
        let mut finished: Vec<u64> = (0..=PROVIDER_QUEUE)
            .map(|_| {
                let d = done.recv_timeout(Duration::from_secs(10)).expect("done");
                assert_eq!(d.result.expect("answered").content, "ok");
                d.call
            })
            .collect();
        finished.sort_unstable();
        assert_eq!(finished, (0..=PROVIDER_QUEUE as u64).collect::<Vec<_>>());
        drop(service);
        thread
            .join()
            .expect("the provider thread ends with its last handle");
    }
}
