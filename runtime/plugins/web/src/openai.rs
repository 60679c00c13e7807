//! The OpenAI-compatible API: `GET /v1/models` and `POST /v1/chat/completions` (streamed or
//! not). Each completion is one Hearth input on channel `http`: the last user message is the
//! input (the agent keeps its own memory and history, so earlier messages are not resent to
//! it). Errors have OpenAI's shape, `{"error": {message, type, param, code}}`.

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use hearth_plugin::{Value, json};

use crate::app::{App, bearer, now_secs};
use crate::chat::start_turn;

/// The one model name this server offers.
pub const MODEL: &str = "hearth";

/// An OpenAI-shaped error.
pub fn oai_error(status: StatusCode, kind: &str, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": kind, "param": null, "code": code}})),
    )
        .into_response()
}

fn check_key(app: &App, headers: &HeaderMap) -> Result<(), Response> {
    match bearer(headers) {
        Some(key) if app.key_ok(key) => Ok(()),
        Some(_) => Err(oai_error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key provided.",
        )),
        None => Err(oai_error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "missing_api_key",
            "No API key provided: send Authorization: Bearer <plugin.web.api_key>.",
        )),
    }
}

/// `GET /v1/models`.
pub async fn models(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    if let Err(r) = check_key(&app, &headers) {
        return r;
    }
    Json(json!({"object": "list", "data": [
        {"id": MODEL, "object": "model", "created": 0, "owned_by": "hearth"}
    ]}))
    .into_response()
}

fn bad_request(message: &str) -> Response {
    oai_error(
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        "invalid_request",
        message,
    )
}

/// The text of the last user message.
fn last_user_text(body: &Value) -> Result<String, Response> {
    let Some(messages) = body["messages"].as_array() else {
        return Err(bad_request("messages must be a list"));
    };
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .ok_or_else(|| bad_request("messages has no user message"))?;
    let text = match &last["content"] {
        Value::String(s) => s.clone(),
        // The content-parts form: the text parts, joined.
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return Err(bad_request("a message's content must be a string or parts")),
    };
    if text.trim().is_empty() {
        return Err(bad_request("the last user message is empty"));
    }
    Ok(text)
}

fn chunk(id: &str, created: u64, delta: Value, finish: Option<&str>) -> Bytes {
    let body = json!({"id": id, "object": "chat.completion.chunk", "created": created,
        "model": MODEL, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    Bytes::from(format!("data: {body}\n\n"))
}

fn reply_failed(reply: &Value) -> Option<Response> {
    if reply["error"] == true || reply["skipped"] == true {
        let message = format!(
            "the agent did not answer: {}",
            reply["reason"]
                .as_str()
                .or(reply["content"].as_str())
                .unwrap_or("failed")
        );
        return Some(oai_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "agent_failed",
            &message,
        ));
    }
    None
}

/// `POST /v1/chat/completions`.
pub async fn completions(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(r) = check_key(&app, &headers) {
        return r;
    }
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return bad_request(&format!("the body is not JSON: {e}")),
    };
    let text = match last_user_text(&body) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let stream = body["stream"] == true;
    let app2 = Arc::clone(&app);
    let turn =
        match tokio::task::spawn_blocking(move || start_turn(&app2, &text, false, None)).await {
            Ok(Ok(turn)) => turn,
            Ok(Err(e)) => {
                return oai_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "server_error",
                    "kernel_unavailable",
                    &e.to_string(),
                );
            }
            Err(e) => {
                return oai_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "internal",
                    &e.to_string(),
                );
            }
        };
    let id = format!("chatcmpl-{}", turn.request_id);
    let created = now_secs();
    if !stream {
        let mut changes = turn.changes();
        let reply = loop {
            if let (_, Some(reply)) = turn.since(usize::MAX) {
                break reply;
            }
            if changes.changed().await.is_err() {
                return oai_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "server_error",
                    "internal",
                    "the turn ended without a reply",
                );
            }
        };
        if let Some(r) = reply_failed(&reply) {
            return r;
        }
        let content = reply["content"].as_str().unwrap_or_default();
        return Json(json!({
            "id": id, "object": "chat.completion", "created": created, "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }))
        .into_response();
    }
    let first = futures_util::stream::once({
        let (id, created) = (id.clone(), created);
        async move {
            Ok::<_, std::convert::Infallible>(chunk(
                &id,
                created,
                json!({"role": "assistant", "content": ""}),
                None,
            ))
        }
    });
    let (id2, id3) = (id.clone(), id);
    let mut streamed = String::new();
    let items = crate::chat::turn_events_raw(turn).map(move |event| {
        let bytes = match event {
            crate::chat::Raw::Item(item) if item.kind == "delta" => {
                let content = item.data["content"].as_str().unwrap_or_default().to_owned();
                streamed.push_str(&content);
                chunk(&id2, created, json!({"content": content}), None)
            }
            crate::chat::Raw::Item(_) => Bytes::new(),
            crate::chat::Raw::Done(reply) => {
                // The reply is the whole answer: what the stream missed (a lag) is sent now.
                let full = reply["content"].as_str().unwrap_or_default();
                let mut out = Vec::new();
                if let Some(rest) = full
                    .strip_prefix(streamed.as_str())
                    .filter(|r| !r.is_empty())
                {
                    out.extend_from_slice(&chunk(&id2, created, json!({"content": rest}), None));
                }
                let reason = if reply["error"] == true || reply["skipped"] == true {
                    "error"
                } else {
                    "stop"
                };
                out.extend_from_slice(&chunk(&id2, created, json!({}), Some(reason)));
                out.extend_from_slice(b"data: [DONE]\n\n");
                Bytes::from(out)
            }
        };
        Ok::<_, std::convert::Infallible>(bytes)
    });
    let _ = id3;
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(first.chain(items)),
    )
        .into_response()
}
