//! The ring's in-region layout. `ipc/DESIGN.md` documents it byte by byte; the `const`
//! assertions below keep this file and that document honest.
//!
//! Everything here may live in memory mapped by another process, so: `#[repr(C)]`, fixed-size
//! integers only (all accessed atomically once the region is shared), no pointers, and every
//! cross-reference is a byte offset from the region start. Integers are little-endian because
//! the atomics are native-endian and Hearth only builds for little-endian targets (see the
//! `compile_error!` in `lib.rs`).

#[cfg(not(loom))]
use crate::IpcError;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

use super::RingConfig;

/// The original kernel's magic, `0x48455654` ("HEVT" read big-endian); in memory, as a
/// little-endian u32, its bytes are `54 56 45 48`.
pub(crate) const MAGIC: u32 = 0x4845_5654;
/// Layout version 3: the original's was 1 (append-only payload arena, 20-byte header); 2 had a
/// reserved slot word where 3 keeps the stream tag, and no eventfd-parked counter.
pub(crate) const LAYOUT_VERSION: u32 = 3;
pub(crate) const HEADER_LEN: usize = 256;
pub(crate) const SLOT_LEN: usize = 32;
/// A slot stamp of 0 means "never written, or being rewritten right now"; a published event
/// `seq` is stamped `seq + 1`, so a zero-filled region is a valid empty ring.
pub(crate) const BUSY_STAMP: u64 = 0;

crate::shm_layout! {
/// The region header (256 bytes). Line 0 is written once at init; line 1 only by the
/// publisher; line 2 by parking readers, so parking never bounces the publisher's line.
pub(crate) struct Header {
    pub magic: AtomicU32,            // 0
    pub version: AtomicU32,          // 4
    pub region_len: AtomicU64,       // 8
    pub slot_count: AtomicU32,       // 16
    pub slot_len: AtomicU32,         // 20
    pub slots_offset: AtomicU32,     // 24
    pub payload_offset: AtomicU32,   // 28
    pub payload_capacity: AtomicU32, // 32
    pub max_event_len: AtomicU32,    // 36
    _reserved0: [u64; 3],            // 40..64
    /// Number of events published; the next event gets this sequence number.
    pub write_seq: AtomicU64, // 64
    /// Payload byte cursor: end of the newest payload *reservation* (moved before its bytes
    /// are written), monotonically increasing, taken modulo the payload capacity.
    pub payload_head: AtomicU64, // 72
    _reserved1: [u64; 6],            // 80..128
    /// Futex word; bumped by the publisher before each wake.
    pub wake_epoch: AtomicU32, // 128
    /// Readers currently parked (or about to park) on `wake_epoch`.
    pub parked: AtomicU32, // 132
    /// Non-zero once the publisher is gone: no event will follow `write_seq`.
    pub closed: AtomicU32, // 136
    /// Readers currently sleeping (or about to sleep) on an eventfd doorbell.
    pub bell_parked: AtomicU32, // 140
    _reserved2: [u32; 28],           // 144..256
}
}

crate::shm_layout! {
/// One event's slot (32 bytes).
pub(crate) struct Slot {
    /// `seq + 1` of the event it holds, or [`BUSY_STAMP`].
    pub stamp: AtomicU64, // 0
    /// Low 32 bits: kind code; high 32 bits: payload length. In memory (little-endian) that is
    /// `kind u32` at byte 8 and `len u32` at byte 12; one atomic keeps them consistent.
    pub meta: AtomicU64, // 8
    /// Absolute payload byte cursor of the first payload byte (a multiple of 8).
    pub pos: AtomicU64, // 16
    /// Stream tag of the event (0 = untagged), written before the stamp's release store so
    /// a reader filters on one load, before copying the payload.
    pub tag: AtomicU64, // 24
}
}

#[cfg(not(loom))]
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<Header>() == HEADER_LEN);
    assert!(align_of::<Header>() == 8);
    assert!(offset_of!(Header, region_len) == 8);
    assert!(offset_of!(Header, slot_count) == 16);
    assert!(offset_of!(Header, max_event_len) == 36);
    assert!(offset_of!(Header, write_seq) == 64);
    assert!(offset_of!(Header, payload_head) == 72);
    assert!(offset_of!(Header, wake_epoch) == 128);
    assert!(offset_of!(Header, parked) == 132);
    assert!(offset_of!(Header, closed) == 136);
    assert!(offset_of!(Header, bell_parked) == 140);
    assert!(size_of::<Slot>() == SLOT_LEN);
    assert!(offset_of!(Slot, meta) == 8);
    assert!(offset_of!(Slot, pos) == 16);
    assert!(offset_of!(Slot, tag) == 24);
    // A payload word must be exactly 8 bytes for the word-granular copy.
    assert!(size_of::<AtomicU64>() == 8 && align_of::<AtomicU64>() == 8);
};

#[inline]
pub(crate) const fn pack_meta(code: u32, len: u32) -> u64 {
    (code as u64) | ((len as u64) << 32)
}

#[inline]
pub(crate) const fn unpack_meta(meta: u64) -> (u32, u32) {
    (meta as u32, (meta >> 32) as u32)
}

/// Bytes a payload of `len` occupies in the payload area (8-byte aligned, so each word
/// belongs to exactly one event and is written whole).
#[inline]
pub(crate) const fn padded_len(len: usize) -> usize {
    (len + 7) & !7
}

impl Header {
    /// Record the geometry. The magic is stored last so a process attaching concurrently
    /// either sees no magic or a complete header.
    pub(crate) fn init(&self, config: &RingConfig, region_len: usize) {
        self.version.store(LAYOUT_VERSION, Ordering::Relaxed);
        self.region_len.store(region_len as u64, Ordering::Relaxed);
        self.slot_count.store(config.slot_count, Ordering::Relaxed);
        self.slot_len.store(SLOT_LEN as u32, Ordering::Relaxed);
        self.slots_offset
            .store(config.slots_offset() as u32, Ordering::Relaxed);
        self.payload_offset
            .store(config.payload_offset() as u32, Ordering::Relaxed);
        self.payload_capacity
            .store(config.payload_capacity, Ordering::Relaxed);
        self.max_event_len
            .store(config.max_event_len, Ordering::Relaxed);
        self.write_seq.store(0, Ordering::Relaxed);
        self.payload_head.store(0, Ordering::Relaxed);
        self.wake_epoch.store(0, Ordering::Relaxed);
        self.parked.store(0, Ordering::Relaxed);
        self.closed.store(0, Ordering::Relaxed);
        self.bell_parked.store(0, Ordering::Relaxed);
        // SYNC: pairs with the Acquire load of `magic` in `Header::read_config`.
        self.magic.store(MAGIC, Ordering::Release);
    }

    /// Validate a header found in a mapping of `mapped_len` bytes and return its geometry.
    /// Values are read once here and cached by the caller, so a peer that scribbles on the
    /// header later can garble events but never move an access out of bounds.
    #[cfg(not(loom))]
    pub(crate) fn read_config(&self, mapped_len: usize) -> Result<RingConfig, IpcError> {
        // SYNC: pairs with the Release store of `magic` in `Header::init`.
        let magic = self.magic.load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(IpcError::BadMagic {
                found: magic,
                expected: MAGIC,
            });
        }
        let version = self.version.load(Ordering::Relaxed);
        if version != LAYOUT_VERSION {
            return Err(IpcError::BadVersion {
                found: version,
                expected: LAYOUT_VERSION,
            });
        }
        let config = RingConfig {
            slot_count: self.slot_count.load(Ordering::Relaxed),
            payload_capacity: self.payload_capacity.load(Ordering::Relaxed),
            max_event_len: self.max_event_len.load(Ordering::Relaxed),
        };
        let bad = |reason| Err(IpcError::BadRegion { reason });
        if config.validate().is_err() {
            return bad("header geometry is out of range");
        }
        if self.slot_len.load(Ordering::Relaxed) as usize != SLOT_LEN {
            return bad("header slot length is not 32");
        }
        if self.slots_offset.load(Ordering::Relaxed) as usize != config.slots_offset()
            || self.payload_offset.load(Ordering::Relaxed) as usize != config.payload_offset()
        {
            return bad("header offsets do not match its geometry");
        }
        let region_len = self.region_len.load(Ordering::Relaxed);
        let needed = config.payload_offset() as u64 + u64::from(config.payload_capacity);
        if region_len != needed {
            return bad("header region length does not match its geometry");
        }
        if region_len > mapped_len as u64 {
            return bad("header region length exceeds the mapped length");
        }
        Ok(config)
    }
}

#[cfg(loom)]
impl Header {
    /// Loom atomics are not plain integers, so under loom the storage is built, not mapped.
    pub(crate) fn zeroed() -> Header {
        Header {
            magic: AtomicU32::new(0),
            version: AtomicU32::new(0),
            region_len: AtomicU64::new(0),
            slot_count: AtomicU32::new(0),
            slot_len: AtomicU32::new(0),
            slots_offset: AtomicU32::new(0),
            payload_offset: AtomicU32::new(0),
            payload_capacity: AtomicU32::new(0),
            max_event_len: AtomicU32::new(0),
            _reserved0: [0; 3],
            write_seq: AtomicU64::new(0),
            payload_head: AtomicU64::new(0),
            _reserved1: [0; 6],
            wake_epoch: AtomicU32::new(0),
            parked: AtomicU32::new(0),
            closed: AtomicU32::new(0),
            bell_parked: AtomicU32::new(0),
            _reserved2: [0; 28],
        }
    }
}

#[cfg(loom)]
impl Slot {
    pub(crate) fn zeroed() -> Slot {
        Slot {
            stamp: AtomicU64::new(BUSY_STAMP),
            meta: AtomicU64::new(0),
            pos: AtomicU64::new(0),
            tag: AtomicU64::new(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_packs_kind_low_len_high() {
        let m = pack_meta(8, 300);
        assert_eq!(unpack_meta(m), (8, 300));
        // Little-endian memory image: kind at byte 0..4 of the word, len at 4..8.
        let bytes = m.to_le_bytes();
        assert_eq!(&bytes[..4], &8u32.to_le_bytes());
        assert_eq!(&bytes[4..], &300u32.to_le_bytes());
        assert_eq!(
            unpack_meta(pack_meta(u32::MAX, u32::MAX)),
            (u32::MAX, u32::MAX)
        );
    }

    #[test]
    fn padding_rounds_up_to_words() {
        assert_eq!(padded_len(0), 0);
        assert_eq!(padded_len(1), 8);
        assert_eq!(padded_len(8), 8);
        assert_eq!(padded_len(9), 16);
    }

    #[test]
    fn magic_spells_hevt_in_memory_order() {
        assert_eq!(&MAGIC.to_le_bytes(), b"TVEH");
        assert_eq!(&MAGIC.to_be_bytes(), b"HEVT");
    }
}
