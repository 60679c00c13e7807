//! The state of one task between steps (SPEC §3.1). A frame is plain data: it holds no locks,
//! handles or channels, so a suspended task can be stacked, inspected and persisted.

use hearth_llm::provider::{Message, ToolCallOut, ToolSpec, Usage};
use hearth_memory::ToolOutput;
use hearth_stages::StageContext;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The steps of the task state machine. Safe points lie only between steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    /// Input preparation (SPEC §3.2): runs once per task, never again on resume.
    Input,
    /// Pruning and recall for this input on the memory service (only when memory is on).
    Memory,
    Prepare,
    Llm,
    ToolBatch,
    ToolBegin,
    ToolExec,
    ToolAfter,
    TurnEnd,
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Terminal {
    /// A reply, recorded in the context window.
    Ok(String),
    /// `on_input` answered: replied without touching the context window.
    ShortCircuit(String),
    Failed(String),
    Skipped(String),
}

/// The outcome of one tool of the current batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub success: bool,
    pub raw: Value,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskFrame {
    pub step: Step,
    pub input: String,
    pub clean_input: String,
    pub source: String,
    pub output_channel: String,
    pub is_interrupt: bool,
    pub no_memory: bool,
    pub critical: bool,
    pub started_at_ms: i64,
    pub stage_ctx: StageContext,
    pub msgs: Vec<Message>,
    /// Messages built by `Prepare` (system prompt, timeline, input): rebuilt on resume.
    pub prefix_len: usize,
    pub tools: Vec<ToolSpec>,
    pub tools_used: Vec<String>,
    pub tool_results: Vec<ToolOutput>,
    /// Finished tool batches.
    pub turn: u32,
    pub last_batch_reply_only: bool,
    /// Text of the latest LLM answer (the max-turns reply falls back to it).
    pub last_content: String,
    pub last_reasoning: String,
    pub usage: Option<Usage>,
    pub batch: Vec<ToolCallOut>,
    pub batch_ctxs: Vec<StageContext>,
    pub batch_plugins: Vec<String>,
    pub batch_denied: Vec<Option<String>>,
    pub batch_results: Vec<Option<ToolOutcome>>,
    pub tool_idx: usize,
    /// The current batch runs as one parallel step.
    pub parallel: bool,
    pub reply_only: bool,
    /// Index of the batch's single assistant message once written.
    pub assistant_idx: Option<usize>,
    pub terminal: Option<Terminal>,
    /// The task was suspended when the daemon stopped and resumed after a restart.
    #[serde(default)]
    pub resumed_after_restart: bool,
    /// Recalled memory for this turn's prompt ("" when none).
    #[serde(default)]
    pub memory_block: String,
}

impl TaskFrame {
    pub fn new(source: &str, output_channel: &str, started_at_ms: i64) -> Self {
        Self {
            step: Step::Input,
            input: String::new(),
            clean_input: String::new(),
            source: source.into(),
            output_channel: output_channel.into(),
            is_interrupt: false,
            no_memory: false,
            critical: false,
            started_at_ms,
            stage_ctx: StageContext::default(),
            msgs: Vec::new(),
            prefix_len: 0,
            tools: Vec::new(),
            tools_used: Vec::new(),
            tool_results: Vec::new(),
            turn: 0,
            last_batch_reply_only: false,
            last_content: String::new(),
            last_reasoning: String::new(),
            usage: None,
            batch: Vec::new(),
            batch_ctxs: Vec::new(),
            batch_plugins: Vec::new(),
            batch_denied: Vec::new(),
            batch_results: Vec::new(),
            tool_idx: 0,
            parallel: false,
            reply_only: false,
            assistant_idx: None,
            terminal: None,
            resumed_after_restart: false,
            memory_block: String::new(),
        }
    }

    /// Replaces the prefix with `prefix` and keeps the tail (SPEC §2.11 `rebaseFramePrefix`).
    pub fn rebase_prefix(&mut self, prefix: Vec<Message>) {
        let old = self.prefix_len.min(self.msgs.len());
        let new_len = prefix.len();
        let tail = self.msgs.split_off(old);
        self.msgs = prefix;
        self.msgs.extend(tail);
        if let Some(idx) = self.assistant_idx.as_mut() {
            *idx = *idx - old + new_len;
        }
        self.prefix_len = new_len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebase_keeps_tail_and_shifts_assistant_index() {
        let mut f = TaskFrame::new("cli", "cli", 0);
        f.msgs = vec![
            Message::system("old"),
            Message::user("q"),
            Message::system("note"),
            Message::tool("c", "r"),
        ];
        f.prefix_len = 2;
        f.assistant_idx = Some(3);
        f.rebase_prefix(vec![
            Message::system("new"),
            Message::system("timeline"),
            Message::user("q"),
        ]);
        let texts: Vec<_> = f.msgs.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(texts, ["new", "timeline", "q", "note", "r"]);
        assert_eq!(f.prefix_len, 3);
        assert_eq!(f.assistant_idx, Some(4));
    }
}
