//! Streamable HTTP: every message is a POST to the endpoint; a request is answered with one JSON
//! body or an event stream carrying its progress and then its answer. The session id the server
//! hands out on `initialize` (`Mcp-Session-Id`) goes on every later request; a GET stream, when
//! the server offers one, carries the notifications that belong to no request (list changes).

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::sync::Arc;
use std::time::Duration;

use hearth_rpc::{ErrorObject, FrameError, Message, Notification, Request};
use parking_lot::Mutex;
use ureq::Agent;

use crate::McpError;
use crate::calls::Calls;
use crate::connection::{Transport, encode};
use crate::sse::read_events;

const SESSION_HEADER: &str = "mcp-session-id";

/// The error code a request ends with when the server answers HTTP 404: the session is gone
/// (the server restarted), so the client must initialize again.
pub(crate) const SESSION_GONE: i64 = -32404;
const VERSION_HEADER: &str = "mcp-protocol-version";

#[derive(Clone)]
pub(crate) struct HttpTransport {
    inner: Arc<Inner>,
}

struct Inner {
    calls: Arc<Calls>,
    url: String,
    headers: BTreeMap<String, String>,
    agent: Agent,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    listening: Mutex<bool>,
}

impl HttpTransport {
    pub(crate) fn new(calls: &Arc<Calls>, url: &str, headers: &BTreeMap<String, String>) -> Self {
        let agent = Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .build()
            .new_agent();
        HttpTransport {
            inner: Arc::new(Inner {
                calls: Arc::clone(calls),
                url: url.to_owned(),
                headers: headers.clone(),
                agent,
                session: Mutex::new(None),
                version: Mutex::new(None),
                listening: Mutex::new(false),
            }),
        }
    }

    /// The negotiated revision goes on every later request; with it the GET stream opens.
    pub(crate) fn set_protocol_version(&self, version: &str) {
        *self.inner.version.lock() = Some(version.to_owned());
        Inner::listen(&self.inner);
    }
}

impl Inner {
    fn post(&self, body: Vec<u8>) -> Result<ureq::http::Response<ureq::Body>, String> {
        let mut req = self
            .agent
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        req = self.with_session(req);
        req.send(&body[..]).map_err(|e| e.to_string())
    }

    fn with_session<B>(&self, mut req: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        if let Some(s) = self.session.lock().as_deref() {
            req = req.header(SESSION_HEADER, s);
        }
        if let Some(v) = self.version.lock().as_deref() {
            req = req.header(VERSION_HEADER, v);
        }
        req
    }

    /// Reads a response body (JSON or events) into the calls table.
    fn take_body(self: &Arc<Self>, resp: ureq::http::Response<ureq::Body>) {
        if let Some(s) = resp
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            *self.session.lock() = Some(s.to_owned());
        }
        let events = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let reader = resp.into_body().into_reader();
        if events {
            read_events(BufReader::new(reader), |data| {
                self.deliver(Message::decode(data.as_bytes()));
                !self.calls.is_closed()
            });
        } else {
            let mut body = Vec::new();
            if let Err(e) = reader
                .take(crate::stdio::MAX_FRAME as u64)
                .read_to_end(&mut body)
            {
                self.deliver(Err(FrameError::InvalidJson {
                    reason: e.to_string(),
                }));
                return;
            }
            if !body.iter().all(u8::is_ascii_whitespace) {
                self.deliver(Message::decode(&body));
            }
        }
    }

    fn deliver(self: &Arc<Self>, frame: Result<Message, FrameError>) {
        if let Some(reply) = self.calls.deliver(frame) {
            let me = Arc::clone(self);
            std::thread::spawn(move || {
                if let Err(e) = me.post(encode(&reply)) {
                    tracing::debug!(server = %me.calls.server, "could not answer the server: {e}");
                }
            });
        }
    }

    /// Opens the GET stream once, on a thread of its own; a server without one answers 405.
    fn listen(me: &Arc<Self>) {
        {
            let mut listening = me.listening.lock();
            if *listening {
                return;
            }
            *listening = true;
        }
        let me = Arc::clone(me);
        let _ = std::thread::Builder::new()
            .name(format!("mcp-{}-get", me.calls.server))
            .spawn(move || {
                let req = me
                    .with_session(me.agent.get(&me.url))
                    .header("accept", "text/event-stream");
                match req.call() {
                    Ok(resp) if resp.status().is_success() => me.take_body(resp),
                    Ok(resp) => tracing::debug!(server = %me.calls.server,
                        status = resp.status().as_u16(), "the server offers no event stream"),
                    Err(e) => tracing::debug!(server = %me.calls.server, "no event stream: {e}"),
                }
            });
    }
}

impl Transport for HttpTransport {
    fn send_request(&self, request: Request) -> Result<(), McpError> {
        let me = Arc::clone(&self.inner);
        let body = encode(&Message::Request(request.clone()));
        let spawned = std::thread::Builder::new()
            .name(format!("mcp-{}-post", me.calls.server))
            .spawn(move || match me.post(body) {
                Ok(resp) if resp.status().is_success() => me.take_body(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let had_session = me.session.lock().is_some();
                    let text = resp
                        .into_body()
                        .read_to_string()
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect::<String>();
                    me.calls
                        .fail(request.id, http_error(status, &text, had_session));
                }
                Err(e) => me.calls.fail(request.id, http_error(0, &e, false)),
            });
        spawned.map(drop).map_err(|e| McpError::Connect {
            server: self.inner.calls.server.clone(),
            reason: format!("no request thread: {e}"),
        })
    }

    fn send_notification(&self, note: Notification) -> Result<(), McpError> {
        let method = note.method.clone();
        let failed = |reason: String| McpError::Connect {
            server: self.inner.calls.server.clone(),
            reason: format!("could not send {method}: {reason}"),
        };
        let resp = self
            .inner
            .post(encode(&Message::Notification(note)))
            .map_err(failed)?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(failed(format!("HTTP {}", resp.status().as_u16())))
        }
    }

    fn close(&self) {
        let session = self.inner.session.lock().take();
        if let Some(s) = session {
            let req = self
                .inner
                .agent
                .delete(&self.inner.url)
                .header(SESSION_HEADER, &s);
            let _ = req.call();
        }
    }
}

/// An HTTP failure as the JSON-RPC error its request ends with. The protocol answers a lost
/// session with 404; servers on older SDKs answer 400 naming the session, taken the same way.
fn http_error(status: u16, text: &str, had_session: bool) -> ErrorObject {
    let gone = status == 404
        || (status == 400 && had_session && text.to_ascii_lowercase().contains("session"));
    let (code, message) = match status {
        0 => (-32000, format!("HTTP request failed: {text}")),
        _ if gone => (
            SESSION_GONE,
            format!("HTTP {status}: the session is gone or the endpoint is wrong ({text})"),
        ),
        _ => (-32000 - i64::from(status), format!("HTTP {status}: {text}")),
    };
    ErrorObject {
        code,
        message,
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_session_is_told_apart_from_other_failures() {
        assert_eq!(http_error(404, "", true).code, SESSION_GONE);
        assert_eq!(http_error(404, "", false).code, SESSION_GONE);
        assert_eq!(
            http_error(400, "No valid session ID provided", true).code,
            SESSION_GONE
        );
        assert_ne!(
            http_error(400, "No valid session ID provided", false).code,
            SESSION_GONE
        );
        assert_ne!(http_error(400, "bad json", true).code, SESSION_GONE);
        assert_ne!(http_error(500, "session", true).code, SESSION_GONE);
        assert_eq!(http_error(0, "refused", false).code, -32000);
    }
}
