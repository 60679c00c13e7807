//! The segment's first 128 bytes: what is where, written once by the kernel.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::IpcError;

/// "UMSR" read big-endian, as in the original's unified region; bytes `52 53 4D 55` in memory.
pub(crate) const MAGIC: u32 = 0x554D_5352;
/// Version 2: the original's unified region was 1 (64-byte superblock, u32 offsets).
pub(crate) const VERSION: u32 = 2;
pub(crate) const SUPERBLOCK_LEN: usize = 128;
/// Every area starts on a page, so each can be reasoned about (and mapped) on its own.
pub(crate) const AREA_ALIGN: usize = 4096;

crate::shm_layout! {
/// The superblock (128 bytes at offset 0). The magic is stored last (Release), so a peer that
/// sees it sees every other field.
pub(crate) struct Superblock {
    pub magic: AtomicU32,          // 0
    pub version: AtomicU32,        // 4
    /// Identity of the kernel instance that laid the segment out (non-zero).
    pub generation: AtomicU64,     // 8
    pub total_len: AtomicU64,      // 16
    pub context_offset: AtomicU64, // 24
    pub context_len: AtomicU64,    // 32
    pub ring_offset: AtomicU64,    // 40
    pub ring_len: AtomicU64,       // 48
    pub arena_offset: AtomicU64,   // 56
    pub arena_len: AtomicU64,      // 64
    /// Process id of the creating kernel.
    pub kernel_pid: AtomicU32,     // 72
    _reserved0: u32,               // 76
    _reserved1: [u64; 6],          // 80..128
}
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<Superblock>() == SUPERBLOCK_LEN);
    assert!(offset_of!(Superblock, generation) == 8);
    assert!(offset_of!(Superblock, context_offset) == 24);
    assert!(offset_of!(Superblock, arena_len) == 64);
    assert!(offset_of!(Superblock, kernel_pid) == 72);
};

/// One area of the segment: `offset..offset + len` from the segment start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Area {
    pub offset: usize,
    pub len: usize,
}

impl Area {
    pub(crate) fn end(&self) -> usize {
        self.offset + self.len
    }
}

/// Where the three areas lie, as recorded in (or about to be written to) the superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub total_len: usize,
    pub context: Area,
    pub ring: Area,
    pub arena: Area,
}

pub(crate) const fn page_round(len: usize) -> usize {
    len.div_ceil(AREA_ALIGN) * AREA_ALIGN
}

impl Geometry {
    /// Lay three areas of the given byte lengths out after the superblock, each page-aligned.
    pub(crate) fn plan(context: usize, ring: usize, arena: usize) -> Geometry {
        let context = Area {
            offset: AREA_ALIGN,
            len: page_round(context),
        };
        let ring = Area {
            offset: context.end(),
            len: page_round(ring),
        };
        let arena = Area {
            offset: ring.end(),
            len: page_round(arena),
        };
        Geometry {
            total_len: arena.end(),
            context,
            ring,
            arena,
        }
    }
}

fn bad(reason: String) -> IpcError {
    IpcError::BadSegment {
        area: "superblock",
        reason,
    }
}

impl Superblock {
    pub(crate) fn write(&self, geometry: &Geometry, generation: u64) {
        let store = |field: &AtomicU64, value: usize| field.store(value as u64, Ordering::Relaxed);
        self.version.store(VERSION, Ordering::Relaxed);
        self.generation.store(generation, Ordering::Relaxed);
        store(&self.total_len, geometry.total_len);
        store(&self.context_offset, geometry.context.offset);
        store(&self.context_len, geometry.context.len);
        store(&self.ring_offset, geometry.ring.offset);
        store(&self.ring_len, geometry.ring.len);
        store(&self.arena_offset, geometry.arena.offset);
        store(&self.arena_len, geometry.arena.len);
        self.kernel_pid.store(std::process::id(), Ordering::Relaxed);
        // SYNC: pairs with the Acquire load of `magic` in `Superblock::read`.
        self.magic.store(MAGIC, Ordering::Release);
    }

    /// Validate the superblock of a file of `file_len` bytes and return its geometry and
    /// generation. Read once: later scribbles on the superblock cannot move any access.
    pub(crate) fn read(&self, file_len: usize) -> Result<(Geometry, u64), IpcError> {
        // SYNC: pairs with the Release store of `magic` in `Superblock::write`.
        let magic = self.magic.load(Ordering::Acquire);
        if magic != MAGIC {
            return Err(bad(format!("magic {magic:#010x}, expected {MAGIC:#010x}")));
        }
        let version = self.version.load(Ordering::Relaxed);
        if version != VERSION {
            return Err(bad(format!(
                "layout version {version}, this build reads version {VERSION}"
            )));
        }
        let generation = self.generation.load(Ordering::Relaxed);
        if generation == 0 {
            return Err(bad("generation 0 (never initialised)".into()));
        }
        let load = |field: &AtomicU64| usize::try_from(field.load(Ordering::Relaxed));
        let total_len = load(&self.total_len).unwrap_or(usize::MAX);
        if total_len != file_len {
            return Err(bad(format!(
                "records {total_len} bytes but the file has {file_len}"
            )));
        }
        let area = |name: &str, offset: &AtomicU64, len: &AtomicU64| -> Result<Area, IpcError> {
            let (Ok(offset), Ok(len)) = (load(offset), load(len)) else {
                return Err(bad(format!("{name} area does not fit this address space")));
            };
            let fits = offset.checked_add(len).is_some_and(|end| end <= total_len);
            if !fits || offset < SUPERBLOCK_LEN || !offset.is_multiple_of(AREA_ALIGN) || len == 0 {
                return Err(bad(format!(
                    "{name} area at {offset} of {len} bytes is not a page-aligned, non-empty \
                     range after the superblock inside the {total_len}-byte segment"
                )));
            }
            Ok(Area { offset, len })
        };
        let geometry = Geometry {
            total_len,
            context: area("context", &self.context_offset, &self.context_len)?,
            ring: area("ring", &self.ring_offset, &self.ring_len)?,
            arena: area("arena", &self.arena_offset, &self.arena_len)?,
        };
        if geometry.context.end() > geometry.ring.offset
            || geometry.ring.end() > geometry.arena.offset
        {
            return Err(bad("areas overlap or are out of order".into()));
        }
        Ok((geometry, generation))
    }
}
