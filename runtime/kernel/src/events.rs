//! The kernel's side of the event ring: JSON envelopes (SPEC §8.6) published through the one
//! ring publisher, shared by the turn engine and the provider thread. The lock is held only
//! for the copy into the ring and is uncontended in practice (the provider streams while the
//! turn engine waits), so publishing stays wait-free for readers and cheap for writers.

use hearth_ipc::{EventKind, EventRing, Publisher, RingConfig, Subscriber};
use parking_lot::Mutex;
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
            }),
        }
    }

    /// A bus over a fresh ring of the default size.
    pub fn with_default_ring(source: impl Into<String>) -> Self {
        let ring =
            EventRing::new(RingConfig::default()).expect("the default ring configuration is valid");
        let (publisher, subscriber) = ring.split();
        Self::new(publisher, subscriber, source)
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

    /// How many events the ring refused (too large for a slot).
    pub fn refused(&self) -> u64 {
        self.inner.refused.load(Ordering::Relaxed)
    }
}
