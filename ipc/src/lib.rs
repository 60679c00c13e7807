//! Hearth's process-boundary plumbing: the per-token **event ring** and the **shared segment**
//! plugins map.
//!
//! This crate owns the byte layouts that may be shared with other processes and the
//! lock-free protocols over them: the single-producer, many-reader [`EventRing`] every
//! streaming path publishes to, with futex or eventfd ([`Doorbell`]) park/wake and stream
//! tags; the one memfd [`Segment`] all plugin processes share (fd 3), holding the ring, the
//! per-field [`StageContext`] and the exchange [`Arena`] for tool arguments and results; the
//! [`ShmSafe`] marker every shared type implements; the event type codes ([`EventKind`]) and
//! the JSON [`Envelope`] events travel in. It knows nothing of stages, memory or the
//! scheduler; the runtime decides what is published and who reads it, and the control plane
//! (JSON-RPC over the plugin's pipes) lives elsewhere. Byte layouts: `ipc/DESIGN.md`.
//!
//! `unsafe` is allowed here (and only here in the workspace) for the shared region; every
//! block names its invariant, every non-relaxed atomic names the operation it pairs with.
//!
//! ```
//! use std::time::Duration;
//! use hearth_ipc::{EventKind, EventRing, KindMask, ReadResult, RingConfig};
//!
//! let (mut publisher, subscriber) = EventRing::new(RingConfig::default())?.split();
//! let mut reader = subscriber.reader(KindMask::of(&[EventKind::ContentDelta]));
//!
//! publisher.publish(EventKind::Stage, b"{\"phase\":\"llm\"}").expect("fits");
//! let seq = publisher.publish(EventKind::ContentDelta, b"Hello").expect("fits");
//!
//! let mut buf = Vec::new();
//! let got = reader.next_timeout(&mut buf, Duration::from_secs(1));
//! assert_eq!(got, ReadResult::Event { seq, kind: EventKind::ContentDelta });
//! assert_eq!(buf, b"Hello");
//! assert_eq!(reader.try_next(&mut buf), ReadResult::Empty);
//! # Ok::<(), hearth_ipc::IpcError>(())
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(target_endian = "big")]
compile_error!(
    "hearth-ipc lays out shared regions as little-endian; big-endian targets are not supported"
);

mod doorbell;
mod envelope;
mod error;
mod event_kind;
mod event_ring;
// Used by the segment, which loom builds leave out; its own loom model still runs.
#[cfg_attr(loom, allow(dead_code))]
mod generation;
mod notify;
mod parent_death;
#[cfg(not(loom))]
mod segment;
mod shm_safe;
mod sync;
mod words;

pub use doorbell::{Doorbell, Doorbells};
pub use envelope::{Envelope, decode_envelope, encode_envelope, encode_envelope_into};
pub use error::{ArenaError, FieldError, IpcError, PublishError};
pub use event_kind::{EventKind, KindMask};
pub use event_ring::{Armed, EventRing, Publisher, ReadResult, Reader, RingConfig, Subscriber};
pub use parent_death::kill_with_parent;
#[cfg(not(loom))]
pub use segment::{
    Arena, ArenaConfig, ArenaRef, ArenaView, CallFrame, DOORBELL_FD, FieldCapacities, FieldSet,
    KERNEL_OWNER, NO_MEMORY, PluginSegment, SEGMENT_FD, Segment, SegmentConfig, StageContext,
    StageField, default_capacities, inherit_plugin_fds,
};
pub use shm_safe::ShmSafe;
