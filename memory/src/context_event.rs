//! One entry of the working context window (SPEC §4.5): an input, the reply to it, and the
//! tools the reply used, stamped with the time it happened.

use serde::{Deserialize, Serialize};

/// A tool's output as kept in the context window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The tool that produced the output.
    pub name: String,
    /// What the tool returned, as text.
    pub output: String,
}

/// One event of the timeline. `timestamp_ms` is Unix time in milliseconds: the original time
/// of the event, kept when the event moves between memory layers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextEvent {
    /// Caller-chosen identity, empty when none; [`RECALLED_PREFIX`](crate::RECALLED_PREFIX)
    /// marks a copy recalled from cold context.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// When the event happened, in Unix milliseconds.
    pub timestamp_ms: i64,
    /// The input channel it came from, or [`AGENT_SOURCE`](crate::AGENT_SOURCE) for the
    /// agent's own turns.
    pub source: String,
    /// What was said to the agent.
    pub input: String,
    /// The agent's reply, empty while there is none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub response: String,
    /// Names of the tools the reply called, in call order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_used: Vec<String>,
    /// The outputs those tools returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolOutput>,
    /// What memory put in front of the model for the reply: the ids of the facts (`r12`, `e3`)
    /// and remembered turns (`c45`) it was shown. The reply may repeat what they said, so a
    /// forgotten fact's value leaves the replies of the turns it was shown in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shown: Vec<String>,
}

impl ContextEvent {
    /// An event with no id, reply or tools yet.
    pub fn new(timestamp_ms: i64, source: impl Into<String>, input: impl Into<String>) -> Self {
        Self {
            timestamp_ms,
            source: source.into(),
            input: input.into(),
            ..Self::default()
        }
    }

    /// The same event with `response` as its reply.
    pub fn with_response(mut self, response: impl Into<String>) -> Self {
        self.response = response.into();
        self
    }
}
