//! Ownership of the ring's memory and typed access into it.
//!
//! Outside loom the ring is one contiguous region laid out as in `layout.rs`, either a
//! page-aligned heap allocation owned here or a caller's mapping (memfd, `MAP_SHARED`).
//! Under loom the same header, slots and payload words are separate heap objects, because
//! loom atomics carry model state and cannot be overlaid on raw bytes.

use crate::sync::AtomicU64;
use crate::{IpcError, words};

use super::RingConfig;
use super::layout::Header;
#[cfg(loom)]
use super::layout::Slot;
#[cfg(not(loom))]
use super::layout::{HEADER_LEN, Slot};

#[cfg(not(loom))]
use std::{alloc::Layout, ptr::NonNull};

/// Alignment of a heap-backed region: a page, like a mapping, so the layout behaves the same.
#[cfg(not(loom))]
const REGION_ALIGN: usize = 4096;

/// Whatever owns a mapping a ring lives in; dropped after the ring's last handle.
#[cfg(not(loom))]
pub(crate) type KeepAlive = std::sync::Arc<dyn Send + Sync>;

#[cfg(not(loom))]
enum Storage {
    /// Allocated by `Shared::new`, freed on drop.
    Heap(Layout),
    /// A caller's mapping, kept mapped by the caller while any handle lives, or by the owner
    /// held here (a shared segment's mapping, unmapped when its last handle drops).
    Mapped(#[allow(dead_code)] Option<KeepAlive>),
}

/// The memory of one ring plus the geometry cached from its header.
pub(crate) struct Shared {
    #[cfg(not(loom))]
    base: NonNull<u8>,
    #[cfg(not(loom))]
    storage: Storage,
    #[cfg(not(loom))]
    slots: NonNull<Slot>,
    #[cfg(not(loom))]
    words: NonNull<AtomicU64>,

    #[cfg(loom)]
    header: Header,
    #[cfg(loom)]
    slots: Box<[Slot]>,
    #[cfg(loom)]
    words: Box<[AtomicU64]>,

    config: RingConfig,
    slot_mask: u64,
    word_mask: u64,
    /// Futex calls must omit `FUTEX_PRIVATE_FLAG` when other processes map the region.
    process_shared: bool,
}

// SAFETY: the raw pointers point into memory owned by (or, for `Mapped`, kept alive for) this
// value; every access to that memory after initialisation goes through atomics, so sharing
// and sending `Shared` across threads is sound.
#[cfg(not(loom))]
unsafe impl Send for Shared {}
// SAFETY: see `Send` above; `&Shared` only hands out `&` to atomics.
#[cfg(not(loom))]
unsafe impl Sync for Shared {}

impl Shared {
    fn geometry(config: RingConfig) -> (u64, u64) {
        (
            u64::from(config.slot_count) - 1,
            u64::from(config.payload_capacity / 8) - 1,
        )
    }

    /// A fresh ring in a page-aligned, zeroed heap allocation owned by the ring.
    #[cfg(not(loom))]
    pub(crate) fn new(config: RingConfig) -> Result<Shared, IpcError> {
        let len = config.region_len()?;
        let layout = Layout::from_size_align(len, REGION_ALIGN)
            .map_err(|_| IpcError::OutOfMemory { len })?;
        // SAFETY: `layout` has a non-zero size (at least the 256-byte header).
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let base = NonNull::new(raw).ok_or(IpcError::OutOfMemory { len })?;
        // SAFETY: `base` is a fresh, zeroed, page-aligned allocation of `len` bytes that
        // nothing else can see yet; the header is initialised right after.
        let shared = unsafe { Shared::from_raw(base, Storage::Heap(layout), config, false) };
        shared.header().init(&config, len);
        Ok(shared)
    }

    #[cfg(loom)]
    pub(crate) fn new(config: RingConfig) -> Result<Shared, IpcError> {
        let len = config.region_len()?;
        let (slot_mask, word_mask) = Shared::geometry(config);
        let shared = Shared {
            header: Header::zeroed(),
            slots: (0..config.slot_count).map(|_| Slot::zeroed()).collect(),
            words: (0..config.payload_capacity / 8)
                .map(|_| AtomicU64::new(0))
                .collect(),
            config,
            slot_mask,
            word_mask,
            process_shared: false,
        };
        shared.header.init(&config, len);
        Ok(shared)
    }

    /// Lay a fresh ring out over a caller's mapping.
    ///
    /// # Safety
    /// `base..base+len` must be readable and writable, stay mapped for as long as any handle
    /// built from the result lives, and not be accessed by anyone else until this returns.
    #[cfg(not(loom))]
    pub(crate) unsafe fn init_in(
        base: NonNull<u8>,
        len: usize,
        config: RingConfig,
        keep: Option<KeepAlive>,
    ) -> Result<Shared, IpcError> {
        let needed = config.region_len()?;
        check_mapping(base)?;
        if len < needed {
            return Err(IpcError::BadRegion {
                reason: "mapping is shorter than the config's region length",
            });
        }
        // SAFETY: the caller gives us exclusive access to `len >= needed` writable bytes; zero
        // bytes are a valid value for every field (stamp 0 = empty slot).
        unsafe { base.as_ptr().write_bytes(0, needed) };
        // SAFETY: `base` is 8-aligned and covers `needed` bytes (checked above); the caller
        // keeps it mapped while handles live.
        let shared = unsafe { Shared::from_raw(base, Storage::Mapped(keep), config, true) };
        shared.header().init(&config, needed);
        Ok(shared)
    }

    /// Validate and adopt a ring someone else laid out.
    ///
    /// # Safety
    /// `base..base+len` must be readable and writable, stay mapped for as long as any handle
    /// built from the result lives, and hold (or have held) a ring initialised by
    /// [`Shared::init_in`] in this or another process. Mapped `MAP_SHARED` if that was
    /// another process.
    #[cfg(not(loom))]
    pub(crate) unsafe fn attach(
        base: NonNull<u8>,
        len: usize,
        keep: Option<KeepAlive>,
    ) -> Result<Shared, IpcError> {
        check_mapping(base)?;
        if len < HEADER_LEN {
            return Err(IpcError::BadRegion {
                reason: "mapping is shorter than the 256-byte header",
            });
        }
        // SAFETY: `base` is 8-aligned with at least HEADER_LEN readable bytes; the header is
        // all atomics and integers, for which any bit pattern is valid.
        let header = unsafe { base.cast::<Header>().as_ref() };
        let config = header.read_config(len)?;
        // SAFETY: `read_config` checked that the whole region lies within `len` bytes.
        Ok(unsafe { Shared::from_raw(base, Storage::Mapped(keep), config, true) })
    }

    /// # Safety
    /// `base` is 8-aligned and valid for `config.region_len()` bytes for the value's lifetime.
    #[cfg(not(loom))]
    unsafe fn from_raw(
        base: NonNull<u8>,
        storage: Storage,
        config: RingConfig,
        process_shared: bool,
    ) -> Shared {
        let (slot_mask, word_mask) = Shared::geometry(config);
        // SAFETY: both offsets lie inside the region (payload_offset + capacity == its length)
        // and are multiples of 8, so the casts are aligned.
        let (slots, words) = unsafe {
            (
                base.add(config.slots_offset()).cast::<Slot>(),
                base.add(config.payload_offset()).cast::<AtomicU64>(),
            )
        };
        Shared {
            base,
            storage,
            slots,
            words,
            config,
            slot_mask,
            word_mask,
            process_shared,
        }
    }

    #[inline]
    pub(crate) fn config(&self) -> &RingConfig {
        &self.config
    }

    #[inline]
    pub(crate) fn slot_count(&self) -> u64 {
        self.slot_mask + 1
    }

    #[inline]
    pub(crate) fn payload_capacity(&self) -> u64 {
        (self.word_mask + 1) * 8
    }

    #[inline]
    pub(crate) fn process_shared(&self) -> bool {
        self.process_shared
    }

    #[inline]
    pub(crate) fn header(&self) -> &Header {
        #[cfg(not(loom))]
        {
            // SAFETY: the region starts with an initialised, 8-aligned header and outlives `self`.
            unsafe { self.base.cast::<Header>().as_ref() }
        }
        #[cfg(loom)]
        {
            &self.header
        }
    }

    /// The slot that holds (or will hold) event `seq`.
    #[inline]
    pub(crate) fn slot(&self, seq: u64) -> &Slot {
        let index = (seq & self.slot_mask) as usize;
        #[cfg(not(loom))]
        {
            // SAFETY: `index < slot_count` by the mask, and the slot table holds `slot_count`
            // slots inside the region.
            unsafe { self.slots.add(index).as_ref() }
        }
        #[cfg(loom)]
        {
            &self.slots[index]
        }
    }

    /// The payload area as words.
    #[inline]
    fn words(&self) -> &[AtomicU64] {
        #[cfg(not(loom))]
        {
            // SAFETY: the payload area holds `word_mask + 1` initialised 8-byte words inside the
            // region, which outlives `self`; atomics may be shared by reference.
            unsafe {
                std::slice::from_raw_parts(self.words.as_ptr(), (self.word_mask + 1) as usize)
            }
        }
        #[cfg(loom)]
        {
            &self.words
        }
    }

    /// The two spans (before and after the wrap point) that `len` bytes starting at absolute
    /// byte cursor `pos` (a multiple of 8) occupy: (first word, words before the wrap, bytes
    /// before the wrap).
    #[inline]
    fn spans(&self, pos: u64, len: usize) -> (usize, usize, usize) {
        let first = ((pos / 8) & self.word_mask) as usize;
        let before = ((self.word_mask + 1) as usize - first).min(words::count(len));
        (first, before, (before * 8).min(len))
    }

    /// Store `payload` at absolute byte cursor `pos` (a multiple of 8), wrapping.
    ///
    /// Relaxed atomic word stores rather than a memcpy (see `words`): readers may copy these
    /// bytes while they are being overwritten, and detect it afterwards.
    #[inline]
    pub(crate) fn write_payload(&self, pos: u64, payload: &[u8]) {
        let all = self.words();
        let (first, before, split) = self.spans(pos, payload.len());
        words::store(&all[first..first + before], &payload[..split]);
        words::store(all, &payload[split..]);
    }

    /// Copy `len` bytes from absolute byte cursor `pos` into `buf` (replacing its contents).
    /// The copy may be torn; the caller validates it afterwards (see `Reader::read_slot`).
    #[inline]
    pub(crate) fn read_payload(&self, pos: u64, len: usize, buf: &mut Vec<u8>) {
        buf.clear();
        let all = self.words();
        let (first, before, split) = self.spans(pos, len);
        words::load(&all[first..first + before], split, buf);
        words::load(all, len - split, buf);
    }
}

#[cfg(not(loom))]
fn check_mapping(base: NonNull<u8>) -> Result<(), IpcError> {
    if base.as_ptr().align_offset(8) != 0 {
        return Err(IpcError::BadRegion {
            reason: "mapping is not 8-byte aligned",
        });
    }
    Ok(())
}

#[cfg(not(loom))]
impl Drop for Shared {
    fn drop(&mut self) {
        if let Storage::Heap(layout) = self.storage {
            // SAFETY: `base` came from `alloc_zeroed(layout)` in `Shared::new` and is freed
            // exactly once, here, when the last handle drops.
            unsafe { std::alloc::dealloc(self.base.as_ptr(), layout) };
        }
    }
}
