//! JSON-RPC 2.0 messages and their one-line wire form.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::FrameError;
use crate::error_code::ErrorObject;

use crate::id::Id;

/// A call that expects exactly one response with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Correlates the response.
    pub id: Id,
    /// The method name, e.g. `tool.invoke`.
    pub method: String,
    /// The arguments; `Value::Null` when the frame had none.
    pub params: Value,
}

/// A one-way message; never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `$/cancel`.
    pub method: String,
    /// The arguments; `Value::Null` when the frame had none.
    pub params: Value,
}

/// The answer to a request. `id` is `None` only for an error about a frame whose id could not be
/// read (a parse error, an oversize frame).
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The request this answers.
    pub id: Option<Id>,
    /// The result or the error.
    pub outcome: Result<Value, ErrorObject>,
}

/// One frame's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// See [`Request`].
    Request(Request),
    /// See [`Notification`].
    Notification(Notification),
    /// See [`Response`].
    Response(Response),
}

/// The fields a frame may carry; which are present decides the message type.
#[derive(Deserialize)]
struct WireIn {
    #[serde(default)]
    jsonrpc: Option<String>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default)]
    error: Option<ErrorObject>,
}

/// `"result": null` is a successful response with a null result, so presence must survive.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

#[derive(Serialize)]
struct WireOut<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Option<Id>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorObject>,
}

impl Message {
    /// Decodes one frame (without its newline).
    ///
    /// A frame that is JSON but not a message returns [`FrameError::InvalidMessage`] carrying the
    /// request id when one could be read, so the answer can name it.
    pub fn decode(frame: &[u8]) -> Result<Message, FrameError> {
        let text = std::str::from_utf8(frame).map_err(|e| FrameError::InvalidUtf8 {
            at: e.valid_up_to(),
        })?;
        let wire: WireIn = serde_json::from_str(text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => FrameError::InvalidMessage {
                id: None,
                reason: e.to_string(),
            },
            _ => FrameError::InvalidJson {
                reason: e.to_string(),
            },
        })?;
        classify(wire)
    }

    /// Appends the one-line wire form (no newline) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        let wire = match self {
            Message::Request(r) => WireOut {
                jsonrpc: "2.0",
                id: Some(Some(r.id)),
                method: Some(&r.method),
                params: (!r.params.is_null()).then_some(&r.params),
                result: None,
                error: None,
            },
            Message::Notification(n) => WireOut {
                jsonrpc: "2.0",
                id: None,
                method: Some(&n.method),
                params: (!n.params.is_null()).then_some(&n.params),
                result: None,
                error: None,
            },
            Message::Response(r) => WireOut {
                jsonrpc: "2.0",
                id: Some(r.id),
                method: None,
                params: None,
                result: r.outcome.as_ref().ok(),
                error: r.outcome.as_ref().err(),
            },
        };
        serde_json::to_writer(out, &wire)
    }
}

fn classify(wire: WireIn) -> Result<Message, FrameError> {
    let id = match &wire.id {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(id) => Some(id),
            None => {
                return Err(invalid(None, "id must be an unsigned integer"));
            }
        },
    };
    if let Some(version) = &wire.jsonrpc
        && version != "2.0"
    {
        return Err(invalid(id, "jsonrpc must be \"2.0\""));
    }
    if let Some(method) = wire.method {
        if method.is_empty() {
            return Err(invalid(id, "method must not be empty"));
        }
        if wire.result.is_some() || wire.error.is_some() {
            return Err(invalid(id, "a request carries no result or error"));
        }
        let params = wire.params.unwrap_or(Value::Null);
        return Ok(match (wire.id, id) {
            (None, _) => Message::Notification(Notification { method, params }),
            (Some(_), Some(id)) => Message::Request(Request { id, method, params }),
            (Some(_), None) => return Err(invalid(None, "a request id must not be null")),
        });
    }
    let outcome = match (wire.result, wire.error) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(error),
        _ => {
            return Err(invalid(
                id,
                "a frame needs a method, or exactly one of result and error",
            ));
        }
    };
    if id.is_none() && outcome.is_ok() {
        return Err(invalid(None, "a result needs an id"));
    }
    Ok(Message::Response(Response { id, outcome }))
}

fn invalid(id: Option<Id>, reason: &str) -> FrameError {
    FrameError::InvalidMessage {
        id,
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip(m: &Message) -> String {
        let mut out = Vec::new();
        m.encode_into(&mut out).expect("encodes");
        let back = Message::decode(&out).expect("decodes");
        assert_eq!(&back, m);
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn the_three_kinds_round_trip() {
        let req = Message::Request(Request {
            id: 7,
            method: "tool.invoke".into(),
            params: json!({"name": "echo"}),
        });
        assert_eq!(
            round_trip(&req),
            r#"{"jsonrpc":"2.0","id":7,"method":"tool.invoke","params":{"name":"echo"}}"#
        );
        let note = Message::Notification(Notification {
            method: "$/cancel".into(),
            params: json!({"id": 7}),
        });
        assert_eq!(
            round_trip(&note),
            r#"{"jsonrpc":"2.0","method":"$/cancel","params":{"id":7}}"#
        );
        let ok_null = Message::Response(Response {
            id: Some(7),
            outcome: Ok(Value::Null),
        });
        assert_eq!(
            round_trip(&ok_null),
            r#"{"jsonrpc":"2.0","id":7,"result":null}"#
        );
        let err = Message::Response(Response {
            id: None,
            outcome: Err(ErrorObject {
                code: -32700,
                message: "bad".into(),
                data: None,
            }),
        });
        assert_eq!(
            round_trip(&err),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#
        );
    }

    #[test]
    fn bad_frames_are_told_apart() {
        assert!(matches!(
            Message::decode(b"\xff\xfe"),
            Err(FrameError::InvalidUtf8 { at: 0 })
        ));
        assert!(matches!(
            Message::decode(b"{\"id\":1,"),
            Err(FrameError::InvalidJson { .. })
        ));
        assert!(matches!(
            Message::decode(b"[1,2]"),
            Err(FrameError::InvalidMessage { id: None, .. })
        ));
        for (frame, id) in [
            (&br#"{"id":3}"#[..], Some(3)),
            (br#"{"id":3,"method":""}"#, Some(3)),
            (
                br#"{"id":3,"result":1,"error":{"code":1,"message":""}}"#,
                Some(3),
            ),
            (br#"{"jsonrpc":"1.0","id":4,"method":"a"}"#, Some(4)),
            (br#"{"id":"x","method":"a"}"#, None),
            (br#"{"id":-1,"method":"a"}"#, None),
            (br#"{"id":null,"method":"a"}"#, None),
            (br#"{"result":1}"#, None),
        ] {
            match Message::decode(frame) {
                Err(FrameError::InvalidMessage { id: got, .. }) => assert_eq!(got, id),
                other => panic!("{} decoded as {other:?}", String::from_utf8_lossy(frame)),
            }
        }
    }

    #[test]
    fn jsonrpc_field_is_optional_on_input() {
        assert_eq!(
            Message::decode(br#"{"id":1,"method":"m"}"#).expect("decodes"),
            Message::Request(Request {
                id: 1,
                method: "m".into(),
                params: Value::Null
            })
        );
    }
}
