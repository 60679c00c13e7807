//! The plugin's side of the data plane: the kernel's shared segment (fd 3) and this process's
//! doorbell (fd 4), attached when the handshake offers them (`ipc/PROTOCOL.md` §9).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_ipc::{
    ArenaView, Doorbell, EventKind, KindMask, PluginSegment, ReadResult, Reader, StageContext,
};
use serde::Deserialize;
use serde_json::Value;

/// What the kernel announces in the handshake's `data_plane` object.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Offer {
    pub version: u32,
    pub segment_fd: i32,
    pub doorbell_fd: i32,
    pub generation: u64,
    pub owner: u32,
    pub inline_limit: usize,
}

/// The layout version of the offer this SDK understands.
const OFFER_VERSION: u32 = 1;

/// The shared segment as this plugin sees it: the kernel's event ring, the stage-context area
/// and the exchange arena. Reached through [`Host::data_plane`](crate::Host::data_plane).
pub struct DataPlane {
    offer: Value,
    owner: u32,
    inline_limit: usize,
    segment: PluginSegment,
    /// The process's doorbell, lent to one event stream at a time (one eventfd wakes one
    /// sleeper reliably: two readers draining it could swallow each other's wake).
    doorbell: Arc<Mutex<Option<Doorbell>>>,
}

impl DataPlane {
    /// Attaches to the inherited fds the offer names. Any mismatch is refused with the reason;
    /// the plugin then runs on the control plane alone.
    pub(crate) fn attach(raw: &Value) -> Result<DataPlane, String> {
        let offer: Offer = serde_json::from_value(raw.clone())
            .map_err(|e| format!("the data_plane offer does not parse: {e}"))?;
        if offer.version != OFFER_VERSION {
            return Err(format!(
                "data_plane version {} offered, this SDK reads version {OFFER_VERSION}",
                offer.version
            ));
        }
        if (offer.segment_fd, offer.doorbell_fd)
            != (hearth_ipc::SEGMENT_FD, hearth_ipc::DOORBELL_FD)
        {
            return Err(format!(
                "the offer puts the segment at fd {} and the doorbell at fd {}, this SDK expects \
                 {} and {}",
                offer.segment_fd,
                offer.doorbell_fd,
                hearth_ipc::SEGMENT_FD,
                hearth_ipc::DOORBELL_FD
            ));
        }
        let (segment, doorbell) =
            PluginSegment::attach_inherited().map_err(|e| format!("fd 3 / fd 4 refused: {e}"))?;
        if segment.generation() != offer.generation {
            return Err(format!(
                "the segment at fd 3 is generation {}, the handshake names {}: not this \
                 kernel's segment",
                segment.generation(),
                offer.generation
            ));
        }
        Ok(DataPlane {
            offer: raw.clone(),
            owner: offer.owner,
            inline_limit: offer.inline_limit,
            segment,
            doorbell: Arc::new(Mutex::new(Some(doorbell))),
        })
    }

    /// The handshake's `data_plane` object as the kernel sent it.
    pub fn offer(&self) -> &Value {
        &self.offer
    }

    /// This process's owner id in the exchange arena.
    pub fn owner(&self) -> u32 {
        self.owner
    }

    /// JSON payloads longer than this travel through the arena instead of the pipe.
    pub fn inline_limit(&self) -> usize {
        self.inline_limit
    }

    /// The kernel's pid, as the segment records it.
    pub fn kernel_pid(&self) -> u32 {
        self.segment.kernel_pid()
    }

    /// The stage-context area: one descriptor per field, so writing one field never touches
    /// another (a plugin that changes `FinalText` cannot lose another's `Memory`).
    pub fn stage_context(&self) -> &StageContext {
        self.segment.context()
    }

    /// The exchange arena, for blocks the kernel issued to this process.
    pub fn arena(&self) -> &ArenaView {
        self.segment.arena()
    }

    /// A reader of the kernel's event ring from now on, delivering only `kinds`. One stream at
    /// a time sleeps on the process's doorbell (fd 4; it goes back when that stream drops);
    /// the others sleep on the ring's futex. Either way the kernel never waits for a reader.
    pub fn events(&self, kinds: &[EventKind]) -> EventStream {
        let reader = self.segment.subscriber().reader(KindMask::of(kinds));
        let doorbell = LentBell {
            bell: lock(&self.doorbell).take(),
            home: Arc::clone(&self.doorbell),
        };
        EventStream {
            reader,
            doorbell,
            buf: Vec::new(),
        }
    }
}

impl std::fmt::Debug for DataPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataPlane")
            .field("owner", &self.owner)
            .field("segment", &self.segment)
            .finish()
    }
}

/// What [`EventStream::next`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<'a> {
    /// Event `seq` of `kind`; `payload` is its bytes (a JSON envelope for kernel events, see
    /// [`decode_envelope`](crate::decode_envelope)), valid until the next read.
    Event {
        /// The event's sequence number.
        seq: u64,
        /// Its type.
        kind: EventKind,
        /// Its payload.
        payload: &'a [u8],
    },
    /// The kernel overran this reader: `missed` events (of any kind or tag) were overwritten
    /// before it read them. The stream goes on from the oldest event still there.
    Lagged {
        /// Events jumped over.
        missed: u64,
    },
    /// Nothing arrived within the timeout.
    TimedOut,
    /// The kernel closed the ring (it is shutting down) and everything in it was read.
    Closed,
}

/// A filtered reader of the kernel's event ring. Reading copies each payload once, into a
/// buffer the stream reuses: no allocation per event once it has grown, and never a call to the
/// kernel.
pub struct EventStream {
    reader: Reader,
    doorbell: LentBell,
    buf: Vec<u8>,
}

/// The process's doorbell while a stream has it; it goes back home when the stream drops.
struct LentBell {
    bell: Option<Doorbell>,
    home: Arc<Mutex<Option<Doorbell>>>,
}

impl Drop for LentBell {
    fn drop(&mut self) {
        if let Some(bell) = self.bell.take() {
            // Drained, so the next stream does not start with a stale wake.
            bell.drain();
            *lock(&self.home) = Some(bell);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl EventStream {
    /// Deliver only events of stream tag `tag` (e.g. one task's answer); the others are skipped
    /// without copying their payloads.
    pub fn with_tag(mut self, tag: u64) -> EventStream {
        self.reader = self.reader.with_tag(tag);
        self
    }

    /// Deliver only events whose stream tag `accept` returns true for: one stream following
    /// many answers at once (a web channel's, for every open page), decided on one load of the
    /// slot before any payload is copied. Tags may collide, so the payload's request id is
    /// still the one to check.
    pub fn with_tag_filter(mut self, accept: impl Fn(u64) -> bool + Send + Sync + 'static) -> Self {
        self.reader = self.reader.with_tag_filter(accept);
        self
    }

    /// How long a wait spins before it sleeps (default 10 µs); a plugin that wants the lowest
    /// latency while it is busy spins longer.
    pub fn set_spin(&mut self, spin: Duration) {
        self.reader.set_spin(spin);
    }

    /// The next wanted event, waiting up to `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Next<'_> {
        let got = match &self.doorbell.bell {
            Some(bell) => self.reader.next_with_doorbell(&mut self.buf, bell, timeout),
            None => self.reader.next_timeout(&mut self.buf, timeout),
        };
        match got {
            ReadResult::Event { seq, kind } => Next::Event {
                seq,
                kind,
                payload: &self.buf,
            },
            ReadResult::Lagged { missed } => Next::Lagged { missed },
            ReadResult::Empty => Next::TimedOut,
            ReadResult::Closed => Next::Closed,
        }
    }

    /// Events this stream lost to overruns so far.
    pub fn missed_total(&self) -> u64 {
        self.reader.missed_total()
    }

    /// Whether this stream sleeps on the process's doorbell (fd 4) rather than the futex.
    pub fn uses_doorbell(&self) -> bool {
        self.doorbell.bell.is_some()
    }
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("position", &self.reader.position())
            .field("doorbell", &self.doorbell.bell.is_some())
            .finish()
    }
}
