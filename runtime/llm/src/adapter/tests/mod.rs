//! Adapter tests: the sandbox and the VM handle, the JSON rules, and each bundled adapter
//! against recorded answers of its API (`runtime/tests/fixtures/adapters/<name>/`).

mod anthropic;
mod bundled;
mod gemini;
mod handle;
mod json;
mod ollama;
mod openai;
mod sandbox;

use super::{Adapter, AdapterLimits};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The shared watchdog, with the limit in seconds as these tests write it.
pub(super) fn watchdog<T: Send + 'static>(
    secs: u64,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    hearth_testkit::within(Duration::from_secs(secs), body)
}

pub(super) fn fixture(path: &str) -> String {
    let full = format!(
        "{}/tests/fixtures/adapters/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("fixture {full}: {e}"))
}

pub(super) fn bundled(name: &str) -> Adapter {
    let src = super::bundled::source(name).expect("bundled adapter exists");
    Adapter::load(&format!("{name}.lua"), src).expect("bundled adapter loads")
}

/// Small, fast limits for tests that provoke a budget on purpose.
pub(super) fn tight_limits() -> AdapterLimits {
    AdapterLimits {
        memory_bytes: 8 << 20,
        instructions: 5_000_000,
        wall: Duration::from_millis(300),
        grace: Duration::from_millis(500),
    }
}

pub(super) fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The payloads of the `data:` lines of an SSE body.
pub(super) fn sse_data(body: &str) -> Vec<String> {
    body.lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d).to_string())
        .collect()
}

pub(super) fn ndjson_lines(body: &str) -> Vec<String> {
    body.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[derive(Debug, Default, PartialEq, Clone)]
pub(super) struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A stream folded the way the provider layer folds it.
#[derive(Debug, Default)]
pub(super) struct Folded {
    pub content: String,
    pub reasoning: String,
    pub calls: BTreeMap<u64, Call>,
    pub finish_reason: Option<String>,
    pub usage: Option<Value>,
    pub done: bool,
    pub chunks: usize,
    pub skipped: usize,
}

impl Folded {
    pub fn call_args(&self, index: u64) -> Value {
        parse(&self.calls[&index].arguments)
    }
}

/// Feeds every line through `transform_stream_chunk`, checks each chunk's shape and folds them.
pub(super) fn fold_stream(adapter: &Adapter, lines: &[String]) -> Folded {
    let mut f = Folded::default();
    for line in lines {
        let out = adapter
            .transform_stream_chunk(line)
            .unwrap_or_else(|e| panic!("chunk {line}: {e}"));
        if out.is_empty() {
            f.skipped += 1;
            continue;
        }
        let v = parse(&out);
        assert_chunk_shape(&v);
        f.chunks += 1;
        f.content.push_str(v["content"].as_str().expect("content"));
        if let Some(r) = v.get("reasoning_content").and_then(Value::as_str) {
            f.reasoning.push_str(r);
        }
        for tc in v
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let call = f
                .calls
                .entry(tc["stream_index"].as_u64().expect("index"))
                .or_default();
            if let Some(id) = tc.get("id").and_then(Value::as_str) {
                call.id = id.to_string();
            }
            if let Some(name) = tc.get("name").and_then(Value::as_str) {
                call.name = name.to_string();
            }
            call.arguments
                .push_str(tc["arguments"].as_str().expect("arguments"));
        }
        if let Some(r) = v.get("finish_reason").and_then(Value::as_str) {
            f.finish_reason = Some(r.to_string());
        }
        if let Some(u) = v.get("usage") {
            f.usage = Some(u.clone());
        }
        f.done |= v["done"].as_bool().expect("done");
    }
    f
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn assert_usage_shape(u: &Value) {
    assert_eq!(
        keys(u),
        ["completion", "prompt", "total"],
        "usage keys: {u}"
    );
    for k in ["prompt", "completion", "total"] {
        assert!(u[k].is_u64(), "usage.{k} is a count: {u}");
    }
}

/// Unified stream chunk: `{content, reasoning_content?, done, finish_reason?, tool_calls?, usage?}`.
pub(super) fn assert_chunk_shape(v: &Value) {
    const ALLOWED: [&str; 6] = [
        "content",
        "done",
        "finish_reason",
        "reasoning_content",
        "tool_calls",
        "usage",
    ];
    for k in keys(v) {
        assert!(ALLOWED.contains(&k), "unexpected chunk key {k}: {v}");
    }
    assert!(v["content"].is_string(), "content is a string: {v}");
    assert!(v["done"].is_boolean(), "done is a boolean: {v}");
    if let Some(r) = v.get("reasoning_content") {
        assert!(r.is_string(), "{v}");
    }
    if let Some(r) = v.get("finish_reason") {
        assert!(r.is_string(), "{v}");
    }
    if let Some(u) = v.get("usage") {
        assert_usage_shape(u);
    }
    if let Some(calls) = v.get("tool_calls") {
        let calls = calls.as_array().expect("tool_calls is an array");
        assert!(!calls.is_empty(), "tool_calls present but empty: {v}");
        for c in calls {
            for k in keys(c) {
                assert!(
                    ["arguments", "id", "name", "stream_index"].contains(&k),
                    "tool call key {k}: {v}"
                );
            }
            assert!(c["stream_index"].is_u64(), "{v}");
            assert!(c["arguments"].is_string(), "{v}");
            for k in ["id", "name"] {
                if let Some(s) = c.get(k) {
                    assert!(
                        s.as_str().is_some_and(|s| !s.is_empty()),
                        "{k} is a non-empty string: {v}"
                    );
                }
            }
        }
    }
}

/// Unified response: `{content, reasoning_content?, finish_reason?, token_usage, tool_calls}`.
pub(super) fn assert_response_shape(v: &Value) {
    const ALLOWED: [&str; 5] = [
        "content",
        "finish_reason",
        "reasoning_content",
        "token_usage",
        "tool_calls",
    ];
    for k in keys(v) {
        assert!(ALLOWED.contains(&k), "unexpected response key {k}: {v}");
    }
    assert!(v["content"].is_string(), "{v}");
    assert_usage_shape(&v["token_usage"]);
    for c in v["tool_calls"]
        .as_array()
        .expect("tool_calls is always an array")
    {
        for k in keys(c) {
            assert!(
                [
                    "arguments",
                    "id",
                    "name",
                    "raw_arguments",
                    "stream_index",
                    "type"
                ]
                .contains(&k),
                "tool call key {k}: {v}"
            );
        }
        assert!(c["id"].as_str().is_some_and(|s| !s.is_empty()), "{v}");
        assert_eq!(c["type"], "function");
        assert!(c["name"].is_string(), "{v}");
        assert!(
            c["arguments"].is_object(),
            "arguments is a decoded object: {v}"
        );
        if let Some(raw) = c.get("raw_arguments") {
            let raw = raw.as_str().expect("raw_arguments is text");
            // Text that is a JSON object decodes to `arguments`; anything else gave `{}`.
            match serde_json::from_str::<Value>(raw) {
                Ok(decoded @ Value::Object(_)) => assert_eq!(decoded, c["arguments"], "{v}"),
                _ => assert_eq!(c["arguments"], serde_json::json!({}), "{v}"),
            }
        }
    }
}
