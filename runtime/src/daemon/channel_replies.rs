//! The replies of inputs a plugin channel submitted (`io.submit`), kept by request id until
//! the plugin fetches them (`io.reply`). They are held here, on the kernel's side, so a channel
//! process restarted in the middle of an answer still gets it; an id this table no longer
//! knows is answered from the journal.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};
use hearth_kernel::input::Reply;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// Replies fetched or not; the oldest finished ones go first past this many.
const KEPT_DONE: usize = 256;

enum Slot {
    Waiting(Receiver<Reply>),
    Done(Value),
}

/// The table of submitted inputs and their replies.
#[derive(Default)]
pub(super) struct ChannelReplies {
    slots: Mutex<HashMap<String, Slot>>,
    /// Finished ids, oldest first, to bound the table.
    done_order: Mutex<VecDeque<String>>,
}

/// A reply as `io.reply` answers it.
pub(super) fn reply_json(reply: &Reply) -> Value {
    json!({
        "done": true,
        "content": reply.content,
        "error": reply.error,
        "skipped": reply.skipped,
        "reason": reply.reason,
    })
}

impl ChannelReplies {
    /// Keeps `rx`, the reply channel of `request_id`.
    pub(super) fn expect(&self, request_id: &str, rx: Receiver<Reply>) {
        self.slots
            .lock()
            .insert(request_id.to_owned(), Slot::Waiting(rx));
    }

    /// The reply of `request_id` within `wait`: `Some({done: true, …})`, `Some({done:
    /// false})` when it is still running, `None` when this table does not know the id.
    pub(super) fn wait(&self, request_id: &str, wait: Duration) -> Option<Value> {
        let rx = match self.slots.lock().get(request_id)? {
            Slot::Done(reply) => return Some(reply.clone()),
            // Receivers clone: two waiters (a restarted plugin beside its predecessor's
            // last call) race for the one reply, and the loser finds it in `Done` next time.
            Slot::Waiting(rx) => rx.clone(),
        };
        let got = match rx.recv_timeout(wait) {
            Ok(reply) => reply_json(&reply),
            Err(RecvTimeoutError::Timeout) => {
                return Some(match self.slots.lock().get(request_id) {
                    Some(Slot::Done(reply)) => reply.clone(),
                    _ => json!({"done": false}),
                });
            }
            Err(RecvTimeoutError::Disconnected) => match self.slots.lock().get(request_id) {
                Some(Slot::Done(reply)) => return Some(reply.clone()),
                _ => json!({"done": true, "content": "", "error": true,
                            "skipped": true, "reason": "dropped"}),
            },
        };
        self.finish(request_id, got.clone());
        Some(got)
    }

    fn finish(&self, request_id: &str, reply: Value) {
        self.slots
            .lock()
            .insert(request_id.to_owned(), Slot::Done(reply));
        let mut order = self.done_order.lock();
        order.push_back(request_id.to_owned());
        while order.len() > KEPT_DONE {
            if let Some(old) = order.pop_front() {
                self.slots.lock().remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(content: &str) -> Reply {
        Reply {
            request_id: "r".into(),
            content: content.into(),
            ..Reply::default()
        }
    }

    #[test]
    fn a_reply_is_answered_again_after_it_was_fetched_and_unknown_ids_are_none() {
        let table = ChannelReplies::default();
        let (tx, rx) = crossbeam_channel::bounded(1);
        table.expect("r", rx);
        assert_eq!(
            table.wait("r", Duration::from_millis(5)),
            Some(json!({"done": false}))
        );
        tx.send(reply("hello")).unwrap();
        let first = table.wait("r", Duration::from_secs(5)).expect("known");
        assert_eq!(first["content"], "hello");
        // A second fetch (a restarted channel) gets the same reply, not a timeout.
        assert_eq!(table.wait("r", Duration::from_millis(1)), Some(first));
        assert_eq!(table.wait("other", Duration::from_millis(1)), None);
    }

    #[test]
    fn finished_replies_are_bounded() {
        let table = ChannelReplies::default();
        for i in 0..KEPT_DONE + 10 {
            let (tx, rx) = crossbeam_channel::bounded(1);
            let id = format!("r{i}");
            table.expect(&id, rx);
            tx.send(reply("x")).unwrap();
            assert!(table.wait(&id, Duration::from_secs(1)).is_some());
        }
        assert_eq!(table.wait("r0", Duration::from_millis(1)), None);
        assert!(table.slots.lock().len() <= KEPT_DONE);
    }
}
