//! What arrives on the kernel node's one completion edge: the result of whichever service
//! finished. Each service reports through its own typed [`Sink`](hearth_engine::Sink) and knows
//! only its own result type; `graph.rs` maps each sink into this enum. Every result carries the
//! call number the turn engine gave out, so one that arrives after its call was abandoned (a
//! tool past its timeout, an LLM call after a cancel) is recognised and dropped.

use crate::memory_service::MemoryDone;
use crate::provider_service::LlmDone;
use crate::stage_service::StageJobDone;
use crate::tool_pool::ToolDone;

/// One finished service call, as the kernel node receives it.
#[derive(Debug)]
pub enum Completion {
    /// An LLM call ended (answer, error or cancel).
    Llm(LlmDone),
    /// A tool call ended.
    Tool(ToolDone),
    /// A memory pass ended.
    Memory(MemoryDone),
    /// A stage's blocking handlers ended (boxed: it carries a whole stage context, the other
    /// results are small and far more frequent).
    Stage(Box<StageJobDone>),
}

impl From<StageJobDone> for Completion {
    fn from(done: StageJobDone) -> Self {
        Self::Stage(Box::new(done))
    }
}

impl From<LlmDone> for Completion {
    fn from(done: LlmDone) -> Self {
        Self::Llm(done)
    }
}

impl From<ToolDone> for Completion {
    fn from(done: ToolDone) -> Self {
        Self::Tool(done)
    }
}

impl From<MemoryDone> for Completion {
    fn from(done: MemoryDone) -> Self {
        Self::Memory(done)
    }
}
