//! Errors at the crate boundary, plus the hot-path publish error.

/// Why [`Publisher::publish`](crate::Publisher::publish) refused an event. Small and `Copy`:
/// the caller still owns the payload and decides what to do (split it, shorten it, drop it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PublishError {
    /// The payload is longer than the ring's per-event limit; nothing was written.
    #[error("event payload of {len} bytes exceeds the event ring's limit of {max} bytes")]
    TooLarge { len: usize, max: usize },
}

/// Failures of `hearth-ipc` outside the publish hot path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IpcError {
    /// A [`RingConfig`](crate::RingConfig) value is out of range.
    #[error("invalid event ring config: {field} = {value}: {rule}")]
    InvalidConfig {
        field: &'static str,
        value: u64,
        rule: &'static str,
    },
    /// The region for a ring could not be allocated.
    #[error("could not allocate {len} bytes for an event ring")]
    OutOfMemory { len: usize },
    /// A region handed to `init_in`/`attach` is too small, misaligned, or its header describes a
    /// layout that does not fit inside it.
    #[error("event ring region rejected: {reason}")]
    BadRegion { reason: &'static str },
    /// The region does not start with the event ring magic (not a ring, or not initialised yet).
    #[error("event ring region has magic {found:#010x}, expected {expected:#010x}")]
    BadMagic { found: u32, expected: u32 },
    /// The region was laid out by a build with another layout version.
    #[error("event ring region has layout version {found}, this build reads version {expected}")]
    BadVersion { found: u32, expected: u32 },
    /// An event payload is not a valid JSON envelope.
    #[error("malformed event envelope: {0}")]
    Envelope(#[from] serde_json::Error),
}
