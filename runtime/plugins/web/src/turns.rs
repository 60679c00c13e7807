//! The answers being streamed: one [`Turn`] per submitted input, filled by one reader of the
//! kernel's event ring (the pump) with the deltas and tool calls as they are published, and
//! closed with the reply. Every SSE client of a turn reads the same items, numbered, so a
//! client that reconnects with `Last-Event-ID: N` gets exactly the items after N: nothing lost,
//! nothing twice. Finished turns are kept for a while (a page reloading just after the end),
//! then dropped; the journal keeps the history.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_plugin::{EventKind, Host, Next, Value, decode_envelope, json};
use tokio::sync::watch;

/// Finished turns kept in memory.
const KEPT_FINISHED: usize = 64;
/// Items one turn holds at most (a runaway answer cannot grow the process without bound; the
/// final reply still carries the whole text).
const MAX_ITEMS: usize = 65_536;

/// One streamed item: `kind` is `delta`, `reasoning`, `reset` or `tool`.
#[derive(Debug, Clone)]
pub struct Item {
    /// What it is.
    pub kind: &'static str,
    /// Its JSON body.
    pub data: Value,
}

/// One answer being streamed.
pub struct Turn {
    /// The request id of the input.
    pub request_id: String,
    items: Mutex<Vec<Item>>,
    done: Mutex<Option<Value>>,
    /// Bumped on every change; SSE clients wait on it.
    version: watch::Sender<u64>,
}

impl Turn {
    fn new(request_id: String) -> Turn {
        Turn {
            request_id,
            items: Mutex::new(Vec::new()),
            done: Mutex::new(None),
            version: watch::Sender::new(0),
        }
    }

    fn push(&self, item: Item) {
        {
            let mut items = lock(&self.items);
            if items.len() >= MAX_ITEMS {
                return;
            }
            items.push(item);
        }
        self.version.send_modify(|v| *v += 1);
    }

    /// Closes the turn with its reply (`{done, content, error, skipped, reason}`).
    pub fn finish(&self, reply: Value) {
        *lock(&self.done) = Some(reply);
        self.version.send_modify(|v| *v += 1);
    }

    /// Items from index `from` on, and the reply if the turn is over.
    pub fn since(&self, from: usize) -> (Vec<Item>, Option<Value>) {
        // The reply is read first: items published before it are then all in the list.
        let done = lock(&self.done).clone();
        let items = lock(&self.items);
        let items = items.get(from..).map(<[Item]>::to_vec).unwrap_or_default();
        (items, done)
    }

    /// Whether the reply has come.
    pub fn is_done(&self) -> bool {
        lock(&self.done).is_some()
    }

    /// A receiver that sees every change.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The turns of this channel by request id, and the tags the pump lets through.
#[derive(Default)]
pub struct Turns {
    by_id: Mutex<HashMap<String, Arc<Turn>>>,
    tags: Mutex<HashMap<u64, usize>>,
    finished: Mutex<VecDeque<String>>,
}

impl Turns {
    /// Starts following `request_id` (tag `tag`) before anything of it can be published.
    pub fn open(&self, request_id: &str, tag: u64) -> Arc<Turn> {
        let turn = Arc::new(Turn::new(request_id.to_owned()));
        lock(&self.by_id).insert(request_id.to_owned(), Arc::clone(&turn));
        *lock(&self.tags).entry(tag).or_default() += 1;
        turn
    }

    /// The turn of `request_id`, while it is kept.
    pub fn get(&self, request_id: &str) -> Option<Arc<Turn>> {
        lock(&self.by_id).get(request_id).cloned()
    }

    /// The newest turn still running, for tool calls (their events carry the channel, not the
    /// request).
    fn running(&self) -> Option<Arc<Turn>> {
        let by_id = lock(&self.by_id);
        by_id
            .values()
            .filter(|t| !t.is_done())
            .max_by_key(|t| t.request_id.clone())
            .cloned()
    }

    /// Closes `turn` with `reply`; its tag stops passing the pump, and old turns go.
    pub fn finish(&self, turn: &Turn, tag: u64, reply: Value) {
        turn.finish(reply);
        {
            let mut tags = lock(&self.tags);
            if let Some(n) = tags.get_mut(&tag) {
                *n -= 1;
                if *n == 0 {
                    tags.remove(&tag);
                }
            }
        }
        let mut finished = lock(&self.finished);
        finished.push_back(turn.request_id.clone());
        while finished.len() > KEPT_FINISHED {
            if let Some(old) = finished.pop_front() {
                lock(&self.by_id).remove(&old);
            }
        }
    }

    fn follows_tag(&self, tag: u64) -> bool {
        // Tool calls are untagged (0); they are matched by channel.
        tag == 0 || lock(&self.tags).contains_key(&tag)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.by_id).len()
    }

    /// One item from a ring event, or none when it belongs to no turn of ours.
    fn route(&self, kind: EventKind, payload: &[u8], channel: &str) {
        let Ok(envelope) = decode_envelope(payload) else {
            return;
        };
        let p = envelope.payload;
        if kind == EventKind::ToolCall {
            if p["channel"].as_str() == Some(channel)
                && let Some(turn) = self.running()
            {
                turn.push(Item {
                    kind: "tool",
                    data: json!({"tool": p["tool"], "args": p["args"], "result": p["result"], "status": p["status"]}),
                });
            }
            return;
        }
        // Tags may collide: the request id decides.
        let Some(turn) = p["request_id"].as_str().and_then(|id| self.get(id)) else {
            return;
        };
        let content = p["content"].as_str().unwrap_or_default();
        let kind = if p["reset"] == true {
            "reset"
        } else if kind == EventKind::ReasoningDelta {
            "reasoning"
        } else {
            "delta"
        };
        turn.push(Item {
            kind,
            data: json!({"content": content}),
        });
    }
}

/// The pump: the one reader of the event ring in this process, on its own thread, parked on
/// the ring when idle. Returns when the ring closes (the kernel is stopping).
pub fn pump(host: &Host, turns: &Arc<Turns>, channel: &str) {
    let Some(plane) = host.data_plane() else {
        host.log(
            "warn",
            "web: no data plane offered; answers arrive whole instead of streamed",
        );
        return;
    };
    let filter = Arc::clone(turns);
    let mut events = plane
        .events(&[
            EventKind::ContentDelta,
            EventKind::ReasoningDelta,
            EventKind::ToolCall,
        ])
        .with_tag_filter(move |tag| filter.follows_tag(tag));
    events.set_spin(Duration::ZERO);
    loop {
        match events.next(Duration::from_secs(1)) {
            Next::Event { kind, payload, .. } => turns.route(kind, payload, channel),
            Next::Lagged { missed } => {
                host.log("warn", &format!("web: the ring overran the pump by {missed} events; the final replies carry the whole text"));
            }
            Next::TimedOut => {}
            Next::Closed => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(id: &str, content: &str) -> Vec<u8> {
        serde_json::to_vec(
            &json!({"type": "content_delta", "source": "hearth", "timestamp": 0,
            "payload": {"request_id": id, "content": content}}),
        )
        .unwrap()
    }

    #[test]
    fn items_are_numbered_and_replayed_from_any_point_and_others_are_ignored() {
        let turns = Turns::default();
        let turn = turns.open("r1", 7);
        for word in ["a", "b", "c"] {
            turns.route(EventKind::ContentDelta, &delta("r1", word), "http");
        }
        turns.route(EventKind::ContentDelta, &delta("r2", "x"), "http");
        let (all, done) = turn.since(0);
        assert_eq!(all.len(), 3);
        assert!(done.is_none());
        let (rest, _) = turn.since(2);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].data["content"], "c");
        assert!(turns.follows_tag(7) && !turns.follows_tag(8));
        turns.finish(&turn, 7, json!({"done": true, "content": "abc"}));
        assert!(!turns.follows_tag(7));
        assert_eq!(turn.since(3).1.unwrap()["content"], "abc");
    }

    #[test]
    fn finished_turns_are_bounded() {
        let turns = Turns::default();
        for i in 0..KEPT_FINISHED + 5 {
            let id = format!("r{i:03}");
            let t = turns.open(&id, i as u64 + 1);
            turns.finish(&t, i as u64 + 1, json!({}));
        }
        assert_eq!(turns.len(), KEPT_FINISHED);
        assert!(turns.get("r000").is_none());
    }
}
