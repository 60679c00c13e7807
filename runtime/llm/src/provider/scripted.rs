//! An in-process provider that plays back a script: the deterministic stand-in for a model in
//! kernel tests and in the per-turn overhead benchmark. It honours cancellation exactly like a
//! real provider (between chunks and while "thinking"), and records every request it saw.

use super::{ChatProvider, ChatRequest, ProviderError, Role, StreamChunk, ToolCallDelta};
use hearth_engine::CancelToken;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// One scripted call.
#[derive(Clone, Debug)]
pub enum ScriptStep {
    /// Stream these chunks, waiting `delay` before each (cancellation is checked while waiting).
    Stream {
        /// The chunks.
        chunks: Vec<StreamChunk>,
        /// The wait before each chunk.
        delay: Duration,
    },
    /// Stream these chunks, then stay silent until cancelled (a long prefill, a stuck server).
    HangAfter(Vec<StreamChunk>),
    /// Fail with this error.
    Fail(ProviderError),
    /// Panic inside the provider (a buggy adapter).
    Panic(String),
}

impl ScriptStep {
    /// A text answer streamed word by word.
    pub fn text(text: &str) -> Self {
        Self::Stream {
            chunks: words(text),
            delay: Duration::ZERO,
        }
    }

    /// A text answer streamed word by word, `delay` before each word.
    pub fn slow_text(text: &str, delay: Duration) -> Self {
        Self::Stream {
            chunks: words(text),
            delay,
        }
    }

    /// An answer that calls these tools (name, arguments), arguments streamed in two fragments.
    pub fn tool_calls(calls: &[(&str, Value)]) -> Self {
        let mut chunks = Vec::new();
        for (i, (name, args)) in calls.iter().enumerate() {
            let text = args.to_string();
            let mid = text.len() / 2;
            let (a, b) = text.split_at(
                text.char_indices()
                    .map(|(at, _)| at)
                    .find(|&at| at >= mid)
                    .unwrap_or(0),
            );
            let index = i as u32;
            chunks.push(StreamChunk {
                tool_calls: vec![ToolCallDelta {
                    stream_index: index,
                    id: format!("call_{i}"),
                    name: (*name).into(),
                    arguments: a.into(),
                }],
                ..StreamChunk::default()
            });
            chunks.push(StreamChunk {
                tool_calls: vec![ToolCallDelta {
                    stream_index: index,
                    arguments: b.into(),
                    ..ToolCallDelta::default()
                }],
                ..StreamChunk::default()
            });
        }
        chunks.push(StreamChunk {
            finish_reason: Some("tool_calls".into()),
            done: true,
            ..StreamChunk::default()
        });
        Self::Stream {
            chunks,
            delay: Duration::ZERO,
        }
    }
}

fn words(text: &str) -> Vec<StreamChunk> {
    let mut chunks: Vec<StreamChunk> = text.split_inclusive(' ').map(StreamChunk::text).collect();
    chunks.push(StreamChunk {
        finish_reason: Some("stop".into()),
        done: true,
        ..StreamChunk::default()
    });
    chunks
}

/// A provider that plays back [`ScriptStep`]s, one per call.
#[derive(Default)]
pub struct ScriptedProvider {
    name: String,
    steps: Mutex<VecDeque<ScriptStep>>,
    requests: Mutex<Vec<ChatRequest>>,
    max_context: usize,
    no_tools: bool,
}

impl std::fmt::Debug for ScriptedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedProvider")
            .field("name", &self.name)
            .finish()
    }
}

impl ScriptedProvider {
    /// A provider that answers the next calls with `steps`.
    pub fn new(steps: impl IntoIterator<Item = ScriptStep>) -> Self {
        Self {
            name: "scripted".into(),
            steps: Mutex::new(steps.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            max_context: 0,
            no_tools: false,
        }
    }

    /// Reports `tokens` as its context window.
    pub fn with_max_context(mut self, tokens: usize) -> Self {
        self.max_context = tokens;
        self
    }

    /// Reports that its model is sent no tool schemas, as a `no_tools` source does (the
    /// requests it records still carry them).
    pub fn without_tools(mut self) -> Self {
        self.no_tools = true;
        self
    }

    /// Queues one more step.
    pub fn push(&self, step: ScriptStep) {
        self.steps.lock().push_back(step);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().clone()
    }

    /// How many calls it has served.
    pub fn request_count(&self) -> usize {
        self.requests.lock().len()
    }
}

/// Waits up to `d`, returning early (false) when cancelled.
fn wait(cancel: &CancelToken, d: Duration) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if cancel.is_cancelled() {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200).min(until - Instant::now()));
    }
    !cancel.is_cancelled()
}

impl ChatProvider for ScriptedProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn max_context_tokens(&self) -> usize {
        self.max_context
    }

    fn takes_tools(&self) -> bool {
        !self.no_tools
    }

    fn chat_stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        sink: &mut dyn FnMut(StreamChunk),
    ) -> Result<(), ProviderError> {
        self.requests.lock().push(request.clone());
        // When the script runs out, answer by echoing the last user-visible input: still a
        // deterministic, checkable reply.
        let step = self.steps.lock().pop_front().unwrap_or_else(|| {
            let last = request
                .messages
                .iter()
                .rev()
                .find(|m| m.role != Role::Tool)
                .map_or("", |m| m.content.as_str());
            ScriptStep::text(&format!("echo: {last}"))
        });
        match step {
            ScriptStep::Stream { chunks, delay } => {
                for chunk in chunks {
                    if cancel.is_cancelled() || (!delay.is_zero() && !wait(cancel, delay)) {
                        return Err(ProviderError::Cancelled);
                    }
                    sink(chunk);
                }
                Ok(())
            }
            ScriptStep::HangAfter(chunks) => {
                for chunk in chunks {
                    sink(chunk);
                }
                while !cancel.is_cancelled() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(ProviderError::Cancelled)
            }
            ScriptStep::Fail(e) => Err(e),
            ScriptStep::Panic(msg) => panic!("{msg}"),
        }
    }
}
