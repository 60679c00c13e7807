//! The bundled OpenAI adapter's `transform_stream_chunk`, done natively on the reading thread
//! for the chunk shapes real servers send, so a token costs no hop to the adapter's Lua thread
//! and no JSON round trip. An adapter opts in with `stream_parser = "openai"`.
//!
//! The typed parse borrows strings from the event's text and accepts only the well-typed shape
//! (`content` a string, `index` an integer, `arguments` a string, ...). Anything else — content
//! parts, arguments as an object, odd types — is [`NativeChunk::Unusual`], and the caller hands that
//! chunk to the Lua transform, which stays the reference for every shape: a test holds the two
//! equal on a corpus of chunks.

use super::{StreamChunk, ToolCallDelta, Usage};
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::borrow::Cow;
use std::marker::PhantomData;

/// What the native parse made of one event's data.
#[derive(Debug, PartialEq)]
pub enum NativeChunk {
    /// The chunk, as the Lua transform would have produced it.
    Chunk(StreamChunk),
    /// Nothing to deliver (a role-only preamble without choices or usage, blank data).
    Skip,
    /// A shape only the Lua transform knows how to read.
    Unusual,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    /// Only the first choice is read (as by the script); no list is built for it.
    #[serde(borrow, default, deserialize_with = "first_of")]
    choices: Option<Choice<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<Call<'a>>>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

/// The first element of a JSON array, the rest skipped; `null` is `None`.
fn first_of<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct First<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for First<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array or null")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let first = seq.next_element::<T>()?;
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(first)
        }
    }
    d.deserialize_any(First(PhantomData))
}

fn owned(s: Option<Cow<'_, str>>) -> String {
    s.map(Cow::into_owned).unwrap_or_default()
}

fn nonempty(s: Option<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    s.filter(|s| !s.is_empty())
}

/// One SSE event's data, read the way the bundled `openai.lua`'s `transform_stream_chunk` reads
/// it; [`NativeChunk::Unusual`] leaves the chunk to the script.
pub fn parse_openai_stream_chunk(data: &str) -> NativeChunk {
    let data = data.trim();
    if data.is_empty() {
        return NativeChunk::Skip;
    }
    let Ok(chunk) = serde_json::from_str::<Chunk<'_>>(data) else {
        return NativeChunk::Unusual;
    };
    if chunk.error.is_some() {
        // The Lua transform logs the error's text; it is rare, let the script do it.
        return NativeChunk::Unusual;
    }
    let usage = chunk.usage.map(|u| {
        let (prompt, completion) = (
            u.prompt_tokens.unwrap_or(0),
            u.completion_tokens.unwrap_or(0),
        );
        Usage {
            prompt,
            completion,
            total: u.total_tokens.unwrap_or(prompt + completion),
        }
    });
    let Some(choice) = chunk.choices else {
        return match usage {
            Some(usage) => NativeChunk::Chunk(StreamChunk {
                usage: Some(usage),
                ..StreamChunk::default()
            }),
            None => NativeChunk::Skip,
        };
    };
    let mut out = StreamChunk {
        usage,
        ..StreamChunk::default()
    };
    if let Some(delta) = choice.delta {
        out.content = owned(delta.content);
        out.reasoning = owned(nonempty(delta.reasoning_content).or(nonempty(delta.reasoning)));
        out.tool_calls = delta
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, call)| {
                let function = call.function;
                let (name, arguments) = match function {
                    Some(f) => (f.name, f.arguments),
                    None => (None, None),
                };
                ToolCallDelta {
                    stream_index: call.index.unwrap_or(i as u32),
                    id: owned(call.id),
                    name: owned(name),
                    arguments: owned(arguments),
                }
            })
            .collect();
    }
    // An empty finish reason still ends the answer, as in the script (`""` is truthy in Lua);
    // the unified decoding then drops the empty text.
    if let Some(finish) = choice.finish_reason {
        out.done = true;
        out.finish_reason = nonempty(Some(finish)).map(Cow::into_owned);
    }
    NativeChunk::Chunk(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::{Adapter, bundled};
    use crate::provider::parse_unified_chunk;

    /// What the Lua transform makes of `data`: `None` = skipped.
    fn through_lua(adapter: &Adapter, data: &str) -> Option<StreamChunk> {
        let out = adapter.transform_stream_chunk(data).expect("transforms");
        (!out.is_empty()).then(|| parse_unified_chunk(&out).expect("unified"))
    }

    const CORPUS: &[&str] = &[
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":" hello \"quoted\" \u00e9\n"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"alt"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get","arguments":""}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"city\": \"Par"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a"}},{"id":"","function":{"name":"b","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":""}]}"#,
        r#"{"choices":[{"index":0,"finish_reason":"length"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}"#,
        r#"{"choices":[{"delta":{"content":"x"},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":9}}"#,
        r#"{"choices":[]}"#,
        r#"{"object":"ping"}"#,
        "  ",
        r#"{"choices":null,"usage":null,"error":null}"#,
        r#"{"choices":[{"delta":{"content":"first"}},"only the first choice is read"]}"#,
        // Shapes left to the script.
        r#"{"choices":[{"delta":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":{"x":1}}}]}}]}"#,
        r#"{"error":{"message":"overloaded"}}"#,
        r#"{"choices":[{"index":0,"delta":{"content":5}}]}"#,
        "not json",
        "[1, 2]",
    ];

    #[test]
    fn the_native_parse_equals_the_lua_transform_on_every_shape_it_takes() {
        let adapter = Adapter::load("openai.lua", bundled::source("openai").expect("bundled"))
            .expect("loads");
        let mut native = 0;
        for data in CORPUS {
            let want = through_lua(&adapter, data);
            match parse_openai_stream_chunk(data) {
                NativeChunk::Chunk(chunk) => {
                    native += 1;
                    assert_eq!(Some(chunk), want, "{data}");
                }
                NativeChunk::Skip => assert_eq!(want, None, "{data}"),
                NativeChunk::Unusual => {}
            }
        }
        assert!(native >= 13, "only {native} chunks took the native path");
        for unusual in &CORPUS[17..] {
            assert_eq!(
                parse_openai_stream_chunk(unusual),
                NativeChunk::Unusual,
                "{unusual}"
            );
        }
    }
}
