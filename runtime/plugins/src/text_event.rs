//! `textmemory.append`: an event a plugin saw, kept in long-term memory.
//!
//! The original kept a raw conversation log beside its other memories; Hearth's journal and
//! cold context already hold every turn, so what a plugin appends goes to cold context as an
//! entry of its own: a message in a family group chat the agent was not asked about, a line of
//! a device's log. It is recalled, distilled and forgotten like a turn, under its own time and
//! speaker, and never enters the conversation the model is in. The params are checked here,
//! on the plugin's thread, so the store's owner only ever sees a well-formed event.

use hearth_rpc::HandlerError;
use serde_json::Value;

/// The longest `input` or `response` kept, in bytes: a message or a log line, not a document
/// (a document belongs in the knowledge base or `doc.insert`).
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// The longest speaker name, in characters.
pub const MAX_SOURCE_CHARS: usize = 64;

/// How far ahead of the daemon's clock an event's time may be: two clocks a little apart are
/// fine, an event from next week is a mistake.
pub const FUTURE_SKEW_MS: i64 = 60_000;

/// The name the agent's own turns carry in memory (`hearth_memory::AGENT_SOURCE`, which this
/// crate does not depend on; the daemon's tests hold the two equal): a plugin may not speak
/// as the agent.
pub const AGENT_SOURCE: &str = "agent";

/// A checked `textmemory.append` event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEvent {
    /// Who said it, or where it came from (the plugin's name when the event names nobody).
    pub source: String,
    /// What was said.
    pub input: String,
    /// The answer to it, if the plugin saw one (kept with it; the input is what is searched).
    pub response: String,
    /// When it happened, in Unix milliseconds (`None`: now).
    pub timestamp_ms: Option<i64>,
}

/// The event in `params` (`{event: {input, response?, source?, timestamp_ms? | timestamp?}}`)
/// from `plugin`, checked against the daemon's clock `now_ms`; an `id` or tool fields the
/// original's events carry are ignored (the store gives the id).
pub fn text_event(
    method: &str,
    plugin: &str,
    params: &Value,
    now_ms: i64,
) -> Result<TextEvent, HandlerError> {
    let bad = |why: String| HandlerError::invalid_arguments(format!("{method}: {why}"));
    let event = params
        .get("event")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("event must be an object with an input".into()))?;
    let text = |name: &str| -> Result<String, HandlerError> {
        match event.get(name) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) if s.len() > MAX_TEXT_BYTES => Err(bad(format!(
                "event.{name} is {} bytes, over the {MAX_TEXT_BYTES} kept",
                s.len()
            ))),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(bad(format!(
                "event.{name} must be a string, not {}",
                kind_of(other)
            ))),
        }
    };
    let input = text("input")?;
    let response = text("response")?;
    // Memory searches an event other than the agent's by what was said, so that is required.
    if input.trim().is_empty() {
        return Err(bad("event.input (what was said) must not be blank".into()));
    }
    // A plugin's own name is checked too: a plugin named "agent" may not speak as the agent.
    let source = match event.get("source") {
        None | Some(Value::Null) => source_name(plugin).map_err(bad)?,
        Some(Value::String(s)) => source_name(s).map_err(bad)?,
        Some(other) => {
            return Err(bad(format!(
                "event.source must be a string, not {}",
                kind_of(other)
            )));
        }
    };
    let timestamp_ms = match event.get("timestamp_ms").or_else(|| event.get("timestamp")) {
        None | Some(Value::Null) => None,
        Some(t) => Some(
            t.as_i64()
                .filter(|t| (0..=now_ms + FUTURE_SKEW_MS).contains(t))
                .ok_or_else(|| {
                    let got = match t {
                        Value::Number(n) => n.to_string(),
                        other => kind_of(other).to_owned(),
                    };
                    bad(format!(
                        "event.timestamp_ms must be Unix milliseconds, not after now ({now_ms}); got {got}"
                    ))
                })?,
        ),
    };
    Ok(TextEvent {
        source,
        input,
        response,
        timestamp_ms,
    })
}

/// What kind of JSON value `v` is, for an error that must not echo a large value back.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A speaker name as memory keeps it: trimmed, not blank, short, no control characters, not
/// the agent's.
fn source_name(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    if name.is_empty() {
        return Err("event.source must not be blank".into());
    }
    if name.chars().count() > MAX_SOURCE_CHARS {
        return Err(format!(
            "event.source is longer than {MAX_SOURCE_CHARS} characters"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("event.source must not hold control characters".into());
    }
    if name.eq_ignore_ascii_case(AGENT_SOURCE) {
        return Err(format!(
            "event.source {name:?} names the agent's own turns; a plugin speaks for others"
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000_000;

    fn parse(params: Value) -> Result<TextEvent, String> {
        text_event("textmemory.append", "chat-bridge", &params, NOW).map_err(|e| e.to_string())
    }

    #[test]
    fn an_event_is_kept_with_its_speaker_and_time() {
        let event = parse(json!({"event": {
            "source": "  Ana ", "input": "The boiler was serviced on Tuesday.",
            "timestamp_ms": NOW - 1_000, "id": "ignored", "tools_used": ["x"]
        }}))
        .unwrap();
        assert_eq!(
            event,
            TextEvent {
                source: "Ana".into(),
                input: "The boiler was serviced on Tuesday.".into(),
                response: String::new(),
                timestamp_ms: Some(NOW - 1_000),
            }
        );
        // The original's `timestamp` is read too; no source is the plugin speaking.
        let event =
            parse(json!({"event": {"input": "hi", "response": "ok", "timestamp": 5}})).unwrap();
        assert_eq!(event.source, "chat-bridge");
        assert_eq!(event.timestamp_ms, Some(5));
        assert_eq!(
            parse(json!({"event": {"input": "x"}}))
                .unwrap()
                .timestamp_ms,
            None
        );
    }

    #[test]
    fn a_malformed_event_is_refused_with_its_reason() {
        let refused = [
            (json!({}), "must be an object"),
            (json!({"event": "hello"}), "must be an object"),
            (
                json!({"event": {"input": "  ", "response": "ok"}}),
                "must not be blank",
            ),
            (json!({"event": {"response": "ok"}}), "must not be blank"),
            (
                json!({"event": {"input": 3}}),
                "event.input must be a string",
            ),
            (
                json!({"event": {"input": "x".repeat(MAX_TEXT_BYTES + 1)}}),
                "over the 65536 kept",
            ),
            (json!({"event": {"input": "x", "source": ""}}), "blank"),
            (
                json!({"event": {"input": "x", "source": "Agent"}}),
                "agent's own",
            ),
            (
                json!({"event": {"input": "x", "source": "a\nb"}}),
                "control",
            ),
            (
                json!({"event": {"input": "x", "source": "n".repeat(65)}}),
                "longer than 64",
            ),
            (
                json!({"event": {"input": "x", "source": 7}}),
                "must be a string",
            ),
            (
                json!({"event": {"input": "x", "timestamp_ms": NOW + FUTURE_SKEW_MS + 1}}),
                "not after now",
            ),
            (
                json!({"event": {"input": "x", "timestamp_ms": -1}}),
                "Unix milliseconds",
            ),
            (
                json!({"event": {"input": "x", "timestamp": "2026-01-01"}}),
                "Unix milliseconds",
            ),
        ];
        for (params, why) in refused {
            let err = parse(params.clone()).expect_err(&params.to_string());
            assert!(
                err.contains(why) && err.contains("textmemory.append"),
                "{params}: {err}"
            );
        }
        let err = text_event(
            "textmemory.append",
            "agent",
            &json!({"event": {"input": "x"}}),
            NOW,
        )
        .expect_err("a plugin named agent");
        assert!(err.to_string().contains("agent's own"), "{err}");
        let err = parse(json!({"event": {"input": ["a", "b"]}})).expect_err("an array");
        assert!(err.ends_with("not an array"), "{err}");
        // A clock a little ahead is fine.
        assert!(parse(json!({"event": {"input": "x", "timestamp_ms": NOW + 1_000}})).is_ok());
    }
}
