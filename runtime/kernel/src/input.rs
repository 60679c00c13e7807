//! What enters the kernel and what leaves it for the caller: inputs with their optional reply
//! channel, and the single terminal reply every task produces (SPEC §2.10 I5).

use crossbeam_channel::{Receiver, Sender};
use hearth_engine::now_ms;
use hearth_llm::provider::Usage;
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The terminal reply of one task: an answer, an error, or a skip with its reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Reply {
    /// The id of the input this answers.
    pub request_id: String,
    /// The reply text.
    pub content: String,
    /// The input was not run (see `reason`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// Why the input was skipped or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The task ended in an error.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub error: bool,
    /// The model's reasoning, when it streamed any.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning_content: String,
    /// Tokens the task's LLM calls used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What recall put in front of the model for this turn (journaled with the reply).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<crate::recalled::RecalledItem>,
}

/// Skip reasons a caller can see.
pub mod skip {
    /// The input had no content.
    pub const EMPTY_INPUT: &str = "empty_input";
    /// An input with this request id was already taken.
    pub const DUPLICATE: &str = "duplicate";
    /// The ready queue was full.
    pub const QUEUE_FULL: &str = "queue_full";
    /// The kernel shut down before the input ran.
    pub const SHUTDOWN: &str = "shutdown";
    /// The input was dropped without an answer; only ever seen if something upstream failed.
    pub const DROPPED: &str = "dropped";
    /// The caller's trust does not allow what the input asks (an external stop, an external
    /// input on the consolidation channel).
    pub const DENIED: &str = "denied";
    /// The caller hung up before the answer and nothing else waited for it.
    pub const CANCELLED: &str = "cancelled";
}

/// Where an input comes from decides what it may do (SPEC §2.1): the one trust type of the
/// handler contract, so a tool sees exactly the trust the ingress gave the input.
pub use hearth_stages::Trust;

/// The one-shot answer channel of an input. Sending consumes it, so a second reply cannot be
/// written; dropping it unanswered answers `skipped/dropped`, so no caller can wait forever.
///
/// The compiler enforces the single reply. There is no copy to answer with:
///
/// ```compile_fail
/// use hearth_kernel::input::ReplyHandle;
/// fn copy(handle: ReplyHandle) -> (ReplyHandle, ReplyHandle) {
///     (handle.clone(), handle)
/// }
/// ```
///
/// and a handle that has answered is gone:
///
/// ```compile_fail
/// use hearth_kernel::input::{Reply, ReplyHandle};
/// fn twice(handle: ReplyHandle) {
///     handle.send(Reply::default());
///     handle.send(Reply::default());
/// }
/// ```
#[derive(Debug)]
pub struct ReplyHandle {
    request_id: String,
    tx: Option<Sender<Reply>>,
    listener: Option<Listener>,
}

/// Told, from whichever thread it happens on, that an input reached the kernel's queue or that
/// its reply is on the channel: a caller serving many inputs from one event loop sleeps until
/// then instead of polling. Both calls must be cheap and never block.
pub trait ReplyListener: Send + Sync {
    /// The kernel's queue took the input: it will run and be answered.
    fn admitted(&self, request_id: &str);
    /// The reply is on the channel.
    fn replied(&self);
}

#[derive(Clone)]
struct Listener(std::sync::Arc<dyn ReplyListener>);

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

impl ReplyHandle {
    fn none(request_id: String) -> Self {
        Self {
            request_id,
            tx: None,
            listener: None,
        }
    }

    /// Whether a caller is waiting on this handle.
    pub fn is_live(&self) -> bool {
        self.tx.is_some()
    }

    /// The request id the reply is for.
    pub fn request_id(&self) -> &str {
        &self.request_id
    }

    /// Sends the terminal reply (stamped with the request id).
    pub fn send(mut self, reply: Reply) -> bool {
        self.deliver(reply)
    }

    fn deliver(&mut self, mut reply: Reply) -> bool {
        reply.request_id.clone_from(&self.request_id);
        // A private channel has capacity 1 and a shared one is sized for every request in
        // flight: this never blocks the kernel. A dropped receiver is fine; a full one is logged
        // (the reply is journaled when the input is durable).
        let sent = self.tx.take().is_some_and(|tx| match tx.try_send(reply) {
            Ok(()) => true,
            Err(crossbeam_channel::TrySendError::Full(reply)) => {
                tracing::warn!(request_id = %reply.request_id, "reply channel full; reply not delivered");
                false
            }
            Err(crossbeam_channel::TrySendError::Disconnected(_)) => false,
        });
        if sent && let Some(listener) = &self.listener {
            listener.0.replied();
        }
        sent
    }
}

impl Drop for ReplyHandle {
    fn drop(&mut self) {
        if self.tx.is_some() {
            tracing::warn!(request = %self.request_id, "input dropped before its reply; answering skipped/dropped");
            self.deliver(Reply {
                skipped: true,
                reason: Some(skip::DROPPED.into()),
                ..Reply::default()
            });
        }
    }
}

/// The pending "admitted" notice of one input (see [`InputEvent::admission`]).
#[derive(Debug)]
pub struct Admission {
    listener: Listener,
    request_id: String,
}

impl Admission {
    /// Tells the listener the kernel's queue holds the input.
    pub fn notify(self) {
        self.listener.0.admitted(&self.request_id);
    }
}

/// One input event (SPEC §1 `InputEvent`).
#[derive(Debug)]
pub struct InputEvent {
    /// Unique id of this input (`req_<nanos>_<n>`).
    pub request_id: String,
    /// Who sent it (`cli`, a plugin name, ...).
    pub source: String,
    /// `text`, `image`, `audio`, `event` or `command`.
    pub kind: String,
    /// The input's fields (`content` and any flags).
    pub payload: Map<String, Value>,
    /// Where the reply goes.
    pub output_channel: String,
    /// Set by the transport the input came through; `External` unless it proved otherwise.
    pub trust: Trust,
    /// When the input arrived, ms since the epoch.
    pub received_at_ms: i64,
    reply: ReplyHandle,
}

impl InputEvent {
    /// A text input from `source`.
    pub fn text(source: impl Into<String>, content: impl Into<String>) -> Self {
        let mut payload = Map::new();
        payload.insert("content".into(), Value::String(content.into()));
        Self::new(source, payload)
    }

    /// An input from `source` with these fields, a new id and the current time.
    pub fn new(source: impl Into<String>, payload: Map<String, Value>) -> Self {
        Self::recovered(new_request_id(), source.into(), payload, now_ms())
    }

    /// An input with a known id and time (rebuilt from its journal record after a restart, or
    /// new); nobody waits on it until [`InputEvent::reply_channel`] is called. Its trust is
    /// `External` until the transport that received it says otherwise.
    pub fn recovered(
        request_id: String,
        source: String,
        payload: Map<String, Value>,
        accepted_ms: i64,
    ) -> Self {
        Self {
            reply: ReplyHandle::none(request_id.clone()),
            request_id,
            output_channel: source.clone(),
            source,
            kind: "text".into(),
            payload,
            trust: Trust::External,
            received_at_ms: accepted_ms,
        }
    }

    /// Sets the trust level.
    pub fn with_trust(mut self, trust: Trust) -> Self {
        self.trust = trust;
        self
    }

    /// Sets the output channel the reply goes to.
    pub fn with_output_channel(mut self, channel: impl Into<String>) -> Self {
        self.output_channel = channel.into();
        self
    }

    /// Sets one payload field.
    pub fn with_payload(mut self, key: &str, value: Value) -> Self {
        self.payload.insert(key.into(), value);
        self
    }

    /// Attaches a reply channel and returns its receiving end; the kernel answers exactly once.
    pub fn reply_channel(&mut self) -> Receiver<Reply> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.reply = ReplyHandle {
            request_id: self.request_id.clone(),
            tx: Some(tx),
            listener: None,
        };
        rx
    }

    /// Attaches a shared, bounded reply channel (the reply carries the request id) and a
    /// listener told when the input is admitted and when the reply is sent.
    pub fn reply_to(&mut self, tx: Sender<Reply>, listener: std::sync::Arc<dyn ReplyListener>) {
        self.reply = ReplyHandle {
            request_id: self.request_id.clone(),
            tx: Some(tx),
            listener: Some(Listener(listener)),
        };
    }

    /// Taken by the ingress before it hands the input over, and fired once the kernel's queue
    /// holds it (the input itself is gone by then).
    pub fn admission(&self) -> Option<Admission> {
        self.reply.listener.clone().map(|listener| Admission {
            listener,
            request_id: self.request_id.clone(),
        })
    }

    /// The `content` field, or "".
    pub fn content(&self) -> &str {
        self.payload
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Whether the boolean payload field `key` is true.
    pub fn flag(&self, key: &str) -> bool {
        self.payload
            .get(key)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The payload field `key` if it is a string.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.payload.get(key).and_then(Value::as_str)
    }

    /// Whether someone still waits for a reply.
    pub fn has_reply(&self) -> bool {
        self.reply.is_live()
    }

    /// Takes the reply channel out (to answer from another thread); the input keeps a dead one.
    pub fn take_reply(&mut self) -> ReplyHandle {
        std::mem::replace(&mut self.reply, ReplyHandle::none(self.request_id.clone()))
    }

    /// Sends the terminal reply. Taking the sender makes a second reply impossible by construction.
    pub fn send_reply(&mut self, reply: Reply) -> bool {
        self.take_reply().send(reply)
    }

    /// Replies "skipped" with `reason`; false if a reply was already sent.
    pub fn skip(&mut self, reason: &str) -> bool {
        self.send_reply(Reply {
            skipped: true,
            reason: Some(reason.into()),
            ..Reply::default()
        })
    }
}

/// `req_<unix-nanos>_<counter>`.
pub fn new_request_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "req_{nanos}_{}",
        COUNTER.fetch_add(1, Ordering::Relaxed) + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_is_sent_once_with_request_id() {
        let mut input = InputEvent::text("cli", "hi");
        let rx = input.reply_channel();
        assert!(input.skip(skip::DUPLICATE));
        assert!(!input.send_reply(Reply::default()));
        let r = rx.try_recv().expect("one reply");
        assert_eq!(r.reason.as_deref(), Some("duplicate"));
        assert_eq!(r.request_id, input.request_id);
    }

    #[test]
    fn dropping_an_unanswered_input_answers_it() {
        let mut input = InputEvent::text("cli", "hi");
        let rx = input.reply_channel();
        drop(input);
        assert_eq!(
            rx.try_recv().expect("reply on drop").reason.as_deref(),
            Some(skip::DROPPED)
        );
        let mut answered = InputEvent::text("cli", "hi");
        let rx = answered.reply_channel();
        answered.skip(skip::DUPLICATE);
        drop(answered);
        assert_eq!(rx.len(), 1);
    }

    #[test]
    fn request_ids_are_unique() {
        let a = new_request_id();
        let b = new_request_id();
        assert_ne!(a, b);
        assert!(a.starts_with("req_"));
    }
}
