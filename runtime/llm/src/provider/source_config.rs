//! One configured LLM source: where it is, which adapter speaks its wire format, and the
//! limits its calls run under. `hearth.toml` holds a list of them; the provider manager turns
//! each into a [`LuaSource`](super::LuaSource).

use serde::{Deserialize, Serialize};

/// One LLM source (SPEC §8.3 `core.llm.sources.<name>.*`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SourceConfig {
    /// The source's unique name.
    pub name: String,
    /// Where its API lives (`http://` or `https://`).
    pub base_url: String,
    /// The model to ask for.
    pub model: String,
    /// The API key ("" when none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_key: String,
    /// Adapter script name (`openai`, `anthropic`, `gemini`, `ollama`, or a user's own).
    pub adapter: String,
    /// Higher is tried first.
    pub priority: i32,
    /// The model's window in tokens; 0 = unknown.
    pub context_window: usize,
    /// Sampling temperature; `None` = 0.7.
    pub temperature: Option<f64>,
    /// Completion token limit; 0 = 4096.
    pub max_tokens: u32,
}

impl SourceConfig {
    /// SPEC §7.2 `IsValidSourceConfig`, with the reason when it is not.
    pub fn validate(&self) -> Result<(), String> {
        let blank = |v: &str| v.trim().is_empty() || matches!(v, "nil" | "null" | "<nil>");
        for (field, value) in [
            ("name", &self.name),
            ("base_url", &self.base_url),
            ("model", &self.model),
            ("adapter", &self.adapter),
        ] {
            if blank(value) {
                return Err(format!("source {:?}: `{field}` is required", self.name));
            }
        }
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return Err(format!(
                "source {:?}: base_url must start with http:// or https://",
                self.name
            ));
        }
        Ok(())
    }
}
