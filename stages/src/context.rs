//! The data one stage handler sees and may rewrite.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One message of the conversation window as plugins see it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContextMsg {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The message text.
    pub content: String,
}

/// A tool call requested by the LLM, with its owning plugin resolved by the kernel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolCall {
    /// The call id the model gave it; the tool message answers with the same id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The plugin that owns the tool (empty for the kernel's own).
    pub plugin: String,
    /// The arguments object as the model sent it.
    pub arguments: Value,
}

/// The outcome of one tool call; `result` is the raw value the tool returned.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolResult {
    /// The id of the [`ToolCall`] this answers.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The plugin that owns the tool.
    pub plugin: String,
    /// Whether the tool returned a value rather than an error.
    pub success: bool,
    /// The value (or the error text) the tool returned.
    pub result: Value,
}

/// A recalled memory with its relevance score.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoryItem {
    /// The role of the remembered message.
    pub role: String,
    /// The remembered text.
    pub content: String,
    /// Its relevance to the current input (higher is closer).
    pub score: f64,
}

/// The public plugin-facing view of one turn (or of one tool call inside it).
///
/// The original embedded a lock because handlers shared one context concurrently; here handlers of a
/// stage run one after another, each on its own copy (see `StagePipeline`), so the context is plain
/// data. `response` is `Some` once a handler short-circuits the path; `Some("")` is distinct from
/// `None` and still counts as responded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageContext {
    /// The input's text as it arrived.
    pub raw_message: String,
    /// Who sent it, as its source names them.
    pub user_id: String,
    /// The conversation or group it belongs to, when the source has one.
    pub group_id: String,
    /// The conversation window sent to the model.
    pub context_msgs: Vec<ContextMsg>,
    /// The model's answer text of this step.
    pub llm_text: String,
    /// The model's reasoning text of this step, when it streams one.
    pub reasoning_content: String,
    /// Keys `prompt_tokens`, `completion_tokens`, `total_tokens` once the LLM has answered.
    pub token_usage: BTreeMap<String, i64>,
    /// The tool calls the model asked for in this step.
    pub tool_calls: Vec<ToolCall>,
    /// The results of those calls, once they ran.
    pub tool_results: Vec<ToolResult>,
    /// The text that will be delivered as the answer.
    pub final_text: String,
    /// Set by a handler that answers in the model's place (see above).
    pub response: Option<String>,
    /// The wire name of the stage being run; set by `StagePipeline::run`.
    pub phase: String,
    /// Memories recalled for this turn.
    pub memory: Vec<MemoryItem>,
    /// This turn must not become a memory candidate.
    pub no_memory: bool,
    /// Open-ended data (`output_channel`, `input_source`, `media_type`, `media_blocks`, ...).
    pub extra: Map<String, Value>,
    /// `"<plugin>: <message>"` lines from failed handlers.
    pub errors: Vec<String>,
}

impl StageContext {
    /// A context that carries only the text about to be sent (what before_output sees).
    pub fn with_final_text(text: impl Into<String>) -> StageContext {
        StageContext {
            final_text: text.into(),
            ..StageContext::default()
        }
    }

    /// Whether a handler has short-circuited the path by setting `response`.
    pub fn is_responded(&self) -> bool {
        self.response.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_round_trip_keeps_response_some_empty_apart_from_none() {
        let mut ctx = StageContext::with_final_text("hi");
        ctx.response = Some(String::new());
        ctx.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "weather_now".into(),
            plugin: "weather".into(),
            arguments: serde_json::json!({"city": "Oslo"}),
        });
        ctx.token_usage.insert("total_tokens".into(), 12);
        let json = serde_json::to_string(&ctx).expect("a context always serialises");
        let back: StageContext = serde_json::from_str(&json).expect("own output parses");
        assert_eq!(back, ctx);
        assert!(back.is_responded());

        let empty: StageContext = serde_json::from_str("{}").expect("every field defaults");
        assert!(!empty.is_responded());
        assert_eq!(empty, StageContext::default());
    }
}
