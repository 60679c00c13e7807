//! A labelled set for tool choice: 102 tools of a home assistant (name, description,
//! parameter names), each with one English and one Chinese request it should serve.
//!
//! How it was made: the tools and their descriptions were written first, covering the kinds of
//! tool a household installs (home devices, media, messages, files, travel, health, money);
//! then, from each description alone, one request a user might type in each language,
//! paraphrasing rather than copying the description's words. The set was written before the
//! selection was run on it and has not been edited after seeing its results.

use serde_json::{Map, Value, json};

/// One tool of the set and the requests it should be offered for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelledTool {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its parameter names (all strings, the first one required).
    pub params: Vec<String>,
    /// A request in English it should serve.
    pub en: String,
    /// A request in Chinese it should serve.
    pub zh: String,
}

impl LabelledTool {
    /// The JSON schema of its arguments.
    pub fn parameters(&self) -> Value {
        let props: Map<String, Value> = self
            .params
            .iter()
            .map(|p| (p.clone(), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": props, "required": self.params.first().into_iter().collect::<Vec<_>>()})
    }
}

/// The whole set, in file order.
pub fn labelled_tools() -> Vec<LabelledTool> {
    include_str!("../data/tool_choice.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("tool_choice.jsonl line {}: {e}", i + 1));
            let text = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            LabelledTool {
                name: text("name"),
                description: text("description"),
                params: v["params"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.as_str().map(str::to_owned))
                    .collect(),
                en: text("en"),
                zh: text("zh"),
            }
        })
        .collect()
}
