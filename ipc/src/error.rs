//! Errors at the crate boundary, plus the hot-path publish error.

/// Why [`Publisher::publish`](crate::Publisher::publish) refused an event. Small and `Copy`:
/// the caller still owns the payload and decides what to do (split it, shorten it, drop it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PublishError {
    /// The payload is longer than the ring's per-event limit; nothing was written.
    #[error("event payload of {len} bytes exceeds the event ring's limit of {max} bytes")]
    TooLarge {
        /// Length in bytes.
        len: usize,
        /// The ring's per-event limit (`max_event_len`).
        max: usize,
    },
}

/// Why an exchange-arena reference or allocation was refused. Small and `Copy`, like
/// [`PublishError`]: nothing was read or written, and the caller still holds its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArenaError {
    /// The reference does not name a block run inside the arena: its offset is outside the
    /// arena or not at a block start, or its length runs past the end of its allocation.
    #[error("arena reference (offset {offset}, len {len}) is out of bounds: {reason}")]
    OutOfBounds {
        /// Offset the reference names.
        offset: u32,
        /// Length in bytes.
        len: u32,
        /// Which bound it broke.
        reason: &'static str,
    },
    /// The block was freed (and maybe reissued) since the reference was made.
    #[error("stale arena reference: generation {expected}, the block is at generation {found}")]
    Stale {
        /// Generation the reference carries.
        expected: u32,
        /// Value found instead.
        found: u32,
    },
    /// The block belongs to another holder (another plugin, or the kernel).
    #[error("arena block is held by owner {holder}, not by owner {owner}")]
    NotOwner {
        /// Owner id of the caller.
        owner: u32,
        /// Owner id of the block's holder.
        holder: u32,
    },
    /// The data does not fit where it was to go: a result larger than its frame's room (ask
    /// for an expansion block), or an allocation larger than the whole arena. Never truncated.
    #[error("{len} bytes do not fit in {room} bytes of arena space")]
    TooLarge {
        /// Length in bytes.
        len: u64,
        /// Bytes of room there were.
        room: u64,
    },
    /// No run of free blocks is long enough right now.
    #[error("exchange arena full: {needed} contiguous blocks needed, {free} free in total")]
    Full {
        /// Contiguous blocks the allocation needs.
        needed: u32,
        /// Free blocks in total.
        free: u32,
    },
}

/// Why a stage-context field access was refused. Nothing was written; the field keeps its
/// previous value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldError {
    /// The value is longer than the field's capacity (fixed when the segment was created).
    #[error("value of {len} bytes exceeds the {capacity}-byte capacity of stage field {field}")]
    TooLarge {
        /// The field (or config field) concerned.
        field: &'static str,
        /// Length in bytes.
        len: usize,
        /// The field's capacity in bytes.
        capacity: usize,
    },
    /// Another writer is writing this field right now (writers of one field serialise through
    /// the stage lock; this refuses one that did not), or a reader found no stable copy.
    #[error("stage field {field} is being written by another process")]
    Busy {
        /// The field (or config field) concerned.
        field: &'static str,
    },
}

/// Failures of `hearth-ipc` outside the publish hot path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IpcError {
    /// A [`RingConfig`](crate::RingConfig) value is out of range.
    #[error("invalid event ring config: {field} = {value}: {rule}")]
    InvalidConfig {
        /// The field (or config field) concerned.
        field: &'static str,
        /// The value given.
        value: u64,
        /// The rule it broke.
        rule: &'static str,
    },
    /// The region for a ring could not be allocated.
    #[error("could not allocate {len} bytes for an event ring")]
    OutOfMemory {
        /// Length in bytes.
        len: usize,
    },
    /// A region handed to `init_in`/`attach` is too small, misaligned, or its header describes a
    /// layout that does not fit inside it.
    #[error("event ring region rejected: {reason}")]
    BadRegion {
        /// Which bound it broke.
        reason: &'static str,
    },
    /// The region does not start with the event ring magic (not a ring, or not initialised yet).
    #[error("event ring region has magic {found:#010x}, expected {expected:#010x}")]
    BadMagic {
        /// The magic found.
        found: u32,
        /// The magic this build expects.
        expected: u32,
    },
    /// The region was laid out by a build with another layout version.
    #[error("event ring region has layout version {found}, this build reads version {expected}")]
    BadVersion {
        /// The version found.
        found: u32,
        /// The layout version this build reads.
        expected: u32,
    },
    /// An event payload is not a valid JSON envelope.
    #[error("malformed event envelope: {0}")]
    Envelope(#[from] serde_json::Error),
    /// A system call on a segment, mapping or doorbell failed.
    #[error("{op} failed: {source}")]
    Os {
        /// The operation that failed.
        op: &'static str,
        /// The OS error.
        source: nix::errno::Errno,
    },
    /// An fd handed over as a doorbell is not an eventfd.
    #[error("fd {fd} is not an eventfd doorbell (it is {found})")]
    NotADoorbell {
        /// The fd number.
        fd: i32,
        /// What the fd is instead.
        found: String,
    },
    /// A shared segment (or one of its areas) failed validation on attach, or a
    /// [`SegmentConfig`](crate::SegmentConfig) cannot be laid out.
    #[error("shared segment rejected: {area}: {reason}")]
    BadSegment {
        /// The part of the segment refused.
        area: &'static str,
        /// Which bound it broke.
        reason: String,
    },
    /// An exchange-arena reference or allocation was refused.
    #[error(transparent)]
    Arena(#[from] ArenaError),
    /// A stage-context field access was refused.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// A stage-context field's value does not have its field's form (a text field holding a
    /// number, bytes that are not UTF-8 or not JSON).
    #[error("stage field {field}: {reason}")]
    FieldValue {
        /// The field concerned.
        field: &'static str,
        /// What is wrong with the value.
        reason: String,
    },
}
