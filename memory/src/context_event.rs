//! One entry of the working context window (SPEC §4.5): an input, the reply to it, and the
//! tools the reply used, stamped with the time it happened.

use serde::{Deserialize, Serialize};

/// A tool's output as kept in the context window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    pub name: String,
    pub output: String,
}

/// One event of the timeline. `timestamp_ms` is Unix time in milliseconds: the original time
/// of the event, kept when the event moves between memory layers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextEvent {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub timestamp_ms: i64,
    pub source: String,
    pub input: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub response: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_used: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolOutput>,
}

impl ContextEvent {
    pub fn new(timestamp_ms: i64, source: impl Into<String>, input: impl Into<String>) -> Self {
        Self {
            timestamp_ms,
            source: source.into(),
            input: input.into(),
            ..Self::default()
        }
    }

    pub fn with_response(mut self, response: impl Into<String>) -> Self {
        self.response = response.into();
        self
    }
}
