//! Decoding stream chunks into [`StreamChunk`]: the unified shape every Lua adapter produces,
//! and the OpenAI chunk shape parsed natively (for adapters without a stream transform, and as
//! the baseline the adapter cost is measured against).

use super::{StreamChunk, ToolCallDelta, Usage};
use serde_json::Value;

/// Why a stream chunk could not be decoded. Fields of the wrong type or missing are read as
/// empty, so only the chunk as a whole can be refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkError {
    /// The text is not JSON.
    #[error("{what} is not JSON: {source}")]
    Json {
        /// Which chunk: `adapter chunk` (the unified shape) or `stream chunk` (OpenAI's).
        what: &'static str,
        /// The parser's error (it names the line and column).
        #[source]
        source: serde_json::Error,
    },
    /// The adapter's chunk is JSON but not an object.
    #[error("adapter chunk is not a JSON object")]
    NotObject,
}

/// Parses a unified chunk: `{content, reasoning_content?, done, finish_reason?,
/// tool_calls?: [{stream_index, id?, name?, arguments}], usage?: {prompt, completion, total}}`.
pub fn parse_unified_chunk(text: &str) -> Result<StreamChunk, ChunkError> {
    let v: Value = serde_json::from_str(text).map_err(|source| ChunkError::Json {
        what: "adapter chunk",
        source,
    })?;
    if !v.is_object() {
        return Err(ChunkError::NotObject);
    }
    let tool_calls = v["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| ToolCallDelta {
                    stream_index: c["stream_index"]
                        .as_u64()
                        .or_else(|| c["index"].as_u64())
                        .unwrap_or(0) as u32,
                    id: str_of(&c["id"]),
                    name: str_of(&c["name"]),
                    arguments: match &c["arguments"] {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(StreamChunk {
        content: str_of(&v["content"]),
        reasoning: str_of(&v["reasoning_content"]),
        tool_calls,
        finish_reason: v["finish_reason"]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        usage: usage_of(&v["usage"]),
        done: v["done"].as_bool().unwrap_or(false),
    })
}

/// Parses an OpenAI `chat.completion.chunk` natively.
pub fn parse_openai_chunk(text: &str) -> Result<StreamChunk, ChunkError> {
    let v: Value = serde_json::from_str(text).map_err(|source| ChunkError::Json {
        what: "stream chunk",
        source,
    })?;
    let mut chunk = StreamChunk::default();
    if let Some(choice) = v["choices"].get(0) {
        let delta = &choice["delta"];
        chunk.content = str_of(&delta["content"]);
        chunk.reasoning = str_of(&delta["reasoning_content"]);
        if chunk.reasoning.is_empty() {
            chunk.reasoning = str_of(&delta["reasoning"]);
        }
        if let Some(calls) = delta["tool_calls"].as_array() {
            chunk.tool_calls = calls
                .iter()
                .map(|c| ToolCallDelta {
                    stream_index: c["index"].as_u64().unwrap_or(0) as u32,
                    id: str_of(&c["id"]),
                    name: str_of(&c["function"]["name"]),
                    arguments: str_of(&c["function"]["arguments"]),
                })
                .collect();
        }
        chunk.finish_reason = choice["finish_reason"].as_str().map(str::to_string);
        chunk.done = chunk.finish_reason.is_some();
    }
    let u = &v["usage"];
    if u.is_object() {
        chunk.usage = Some(Usage {
            prompt: u["prompt_tokens"].as_u64().unwrap_or(0),
            completion: u["completion_tokens"].as_u64().unwrap_or(0),
            total: u["total_tokens"].as_u64().unwrap_or(0),
        });
    }
    Ok(chunk)
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn usage_of(v: &Value) -> Option<Usage> {
    v.is_object().then(|| Usage {
        prompt: v["prompt"].as_u64().unwrap_or(0),
        completion: v["completion"].as_u64().unwrap_or(0),
        total: v["total"].as_u64().unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_chunk_with_tool_fragment_and_usage() {
        let c = parse_unified_chunk(
            r#"{"content":"hi","done":false,"tool_calls":[{"stream_index":1,"id":"c1","name":"f","arguments":"{\"a\""}],"usage":{"prompt":3,"completion":4,"total":7}}"#,
        )
        .expect("parses");
        assert_eq!(c.content, "hi");
        assert_eq!(c.tool_calls[0].stream_index, 1);
        assert_eq!(c.tool_calls[0].arguments, "{\"a\"");
        assert_eq!(c.usage.map(|u| u.total), Some(7));
        assert!(matches!(
            parse_unified_chunk("[1]"),
            Err(ChunkError::NotObject)
        ));
    }

    #[test]
    fn a_chunk_that_is_not_json_is_the_json_error_with_its_cause() {
        let e = parse_openai_chunk("{").expect_err("truncated");
        assert!(
            matches!(
                &e,
                ChunkError::Json {
                    what: "stream chunk",
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with("stream chunk is not JSON: "),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some());
        let e = parse_unified_chunk("not json").expect_err("not JSON");
        assert!(
            matches!(
                e,
                ChunkError::Json {
                    what: "adapter chunk",
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn openai_chunk_parses_content_tools_finish_and_usage() {
        let c = parse_openai_chunk(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":"{\"x"}}]},"finish_reason":null}]}"#,
        )
        .expect("parses");
        assert_eq!(c.tool_calls[0].name, "get");
        assert!(!c.done);
        let end = parse_openai_chunk(r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#)
            .expect("parses");
        assert!(end.done);
        assert_eq!(end.usage.map(|u| u.completion), Some(2));
    }
}
