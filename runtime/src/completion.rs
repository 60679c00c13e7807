//! Results that service threads hand back to the turn engine. Each carries the call number the
//! engine gave out, so a result that arrives after its call was abandoned (a tool past its
//! timeout, an LLM call after a cancel) is recognised and dropped.

use crate::provider::{ChatResponse, ProviderError};
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug)]
pub enum Completion {
    Llm {
        call: u64,
        result: Result<ChatResponse, ProviderError>,
        /// Text streamed before the call ended; kept when a stop ends the task.
        partial: String,
    },
    Tool {
        call: u64,
        result: Result<Value, String>,
    },
    Memory {
        call: u64,
        result: Result<crate::memory_service::MemoryPass, String>,
    },
}

/// Where service threads deliver completions; the graph wires it to the kernel's edge.
pub type CompletionSink = Arc<dyn Fn(Completion) + Send + Sync>;
