//! Folding a stream into one answer (SPEC §7.4): text and reasoning concatenated, tool-call
//! fragments grouped by `stream_index`, and arguments parsed with the repairs real models need.

use super::{ChatResponse, StreamChunk, ToolCallOut, Usage};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Key of the arguments object given to a tool whose call was cut off by the token limit.
pub const TRUNCATED_ARGS_KEY: &str = "__truncated_error";
const TRUNCATED_ARGS_TEXT: &str =
    "工具调用参数因输出长度上限被截断，JSON 不完整。请把内容拆分成多次较小的调用后重试。";

#[derive(Default, Debug)]
struct Group {
    id: String,
    name: String,
    arguments: String,
}

/// Folds streamed chunks into one answer, joining tool-call fragments by stream index.
#[derive(Default, Debug)]
pub struct Accumulator {
    content: String,
    reasoning: String,
    groups: BTreeMap<u32, Group>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one streamed chunk.
    pub fn push(&mut self, chunk: &StreamChunk) {
        self.content.push_str(&chunk.content);
        self.reasoning.push_str(&chunk.reasoning);
        for delta in &chunk.tool_calls {
            // An empty fragment at index 0 is what some servers send as a keep-alive.
            if delta.stream_index == 0
                && delta.name.is_empty()
                && delta.arguments.is_empty()
                && delta.id.is_empty()
            {
                continue;
            }
            let group = self.groups.entry(delta.stream_index).or_default();
            if !delta.id.is_empty() {
                group.id.clone_from(&delta.id);
            }
            if !delta.name.is_empty() {
                group.name.clone_from(&delta.name);
            }
            group.arguments.push_str(&delta.arguments);
        }
        if chunk.finish_reason.is_some() {
            self.finish_reason.clone_from(&chunk.finish_reason);
        }
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
    }

    /// The text received so far.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The whole answer, tool calls parsed.
    pub fn finish(self) -> ChatResponse {
        let truncated = self.finish_reason.as_deref() == Some("length");
        let tool_calls = self
            .groups
            .into_iter()
            .filter(|(_, g)| !g.name.is_empty())
            .map(|(index, g)| ToolCallOut {
                id: if g.id.is_empty() {
                    format!("call_{index}")
                } else {
                    g.id
                },
                name: g.name,
                arguments: parse_tool_arguments(&g.arguments, truncated),
            })
            .collect();
        ChatResponse {
            content: self.content,
            reasoning: self.reasoning,
            finish_reason: self.finish_reason,
            usage: self.usage.unwrap_or_default(),
            tool_calls,
        }
    }
}

/// Parses a tool call's argument text: empty → `{}`; invalid JSON gets unit-suffixed numbers
/// quoted (`{"wait": 20s}` → `{"wait": "20s"}`); still invalid → `{}`, or a truncation notice
/// the model can act on when the stream ended because of the token limit.
pub fn parse_tool_arguments(raw: &str, truncated: bool) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    if let Ok(v) = serde_json::from_str::<Value>(raw) {
        return v;
    }
    if let Ok(v) = serde_json::from_str::<Value>(&quote_unit_numbers(raw)) {
        return v;
    }
    if truncated {
        json!({ TRUNCATED_ARGS_KEY: TRUNCATED_ARGS_TEXT })
    } else {
        json!({})
    }
}

/// Quotes `20s`, `500ms`, `1.5m`, `2h`, `3d` where they stand as a value (after `:` or `[`/`,`
/// in an array) and are followed by `,`, `}` or `]`.
fn quote_unit_numbers(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len() + 8);
    let mut i = 0;
    let mut in_string = false;
    let mut last_sig = 0u8;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b as char);
            if b == b'\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1] as char);
                i += 2;
                continue;
            }
            if b == b'"' {
                in_string = false;
                last_sig = b'"';
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            out.push('"');
            i += 1;
            continue;
        }
        if matches!(last_sig, b':' | b'[' | b',') && (b.is_ascii_digit() || b == b'-') {
            let start = i;
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                j += 1;
            }
            let unit_len = ["ms", "s", "m", "h", "d"]
                .iter()
                .find(|u| raw[j..].starts_with(**u))
                .map_or(0, |u| u.len());
            let mut k = j + unit_len;
            while k < bytes.len() && bytes[k].is_ascii_whitespace() {
                k += 1;
            }
            if unit_len > 0 && k < bytes.len() && matches!(bytes[k], b',' | b'}' | b']') {
                out.push('"');
                out.push_str(&raw[start..j + unit_len]);
                out.push('"');
                i = j + unit_len;
                last_sig = b'"';
                continue;
            }
        }
        // Multi-byte characters outside strings are invalid JSON anyway; copy them whole.
        let ch = raw[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        if !ch.is_whitespace() {
            last_sig = b;
        }
        i += ch.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCallDelta;

    fn frag(index: u32, id: &str, name: &str, args: &str) -> StreamChunk {
        StreamChunk {
            tool_calls: vec![ToolCallDelta {
                stream_index: index,
                id: id.into(),
                name: name.into(),
                arguments: args.into(),
            }],
            ..StreamChunk::default()
        }
    }

    #[test]
    fn groups_fragments_by_index_and_drops_nameless() {
        let mut acc = Accumulator::new();
        acc.push(&StreamChunk::text("Hel"));
        acc.push(&frag(0, "c0", "get_weather", "{\"ci"));
        acc.push(&frag(1, "c1", "get_time", "{}"));
        acc.push(&frag(0, "", "", "ty\": \"Paris\"}"));
        acc.push(&frag(0, "", "", ""));
        acc.push(&frag(2, "", "", "{\"orphan\": 1}"));
        acc.push(&StreamChunk::text("lo"));
        let r = acc.finish();
        assert_eq!(r.content, "Hello");
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].name, "get_weather");
        assert_eq!(r.tool_calls[0].arguments, json!({"city": "Paris"}));
        assert_eq!(r.tool_calls[1].id, "c1");
    }

    #[test]
    fn argument_repairs() {
        assert_eq!(parse_tool_arguments("", false), json!({}));
        assert_eq!(
            parse_tool_arguments("{\"wait\": 20s}", false),
            json!({"wait": "20s"})
        );
        assert_eq!(
            parse_tool_arguments("{\"a\":500ms,\"b\":\"3d\",\"c\":[1h, 2]}", false),
            json!({"a": "500ms", "b": "3d", "c": ["1h", 2]})
        );
        assert_eq!(parse_tool_arguments("{\"x\": 1", false), json!({}));
        assert_eq!(
            parse_tool_arguments("{\"x\": \"abc", true)[TRUNCATED_ARGS_KEY],
            json!(TRUNCATED_ARGS_TEXT)
        );
        // A unit inside a string is left alone.
        assert_eq!(
            parse_tool_arguments("{\"t\": \"20s\"}", false),
            json!({"t": "20s"})
        );
    }

    #[test]
    fn last_finish_reason_and_usage_win() {
        let mut acc = Accumulator::new();
        acc.push(&StreamChunk {
            finish_reason: Some("stop".into()),
            ..StreamChunk::default()
        });
        acc.push(&StreamChunk {
            usage: Some(Usage {
                prompt: 3,
                completion: 2,
                total: 5,
            }),
            ..StreamChunk::default()
        });
        let r = acc.finish();
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
        assert_eq!(r.usage.total, 5);
    }
}
