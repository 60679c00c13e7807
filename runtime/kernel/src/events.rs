//! The kernel's side of the event ring: JSON envelopes (SPEC §8.6) published through the one
//! ring publisher, shared by the turn engine and the provider thread. The lock is held only
//! for the copy into the ring and is uncontended in practice (the provider streams while the
//! turn engine waits), so publishing stays wait-free for readers and cheap for writers.

use hearth_ipc::{EventKind, EventRing, Publisher, RingConfig, Subscriber};
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Publishes kernel events to the event ring, tagged with this agent's name.
#[derive(Clone)]
pub struct EventBus {
    inner: Arc<Inner>,
}

struct Inner {
    publisher: Mutex<Publisher>,
    ring: Subscriber,
    source: String,
    refused: AtomicU64,
    tap: DeltaTapSlot,
}

/// Takes every streamed delta on the publisher's thread, around its publication: the socket
/// server writes a followed answer's deltas straight to its client this way, so a token reaches
/// it without waking the server's thread first.
pub trait DeltaTap: Send + Sync {
    /// Runs `publish` (which puts the delta into the ring, ringing every reader's doorbell but
    /// the one it is given, and returns its sequence, `None` when the ring refused it) and may
    /// write the delta out. Called for every delta, so it must not block; the publisher's lock
    /// is held meanwhile, so taps see deltas in ring order.
    fn around(
        &self,
        kind: EventKind,
        delta: &Delta<'_>,
        publish: &mut dyn FnMut(Option<u64>) -> Option<u64>,
    );
}

/// Where a [`DeltaTap`] is installed: shared by the bus and the kernel's handle.
#[derive(Clone, Default)]
pub struct DeltaTapSlot(Arc<RwLock<Option<Arc<dyn DeltaTap>>>>);

impl DeltaTapSlot {
    /// Installs `tap` (replacing any other), or removes it with `None`.
    pub fn set(&self, tap: Option<Arc<dyn DeltaTap>>) {
        *self.0.write() = tap;
    }

    /// Removes `tap` if it is the one installed (a later one stays).
    pub fn remove(&self, tap: &Arc<dyn DeltaTap>) {
        let mut slot = self.0.write();
        if slot.as_ref().is_some_and(|t| Arc::ptr_eq(t, tap)) {
            *slot = None;
        }
    }
}

impl std::fmt::Debug for DeltaTapSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeltaTapSlot")
            .field("installed", &self.0.read().is_some())
            .finish()
    }
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus")
            .field("source", &self.inner.source)
            .finish()
    }
}

impl EventBus {
    /// A bus over an existing ring; `source` names this agent in every envelope.
    pub fn new(publisher: Publisher, ring: Subscriber, source: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                publisher: Mutex::new(publisher),
                ring,
                source: source.into(),
                refused: AtomicU64::new(0),
                tap: DeltaTapSlot::default(),
            }),
        }
    }

    /// The name of this agent, as every envelope carries it.
    pub fn agent_id(&self) -> &str {
        &self.inner.source
    }

    /// A bus over a fresh ring of the default size.
    pub fn with_default_ring(source: impl Into<String>) -> Self {
        let ring =
            EventRing::new(RingConfig::default()).expect("the default ring configuration is valid");
        let (publisher, subscriber) = ring.split();
        Self::new(publisher, subscriber, source)
    }

    /// The publisher's doorbell list: a reader that sleeps in its own `poll` (the socket's
    /// reactor) adds its eventfd here and is rung while it is armed.
    pub fn doorbells(&self) -> hearth_ipc::Doorbells {
        self.inner.publisher.lock().doorbells()
    }

    /// Where a [`DeltaTap`] on this bus's deltas is installed.
    pub fn delta_tap(&self) -> DeltaTapSlot {
        self.inner.tap.clone()
    }

    /// The ring readers subscribe to.
    pub fn ring(&self) -> &Subscriber {
        &self.inner.ring
    }

    /// Publishes `{type, source, payload, timestamp}`. An event too large for the ring is
    /// counted and dropped: streaming must never stall on one oversized payload.
    pub fn publish(&self, kind: EventKind, payload: &Value) {
        let bytes = hearth_ipc::encode_envelope(
            kind,
            &self.inner.source,
            payload,
            hearth_engine::now_ms() / 1000,
        );
        if self.inner.publisher.lock().publish(kind, &bytes).is_err() {
            self.inner.refused.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                kind = kind.as_str(),
                len = bytes.len(),
                "event too large for the ring, dropped"
            );
        }
    }

    /// Publishes one streamed delta of request `delta.request_id`, tagged with its
    /// [`stream_tag`] so a reader can skip other requests' deltas on one load. The envelope is
    /// written straight into `buf` (reused from call to call): no JSON value is built.
    pub fn publish_delta(&self, buf: &mut Vec<u8>, kind: EventKind, delta: &Delta<'_>) {
        buf.clear();
        let envelope = DeltaEnvelope {
            kind,
            source: &self.inner.source,
            payload: delta,
            timestamp: hearth_engine::now_ms() / 1000,
        };
        serde_json::to_writer(&mut *buf, &envelope)
            .expect("a delta of strings always serialises into a Vec");
        let tag = stream_tag(delta.request_id);
        let mut publisher = self.inner.publisher.lock();
        let mut publish = |spare| match publisher.publish_sparing(kind, tag, buf, spare) {
            Ok(seq) => Some(seq),
            Err(_) => {
                self.inner.refused.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    kind = kind.as_str(),
                    len = buf.len(),
                    "delta too large for the ring, dropped"
                );
                None
            }
        };
        match &*self.inner.tap.0.read() {
            Some(tap) => tap.around(kind, delta, &mut publish),
            None => {
                publish(None);
            }
        }
    }

    /// How many events the ring refused (too large for a slot).
    pub fn refused(&self) -> u64 {
        self.inner.refused.load(Ordering::Relaxed)
    }
}

/// The payload of a `content_delta` / `reasoning_delta` event (SPEC §8.6).
#[derive(Debug, Serialize)]
pub struct Delta<'a> {
    /// The streamed text.
    pub content: &'a str,
    /// The output channel of the task.
    pub channel: &'a str,
    /// The request whose answer this is.
    pub request_id: &'a str,
    /// The call was cut: what was streamed so far is void.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
}

/// The envelope of [`EventBus::publish`] with a borrowed delta payload: the same fields in the
/// same order, so readers cannot tell the two apart.
#[derive(Serialize)]
struct DeltaEnvelope<'a> {
    #[serde(rename = "type")]
    kind: EventKind,
    source: &'a str,
    payload: &'a Delta<'a>,
    timestamp: i64,
}

/// The ring's stream tag of request `request_id` (64-bit FNV-1a; never 0, which means
/// untagged). Two requests may share a tag, so a reader that filters on it still checks the
/// request id of what it keeps.
pub fn stream_tag(request_id: &str) -> u64 {
    let hash = request_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    hash.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_ipc::{KindMask, ReadResult};

    #[test]
    fn a_delta_envelope_reads_like_a_published_one_and_carries_its_tag() {
        let bus = EventBus::with_default_ring("agent-1");
        let tag = stream_tag("req-7");
        let mut mine = bus.ring().reader(KindMask::ALL).with_tag(tag);
        let mut buf = Vec::new();
        bus.publish_delta(
            &mut buf,
            EventKind::ContentDelta,
            &Delta {
                content: "hé \"x\"",
                channel: "cli",
                request_id: "req-7",
                reset: false,
            },
        );
        bus.publish_delta(
            &mut buf,
            EventKind::ContentDelta,
            &Delta {
                content: "",
                channel: "cli",
                request_id: "req-8",
                reset: true,
            },
        );
        let mut got = Vec::new();
        assert!(matches!(mine.try_next(&mut got), ReadResult::Event { .. }));
        let envelope = hearth_ipc::decode_envelope(&got).expect("an envelope");
        assert_eq!(envelope.kind, EventKind::ContentDelta);
        assert_eq!(envelope.source, "agent-1");
        assert_eq!(
            envelope.payload,
            serde_json::json!({"content": "hé \"x\"", "channel": "cli", "request_id": "req-7"})
        );
        // The other request's delta (a reset) has another tag: skipped, not missed.
        assert_eq!(mine.try_next(&mut got), ReadResult::Empty);
        assert_eq!(mine.missed_total(), 0);
        let mut all = bus.ring().reader_from_oldest(KindMask::ALL);
        all.try_next(&mut got);
        all.try_next(&mut got);
        let reset = hearth_ipc::decode_envelope(&got).expect("an envelope");
        assert_eq!(reset.payload["reset"], true);
    }

    #[test]
    fn stream_tags_are_stable_and_never_untagged() {
        assert_eq!(stream_tag("req-7"), stream_tag("req-7"));
        assert_ne!(stream_tag("req-7"), stream_tag("req-8"));
        assert_ne!(stream_tag(""), 0);
    }
}
