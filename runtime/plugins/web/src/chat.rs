//! The chat routes: submit a message (`POST /api/chat`), follow its answer as server-sent
//! events (`GET /api/chat/{id}/events`, resumable with `Last-Event-ID`), the stop button
//! (`POST /api/stop`) and the history from the journal (`GET /api/history`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hearth_plugin::{InjectOptions, Priority, Value, json};
use serde::Deserialize;

use crate::app::{App, Authorized, CHANNEL, answer, refuse};
use crate::turns::Turn;

/// `POST /api/chat` body.
#[derive(Deserialize)]
pub struct ChatIn {
    text: String,
    /// Sent as an interrupt (it preempts the running answer).
    #[serde(default)]
    interrupt: bool,
    /// The interrupt's level, L1..L3.
    #[serde(default)]
    priority: Option<Priority>,
}

/// Submits `text` and starts the turn that collects its answer; a thread waits for the reply.
pub fn start_turn(
    app: &Arc<App>,
    text: &str,
    interrupt: bool,
    priority: Option<Priority>,
) -> Result<Arc<Turn>, hearth_plugin::ToolError> {
    let options = InjectOptions {
        no_memory: false,
        priority,
    };
    let submitted = app.host.submit(CHANNEL, text, interrupt, &options)?;
    // Opened right after the submit: the kernel cannot have run the input's model call yet in
    // the time one map insert takes, and any delta missed anyway is in the final reply.
    let turn = app.turns.open(&submitted.request_id, submitted.tag);
    let (app2, turn2) = (Arc::clone(app), Arc::clone(&turn));
    std::thread::Builder::new()
        .name("web-reply".into())
        .spawn(move || {
            let reply = App::wait_reply(&app2.host, &turn2.request_id)
                .unwrap_or_else(|e| json!({"done": true, "content": e.to_string(), "error": true}));
            app2.turns.finish(&turn2, submitted.tag, reply);
        })
        .map_err(|e| {
            hearth_plugin::ToolError::new(hearth_plugin::ErrorKind::Failed, e.to_string())
        })?;
    Ok(turn)
}

/// `POST /api/chat`.
pub async fn post_chat(State(app): State<Arc<App>>, _who: Authorized, body: Bytes) -> Response {
    let input: ChatIn = match serde_json::from_slice(&body) {
        Ok(i) => i,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("body: {e}")),
    };
    if input.text.trim().is_empty() {
        return refuse(StatusCode::BAD_REQUEST, "the message is empty");
    }
    let app2 = Arc::clone(&app);
    let started = tokio::task::spawn_blocking(move || {
        start_turn(&app2, &input.text, input.interrupt, input.priority)
    })
    .await;
    match started {
        Ok(Ok(turn)) => Json(json!({"request_id": turn.request_id})).into_response(),
        Ok(Err(e)) => crate::app::kernel_error(&e),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn sse_event(id: &str, event: &str, data: &Value) -> Bytes {
    Bytes::from(format!("id: {id}\nevent: {event}\ndata: {data}\n\n"))
}

/// What a turn's stream yields: its items in order, then its reply.
pub enum Raw {
    /// One item.
    Item(crate::turns::Item),
    /// The reply; nothing follows.
    Done(Value),
}

/// The items of `turn` from index `from` on, each with its index, then the reply.
fn turn_items(turn: Arc<Turn>, from: usize) -> impl futures_util::Stream<Item = (usize, Raw)> {
    let changes = turn.changes();
    let pending: std::collections::VecDeque<(usize, Raw)> = Default::default();
    futures_util::stream::unfold(
        (turn, changes, from, pending, false),
        |(turn, mut changes, mut next, mut pending, mut ended)| async move {
            loop {
                if let Some(one) = pending.pop_front() {
                    return Some((one, (turn, changes, next, pending, ended)));
                }
                if ended {
                    return None;
                }
                changes.borrow_and_update();
                let (items, done) = turn.since(next);
                if !items.is_empty() {
                    for item in items {
                        pending.push_back((next, Raw::Item(item)));
                        next += 1;
                    }
                    continue;
                }
                if let Some(reply) = done {
                    pending.push_back((next, Raw::Done(reply)));
                    ended = true;
                    continue;
                }
                // A quiet turn (a long tool call) waits; the client's own keep-alive is the
                // TCP connection.
                if changes.changed().await.is_err() {
                    return None;
                }
            }
        },
    )
}

/// The items and reply of `turn`, from the start.
pub fn turn_events_raw(turn: Arc<Turn>) -> impl futures_util::Stream<Item = Raw> {
    use futures_util::StreamExt;
    turn_items(turn, 0).map(|(_, raw)| raw)
}

/// The SSE frames of `turn` from item `from` on, then `done` with the reply.
pub fn turn_events(
    turn: Arc<Turn>,
    from: usize,
) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> {
    use futures_util::StreamExt;
    turn_items(turn, from).map(|(index, raw)| {
        Ok(match raw {
            Raw::Item(item) => sse_event(&index.to_string(), item.kind, &item.data),
            Raw::Done(reply) => sse_event("done", "done", &reply),
        })
    })
}

fn sse(body: Body) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// `GET /api/chat/{id}/events`: items after `Last-Event-ID` (all of them without it), then
/// `done`. A turn this process no longer holds (it was restarted) is answered with just
/// `done`, the reply the kernel kept.
pub async fn get_events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    _who: Authorized,
    headers: HeaderMap,
) -> Response {
    let from = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(0, |n| n + 1);
    if let Some(turn) = app.turns.get(&id) {
        return sse(Body::from_stream(turn_events(turn, from)));
    }
    let id2 = id.clone();
    match app.call(move |host| App::wait_reply(host, &id2)).await {
        Ok(reply) => sse(Body::from(sse_event("done", "done", &reply))),
        Err(r) => r,
    }
}

/// `POST /api/stop`.
pub async fn post_stop(State(app): State<Arc<App>>, _who: Authorized) -> Response {
    answer(
        app.call(|host| host.stop(CHANNEL).map(|()| json!({})))
            .await,
    )
}

/// `GET /api/history`: the channel's turns from the journal, oldest first, with the ids of
/// those still streaming here.
pub async fn get_history(State(app): State<Arc<App>>, _who: Authorized) -> Response {
    answer(
        app.call(|host| Ok(json!({"turns": host.history(CHANNEL, 100)?})))
            .await,
    )
}
