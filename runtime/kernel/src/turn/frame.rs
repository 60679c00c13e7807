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
    /// Stages and prompt assembly.
    Prepare,
    /// The LLM call.
    Llm,
    /// Setting up a batch of tool calls.
    ToolBatch,
    /// Before-tool stages of the next call.
    ToolBegin,
    /// Running the call.
    ToolExec,
    /// After-tool stages of the call.
    ToolAfter,
    /// The end of a turn: reply or next round.
    TurnEnd,
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Terminal {
    /// A reply, recorded in the context window.
    Ok(String),
    /// `on_input` answered: replied without touching the context window.
    ShortCircuit(String),
    /// The task failed with this message.
    Failed(String),
    /// The task was skipped for this reason.
    Skipped(String),
}

/// The outcome of one tool of the current batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// Whether the tool succeeded.
    pub success: bool,
    /// Its result, or the error text.
    pub raw: Value,
    /// The media its result brought, stored and shown by reference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<hearth_llm::provider::MediaPart>,
}

impl ToolOutcome {
    /// A tool that failed, or never answered: `text` says why.
    pub fn failed(text: String) -> Self {
        Self {
            success: false,
            raw: Value::String(text),
            media: Vec::new(),
        }
    }
}

/// Everything a task carries between steps; saved when it is suspended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskFrame {
    /// The step to run next.
    pub step: Step,
    /// The input text as received.
    pub input: String,
    /// The input after the input stages.
    pub clean_input: String,
    /// Who sent the input.
    pub source: String,
    /// Where the reply goes.
    pub output_channel: String,
    /// The task is an interrupt.
    pub is_interrupt: bool,
    /// The input asked not to be remembered.
    pub no_memory: bool,
    /// The input came on the critical channel.
    pub critical: bool,
    /// When the task started, ms since the epoch.
    pub started_at_ms: i64,
    /// The stage context of the turn.
    pub stage_ctx: StageContext,
    /// The prompt so far.
    pub msgs: Vec<Message>,
    /// Messages built by `Prepare` (system prompt, timeline, input): rebuilt on resume.
    pub prefix_len: usize,
    /// Tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// Names of the tools called so far.
    pub tools_used: Vec<String>,
    /// Outputs of the tools called so far.
    pub tool_results: Vec<ToolOutput>,
    /// Finished tool batches.
    pub turn: u32,
    /// The previous batch called only reply tools (its output already reached the user).
    pub last_batch_reply_only: bool,
    /// Text of the latest LLM answer (the max-turns reply falls back to it).
    pub last_content: String,
    /// The reasoning of the last LLM answer.
    pub last_reasoning: String,
    /// Tokens used so far.
    pub usage: Option<Usage>,
    /// The tool calls of the current batch.
    pub batch: Vec<ToolCallOut>,
    /// Stage context of each call of the batch.
    pub batch_ctxs: Vec<StageContext>,
    /// The plugin owning each call of the batch.
    pub batch_plugins: Vec<String>,
    /// Why each call was denied, if it was.
    pub batch_denied: Vec<Option<String>>,
    /// Result of each call once it is back.
    pub batch_results: Vec<Option<ToolOutcome>>,
    /// The call of the batch being worked on.
    pub tool_idx: usize,
    /// The current batch runs as one parallel step.
    pub parallel: bool,
    /// Every call of the current batch is a reply tool.
    pub reply_only: bool,
    /// Index of the batch's single assistant message once written.
    pub assistant_idx: Option<usize>,
    /// How the task ended, once it has.
    pub terminal: Option<Terminal>,
    /// The task was suspended when the daemon stopped and resumed after a restart.
    #[serde(default)]
    pub resumed_after_restart: bool,
    /// Recalled memory for this turn's prompt ("" when none).
    #[serde(default)]
    pub memory_block: String,
    /// The cold items in `memory_block` and in the tools' recalls, with why each was recalled.
    #[serde(default)]
    pub recalled: Vec<crate::recalled::RecalledItem>,
    /// The graph's facts (`r12`, `e3`) shown in `memory_block` and in the tools' recalls.
    #[serde(default)]
    pub shown_facts: Vec<String>,
    /// The media the current batch's tools brought, by tool, shown to the model when the batch
    /// ends.
    #[serde(default)]
    pub tool_media: Vec<(String, Vec<hearth_llm::provider::MediaPart>)>,
    /// What the current batch's tools recalled (their declared `recall_policy: "auto"`),
    /// placed into the prompt when the batch ends ("" when nothing).
    #[serde(default)]
    pub tool_recall: String,
    /// The language the task's texts are written in, decided from its input.
    #[serde(default)]
    pub lang: crate::lang::Lang,
    /// Names of the tools the task offers, chosen at its first Prepare and only grown after
    /// (`None`: not chosen yet), so the prompt prefix stays the same between rounds.
    #[serde(default)]
    pub tool_choice: Option<Vec<String>>,
    /// The memory pass's ranking of the tools against the input, nearest first.
    #[serde(default)]
    pub tool_ranking: Vec<String>,
    /// The media the input brought, by reference: shown with the input's message to a
    /// source that takes images.
    #[serde(default)]
    pub media: Vec<hearth_llm::provider::MediaPart>,
}

impl TaskFrame {
    /// A frame at the first step.
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
            recalled: Vec::new(),
            shown_facts: Vec::new(),
            tool_recall: String::new(),
            tool_media: Vec::new(),
            media: Vec::new(),
            lang: crate::lang::Lang::default(),
            tool_choice: None,
            tool_ranking: Vec::new(),
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
