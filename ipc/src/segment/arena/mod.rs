//! The exchange arena: blocks for tool arguments and results, so large payloads never travel
//! through the control pipe.
//!
//! **Ownership.** The kernel allocates and frees; its allocation table lives in kernel memory,
//! out of every plugin's reach, and is what every reference a plugin hands back is checked
//! against ([`Arena::resolve`]). A plugin reads and writes only inside blocks issued to it, and
//! asks for more (an expansion block for a result that does not fit its frame) through the
//! control plane, which calls [`Arena::alloc`]. The kernel frees a block only once its call
//! finished or its owner exited ([`Arena::reclaim_owner`]), never under a running call.
//!
//! **References** are `(offset, len, generation, flags)`, 16 bytes ([`ArenaRef`]). Each free
//! bumps the block's generation (kernel table and shared header alike), so an old reference is
//! refused as stale, and the plugin side re-checks the generation after each copy (see
//! `generation`): a reference read while its block is recycled yields its own bytes or
//! `Stale`, never another call's data. Layout: `ipc/DESIGN.md` §2.3. The shared layouts and geometry are here; the kernel side is
//! `kernel.rs`, the plugin side `view.rs`, references and call frames `call_frame.rs`.
mod call_frame;
mod kernel;
mod view;

use std::sync::Arc;

use crate::sync::{AtomicU32, AtomicU64};
use crate::{ArenaError, IpcError};

use super::mapping::Mapping;
use super::superblock::page_round;

pub use call_frame::{ArenaRef, CallFrame};
pub use kernel::Arena;
pub use view::ArenaView;

/// "HARN" read big-endian.
const MAGIC: u32 = 0x4841_524E;
const VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
const BLOCK_HEADER_LEN: usize = 32;

/// Owner id of the kernel itself; plugin processes get ids from 1.
pub const KERNEL_OWNER: u32 = 0;

crate::shm_layout! {
/// The arena's header (64 bytes at the area start).
pub(super) struct ArenaHeader {
    magic: AtomicU32,        // 0
    version: AtomicU32,      // 4
    block_len: AtomicU32,    // 8
    block_count: AtomicU32,  // 12
    blocks_offset: AtomicU32, // 16
    data_offset: AtomicU32,  // 20
    _reserved: [u64; 5],     // 24..64
}
}

crate::shm_layout! {
/// The shared mirror of one block's state (32 bytes). Plugins may scribble on it; the kernel
/// never trusts it, it only lets a plugin validate references without a round trip.
pub(super) struct BlockHeader {
    /// Generation of the allocation that starts at this block (bumped on alloc and free).
    generation: AtomicU32, // 0
    /// Blocks in that allocation (0 if no allocation starts here).
    run: AtomicU32,        // 4
    /// Owner id of the allocation.
    owner: AtomicU32,      // 8
    _reserved0: u32,       // 12
    /// Completion word of a frame: `generation << 32 | result_len` once the plugin finished
    /// writing its result, 0 before.
    done: AtomicU64,       // 16
    _reserved1: u64,       // 24
}
}

const _: () = {
    assert!(std::mem::size_of::<ArenaHeader>() == HEADER_LEN);
    assert!(std::mem::size_of::<BlockHeader>() == BLOCK_HEADER_LEN);
};

/// Geometry of the exchange arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArenaConfig {
    /// Bytes per block (a power of two, 64 .. 16 MiB). An allocation is a run of blocks.
    pub block_len: u32,
    /// Number of blocks (1 .. 2^20).
    pub block_count: u32,
}

impl Default for ArenaConfig {
    /// 512 blocks of 16 KiB: 8 MiB, so a 1 MiB result and dozens of 64 KiB frames fit at once.
    /// The memfd's pages are only backed once touched.
    fn default() -> Self {
        ArenaConfig {
            block_len: 16 * 1024,
            block_count: 512,
        }
    }
}

impl ArenaConfig {
    fn validate(&self) -> Result<(), IpcError> {
        let invalid = |field, value: u32, rule| {
            Err(IpcError::InvalidConfig {
                field,
                value: u64::from(value),
                rule,
            })
        };
        if !self.block_len.is_power_of_two() || !(64..=1 << 24).contains(&self.block_len) {
            return invalid(
                "arena.block_len",
                self.block_len,
                "must be a power of two in 64..=16777216",
            );
        }
        if !(1..=1 << 20).contains(&self.block_count) {
            return invalid(
                "arena.block_count",
                self.block_count,
                "must be in 1..=1048576",
            );
        }
        Ok(())
    }

    fn data_offset(&self) -> usize {
        page_round(HEADER_LEN + BLOCK_HEADER_LEN * self.block_count as usize)
    }

    /// Bytes the arena area needs.
    pub(crate) fn area_len(&self) -> Result<usize, IpcError> {
        self.validate()?;
        Ok(self.data_offset() + self.block_len as usize * self.block_count as usize)
    }
}

/// Typed access to the arena area, shared by both sides.
#[derive(Clone)]
struct ArenaArea {
    map: Arc<Mapping>,
    /// Area offset from the segment start.
    area: usize,
    config: ArenaConfig,
    data_offset: usize,
}

impl ArenaArea {
    fn header(&self) -> &ArenaHeader {
        self.map.at(self.area)
    }

    fn block(&self, index: usize) -> &BlockHeader {
        debug_assert!(index < self.config.block_count as usize);
        self.map
            .at(self.area + HEADER_LEN + BLOCK_HEADER_LEN * index)
    }

    /// The words of blocks `first .. first + run`.
    fn words(&self, first: usize, run: usize) -> &[AtomicU64] {
        debug_assert!(first + run <= self.config.block_count as usize);
        let block_len = self.config.block_len as usize;
        self.map.words(
            self.area + self.data_offset + first * block_len,
            run * block_len / 8,
        )
    }

    /// Absolute segment offset of block `index`.
    fn offset_of(&self, index: usize) -> u32 {
        (self.area + self.data_offset + index * self.config.block_len as usize) as u32
    }

    /// The block a reference's offset names, if it names the start of one.
    fn index_of(&self, r: &ArenaRef) -> Result<usize, ArenaError> {
        let oob = |reason| ArenaError::OutOfBounds {
            offset: r.offset,
            len: r.len,
            reason,
        };
        let start = self.area + self.data_offset;
        let rel = (r.offset as usize)
            .checked_sub(start)
            .ok_or(oob("before the arena's blocks"))?;
        let block_len = self.config.block_len as usize;
        if !rel.is_multiple_of(block_len) {
            return Err(oob("not at a block start"));
        }
        let index = rel / block_len;
        if index >= self.config.block_count as usize {
            return Err(oob("past the arena's last block"));
        }
        Ok(index)
    }

    /// Check `at..at + len` against `room` bytes and return the word range to touch.
    fn span(r: &ArenaRef, at: u32, len: usize, room: usize) -> Result<usize, ArenaError> {
        if !at.is_multiple_of(8) {
            return Err(ArenaError::OutOfBounds {
                offset: r.offset,
                len: r.len,
                reason: "access offset inside the block is not a multiple of 8",
            });
        }
        let end = at as usize + len;
        if end > room {
            return Err(ArenaError::TooLarge {
                len: len as u64,
                room: room.saturating_sub(at as usize) as u64,
            });
        }
        Ok(at as usize / 8)
    }
}
