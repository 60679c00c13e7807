//! One live connection to a server: requests with their wait, notifications, and how the
//! frames travel ([`Transport`]: a child's pipes or HTTP).

use std::sync::Arc;

use hearth_rpc::{Message, Notification, Request};
use serde_json::{Value, json};

use crate::McpError;
use crate::calls::{Calls, Ended, Watch};
use crate::protocol::methods;

/// How frames reach the server. The answers come back through the connection's [`Calls`].
pub(crate) trait Transport: Send + Sync {
    /// Sends request `id`; its answer is delivered to the calls table, or the id failed.
    fn send_request(&self, request: Request) -> Result<(), McpError>;
    /// Sends a notification.
    fn send_notification(&self, note: Notification) -> Result<(), McpError>;
    /// Ends the connection (the process's pipes, the HTTP session).
    fn close(&self);
}

/// A connection: its calls and its transport.
pub struct Connection {
    pub(crate) calls: Arc<Calls>,
    transport: Box<dyn Transport>,
}

impl Connection {
    pub(crate) fn new(calls: Arc<Calls>, transport: Box<dyn Transport>) -> Connection {
        Connection { calls, transport }
    }

    /// The server's configured name.
    pub fn server(&self) -> &str {
        &self.calls.server
    }

    /// Sends `method` and waits under `watch`. A stopped or timed-out request is withdrawn with
    /// `notifications/cancelled`, so the server can stop its work. With a progress callback the
    /// request carries a progress token (its id).
    pub fn request(
        &self,
        method: &str,
        mut params: Value,
        watch: &Watch,
    ) -> Result<Value, McpError> {
        let (id, rx) = self.calls.open(method)?;
        if watch.progress.is_some() {
            if !params.is_object() {
                params = json!({});
            }
            params["_meta"]["progressToken"] = json!(id);
        }
        let request = Request {
            id,
            method: method.to_owned(),
            params,
        };
        if let Err(e) = self.transport.send_request(request) {
            self.calls.forget(id);
            return Err(e);
        }
        match self.calls.wait(id, &rx, method, watch) {
            Ended::Answer(value) => Ok(value),
            Ended::Failed(e) => Err(e),
            Ended::Abandoned(e) => {
                let reason = e.to_string();
                let note = json!({"requestId": id, "reason": reason});
                if let Err(send) = self.notify(methods::CANCELLED, note) {
                    tracing::debug!(server = %self.server(), "could not withdraw request {id}: {send}");
                }
                Err(e)
            }
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) -> Result<(), McpError> {
        self.transport.send_notification(Notification {
            method: method.to_owned(),
            params,
        })
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.calls.is_closed()
    }

    /// Frames from the server that could not be read as messages (and were skipped).
    pub fn bad_frames(&self) -> u64 {
        self.calls.bad_frames()
    }

    /// Ends the connection; waiting requests fail with `Closed`.
    pub fn close(&self) {
        self.calls.close();
        self.transport.close();
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.close();
    }
}

/// Encodes one message as a frame body, for the transports.
pub(crate) fn encode(message: &Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    // A `Value` always serialises.
    message
        .encode_into(&mut out)
        .expect("a JSON value serialises");
    out
}
