//! The JSON envelope every bus event travels in: `{type, source, payload, timestamp}`.
//!
//! Encoding allocates (or reuses the caller's buffer); it happens on the publishing thread
//! before [`Publisher::publish`](crate::Publisher::publish), which itself never allocates.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{EventKind, IpcError};

/// One decoded bus event. `timestamp` is in unix seconds; `source` is the agent id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// The event type (`"type"` on the wire).
    #[serde(rename = "type")]
    pub kind: EventKind,
    /// The agent id that emitted it.
    pub source: String,
    /// The event's own fields.
    pub payload: Value,
    /// Unix seconds.
    pub timestamp: i64,
}

#[derive(Serialize)]
struct EnvelopeRef<'a> {
    #[serde(rename = "type")]
    kind: EventKind,
    source: &'a str,
    payload: &'a Value,
    timestamp: i64,
}

/// Encode an envelope into a fresh buffer.
pub fn encode_envelope(kind: EventKind, source: &str, payload: &Value, timestamp: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    encode_envelope_into(&mut out, kind, source, payload, timestamp);
    out
}

/// Encode an envelope into `out` (cleared first), so a hot publisher can reuse one buffer.
pub fn encode_envelope_into(
    out: &mut Vec<u8>,
    kind: EventKind,
    source: &str,
    payload: &Value,
    timestamp: i64,
) {
    out.clear();
    let envelope = EnvelopeRef {
        kind,
        source,
        payload,
        timestamp,
    };
    serde_json::to_writer(out, &envelope)
        .expect("a JSON value (string keys only) always serialises into a Vec");
}

/// Decode an envelope read from the ring or the bus.
pub fn decode_envelope(bytes: &[u8]) -> Result<Envelope, IpcError> {
    Ok(serde_json::from_slice(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_has_the_spec_field_names_and_round_trips() {
        let payload = json!({"content": "你好", "channel": "cli"});
        let bytes = encode_envelope(EventKind::ContentDelta, "agent-1", &payload, 1_700_000_000);
        let raw: Value = serde_json::from_slice(&bytes).expect("valid json");
        assert_eq!(raw["type"], "content_delta");
        assert_eq!(raw["source"], "agent-1");
        assert_eq!(raw["payload"]["content"], "你好");
        assert_eq!(raw["timestamp"], 1_700_000_000);
        let back = decode_envelope(&bytes).expect("decode");
        assert_eq!(
            back,
            Envelope {
                kind: EventKind::ContentDelta,
                source: "agent-1".into(),
                payload,
                timestamp: 1_700_000_000,
            }
        );
    }

    #[test]
    fn encode_into_reuses_and_clears_the_buffer() {
        let mut buf = b"stale bytes".to_vec();
        encode_envelope_into(&mut buf, EventKind::System, "a", &json!({"event": "x"}), 5);
        assert!(buf.starts_with(b"{\"type\":\"system\""));
        assert!(decode_envelope(&buf).is_ok());
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(matches!(
            decode_envelope(b"{\"type\":"),
            Err(IpcError::Envelope(_))
        ));
    }
}
