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
//! `Stale`, never another call's data. Layout: `ipc/DESIGN.md` §2.3.

use std::sync::Arc;

use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::{ArenaError, IpcError, generation, words};

use super::check_header;
use super::mapping::Mapping;
use super::superblock::page_round;

/// "HARN" read big-endian.
const MAGIC: u32 = 0x4841_524E;
const VERSION: u32 = 1;
const HEADER_LEN: usize = 64;
const BLOCK_HEADER_LEN: usize = 32;

/// Owner id of the kernel itself; plugin processes get ids from 1.
pub const KERNEL_OWNER: u32 = 0;

crate::shm_layout! {
/// The arena's header (64 bytes at the area start).
struct ArenaHeader {
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
struct BlockHeader {
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

crate::shm_layout! {
/// A reference to bytes in the exchange arena: what travels in a ring event or an RPC frame
/// instead of the bytes themselves. The original's `SharedRef`, 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ArenaRef {
    /// Byte offset from the segment start (not the arena start) of the first block.
    pub offset: u32,
    /// Bytes referenced, from `offset`.
    pub len: u32,
    /// Generation of the block when the reference was made.
    pub generation: u32,
    /// [`ArenaRef::BINARY`], [`ArenaRef::JSON`], [`ArenaRef::EXPAND`].
    pub flags: u32,
}
}

impl ArenaRef {
    /// The bytes are opaque binary.
    pub const BINARY: u32 = 1;
    /// The bytes are JSON.
    pub const JSON: u32 = 1 << 1;
    /// An expansion block holding a result too large for its frame; the kernel frees it
    /// separately from the frame.
    pub const EXPAND: u32 = 1 << 2;

    /// The same block, flagged.
    pub fn with_flags(self, flags: u32) -> ArenaRef {
        ArenaRef { flags, ..self }
    }

    /// The first `len` bytes of the same allocation (e.g. a result inside its frame).
    pub fn prefix(self, len: u32) -> ArenaRef {
        ArenaRef { len, ..self }
    }
}

/// A tool call's frame as the kernel hands it to a plugin: the argument bytes at 0 and room
/// for the result from [`result_offset`](Self::result_offset) to the frame's end. When it
/// travels in a ring event it is [`ENCODED_LEN`](Self::ENCODED_LEN) little-endian bytes: the
/// reference's four words, then `args_len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CallFrame {
    /// The whole frame.
    pub frame: ArenaRef,
    /// Bytes of arguments at its start.
    pub args_len: u32,
}

impl CallFrame {
    /// Bytes of the encoded form.
    pub const ENCODED_LEN: usize = 20;

    /// Where the result starts: the first word boundary after the arguments.
    pub fn result_offset(&self) -> u32 {
        self.args_len.next_multiple_of(8)
    }

    /// Bytes of room for the result.
    pub fn result_room(&self) -> u32 {
        self.frame.len.saturating_sub(self.result_offset())
    }

    /// The encoded form (for a ring event's payload).
    pub fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let r = self.frame;
        let mut bytes = [0u8; Self::ENCODED_LEN];
        for (chunk, word) in
            bytes
                .chunks_exact_mut(4)
                .zip([r.offset, r.len, r.generation, r.flags, self.args_len])
        {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        bytes
    }

    /// Decode the first [`ENCODED_LEN`](Self::ENCODED_LEN) bytes; `None` if there are fewer.
    /// The result is only a claim: every access through it is checked.
    pub fn decode(bytes: &[u8]) -> Option<CallFrame> {
        let word = |i: usize| {
            let chunk = bytes.get(i * 4..i * 4 + 4)?;
            Some(u32::from_le_bytes(chunk.try_into().ok()?))
        };
        Some(CallFrame {
            frame: ArenaRef {
                offset: word(0)?,
                len: word(1)?,
                generation: word(2)?,
                flags: word(3)?,
            },
            args_len: word(4)?,
        })
    }
}

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

/// One allocation as the kernel records it (never in shared memory).
#[derive(Debug, Clone, Copy)]
struct BlockState {
    /// Generation of the current (or last) allocation starting here; never 0 once issued.
    generation: u32,
    /// Blocks in the allocation starting here; 0 if free or inside another run.
    run: u32,
    owner: u32,
    /// Part of a live allocation (head or not).
    used: bool,
}

/// The kernel side of the exchange arena: the allocator and the authoritative checks.
pub struct Arena {
    area: ArenaArea,
    states: Vec<BlockState>,
}

/// A reference resolved against the kernel's table.
#[derive(Debug, Clone, Copy)]
struct Live {
    index: usize,
    run: usize,
}

impl Arena {
    pub(crate) fn init(map: Arc<Mapping>, area: usize, config: ArenaConfig) -> Arena {
        let area = ArenaArea {
            map,
            area,
            config,
            data_offset: config.data_offset(),
        };
        let header = area.header();
        header.block_len.store(config.block_len, Ordering::Relaxed);
        header
            .block_count
            .store(config.block_count, Ordering::Relaxed);
        header
            .blocks_offset
            .store(HEADER_LEN as u32, Ordering::Relaxed);
        header
            .data_offset
            .store(area.data_offset as u32, Ordering::Relaxed);
        header.version.store(VERSION, Ordering::Relaxed);
        // SYNC: pairs with the Acquire load of `magic` in `ArenaView::attach`.
        header.magic.store(MAGIC, Ordering::Release);
        let states = vec![
            BlockState {
                generation: 0,
                run: 0,
                owner: KERNEL_OWNER,
                used: false,
            };
            config.block_count as usize
        ];
        Arena { area, states }
    }

    /// The arena's geometry.
    pub fn config(&self) -> ArenaConfig {
        self.area.config
    }

    /// Blocks not part of any allocation.
    pub fn free_blocks(&self) -> u32 {
        self.states.iter().filter(|s| !s.used).count() as u32
    }

    /// Allocate room for `len` bytes on behalf of `owner` (first fit over whole blocks).
    ///
    /// # Errors
    /// [`ArenaError::TooLarge`] if `len` exceeds the whole arena; [`ArenaError::Full`] if no
    /// run of free blocks is long enough now.
    pub fn alloc(&mut self, len: u32, owner: u32) -> Result<ArenaRef, ArenaError> {
        let config = self.area.config;
        let total = u64::from(config.block_len) * u64::from(config.block_count);
        if u64::from(len) > total {
            return Err(ArenaError::TooLarge {
                len: u64::from(len),
                room: total,
            });
        }
        let needed = (len as usize).div_ceil(config.block_len as usize).max(1);
        let mut start = 0;
        let mut found = None;
        for (i, state) in self.states.iter().enumerate() {
            if state.used {
                start = i + 1;
            } else if i + 1 - start == needed {
                found = Some(start);
                break;
            }
        }
        let Some(first) = found else {
            return Err(ArenaError::Full {
                needed: needed as u32,
                free: self.free_blocks(),
            });
        };
        for state in &mut self.states[first..first + needed] {
            state.used = true;
        }
        let head = &mut self.states[first];
        // Generations skip 0, which no reference ever carries.
        head.generation = head.generation.wrapping_add(1).max(1);
        head.run = needed as u32;
        head.owner = owner;
        let generation = head.generation;
        let shared = self.area.block(first);
        shared.run.store(needed as u32, Ordering::Relaxed);
        shared.owner.store(owner, Ordering::Relaxed);
        shared.done.store(0, Ordering::Relaxed);
        generation::bump(&shared.generation, generation);
        Ok(ArenaRef {
            offset: self.area.offset_of(first),
            len,
            generation,
            flags: 0,
        })
    }

    /// Allocate a call frame for `owner`: `args` written at its start, `room` bytes for the
    /// result after them.
    pub fn alloc_call(
        &mut self,
        args: &[u8],
        room: u32,
        owner: u32,
    ) -> Result<CallFrame, ArenaError> {
        let too_large = ArenaError::TooLarge {
            len: args.len() as u64 + u64::from(room),
            room: u64::from(u32::MAX),
        };
        let args_len = u32::try_from(args.len()).map_err(|_| too_large)?;
        let call = CallFrame {
            frame: ArenaRef {
                offset: 0,
                len: 0,
                generation: 0,
                flags: 0,
            },
            args_len,
        };
        let len = call.result_offset().checked_add(room).ok_or(too_large)?;
        let frame = self.alloc(len, owner)?;
        self.write(&frame, owner, 0, args)?;
        Ok(CallFrame { frame, ..call })
    }

    /// The result of `call` if the plugin has completed it: copied into `buf` (replacing its
    /// contents) and `Ok(true)`; `Ok(false)` while it is pending.
    pub fn call_result(
        &self,
        call: &CallFrame,
        owner: u32,
        buf: &mut Vec<u8>,
    ) -> Result<bool, ArenaError> {
        buf.clear();
        let Some(len) = self.completion(&call.frame, owner)? else {
            return Ok(false);
        };
        let at = call.result_offset();
        if u64::from(len) > u64::from(call.result_room()) {
            return Err(ArenaError::OutOfBounds {
                offset: call.frame.offset,
                len,
                reason: "announced result is longer than the frame's room",
            });
        }
        let live = self.live(&call.frame, owner)?;
        let words = &self.area.words(live.index, live.run)[at as usize / 8..];
        words::load(words, len as usize, buf);
        Ok(true)
    }

    /// Check a reference handed back by `owner` against the kernel's own table: it must name
    /// the start of a live allocation of that owner, at its current generation, and not run
    /// past its end. This is what makes a forged reference harmless.
    pub fn resolve(&self, r: &ArenaRef, owner: u32) -> Result<(), ArenaError> {
        self.live(r, owner).map(|_| ())
    }

    fn live(&self, r: &ArenaRef, owner: u32) -> Result<Live, ArenaError> {
        let index = self.area.index_of(r)?;
        let state = self.states[index];
        if state.run == 0 || state.generation != r.generation {
            return Err(ArenaError::Stale {
                expected: r.generation,
                found: state.generation,
            });
        }
        if state.owner != owner {
            return Err(ArenaError::NotOwner {
                owner,
                holder: state.owner,
            });
        }
        let run = state.run as usize;
        if r.len as usize > run * self.area.config.block_len as usize {
            return Err(ArenaError::OutOfBounds {
                offset: r.offset,
                len: r.len,
                reason: "runs past the end of its allocation",
            });
        }
        Ok(Live { index, run })
    }

    /// Write `bytes` at byte `at` (a multiple of 8) of `owner`'s allocation `r`.
    pub fn write(&self, r: &ArenaRef, owner: u32, at: u32, bytes: &[u8]) -> Result<(), ArenaError> {
        let live = self.live(r, owner)?;
        let room = r.len as usize;
        let first = ArenaArea::span(r, at, bytes.len(), room)?;
        words::store(&self.area.words(live.index, live.run)[first..], bytes);
        Ok(())
    }

    /// Copy the `r.len` bytes `r` names into `buf` (replacing its contents), after checking
    /// `r` against the kernel's table for `owner`. The plugin may still be scribbling on the
    /// bytes (its bug); the copy is then garbage, never out of bounds.
    pub fn read(&self, r: &ArenaRef, owner: u32, buf: &mut Vec<u8>) -> Result<(), ArenaError> {
        buf.clear();
        let live = self.live(r, owner)?;
        words::load(self.area.words(live.index, live.run), r.len as usize, buf);
        Ok(())
    }

    /// The completion word of frame `r`: the result length the plugin announced, once it has,
    /// checked against the frame (a forged length beyond it is refused, not trusted).
    pub fn completion(&self, r: &ArenaRef, owner: u32) -> Result<Option<u32>, ArenaError> {
        let live = self.live(r, owner)?;
        // SYNC: pairs with the Release store of `done` in `ArenaView::complete`: the result
        // bytes written before it are visible once it is.
        let done = self.area.block(live.index).done.load(Ordering::Acquire);
        if done >> 32 != u64::from(r.generation) {
            return Ok(None);
        }
        let len = done as u32;
        if len > r.len {
            return Err(ArenaError::OutOfBounds {
                offset: r.offset,
                len,
                reason: "announced result is longer than its frame",
            });
        }
        Ok(Some(len))
    }

    /// Free `owner`'s allocation `r`; its generation is bumped, so every copy of `r` turns
    /// stale. A double free is refused as stale.
    pub fn free(&mut self, r: &ArenaRef, owner: u32) -> Result<(), ArenaError> {
        let live = self.live(r, owner)?;
        self.release(live.index);
        Ok(())
    }

    /// Free everything `owner` holds (its process exited); returns the allocations freed.
    pub fn reclaim_owner(&mut self, owner: u32) -> u32 {
        let heads: Vec<usize> = (0..self.states.len())
            .filter(|&i| self.states[i].run != 0 && self.states[i].owner == owner)
            .collect();
        for &index in &heads {
            self.release(index);
        }
        heads.len() as u32
    }

    fn release(&mut self, index: usize) {
        let run = self.states[index].run as usize;
        for state in &mut self.states[index..index + run] {
            state.used = false;
        }
        let head = &mut self.states[index];
        head.run = 0;
        head.generation = head.generation.wrapping_add(1).max(1);
        let shared = self.area.block(index);
        shared.run.store(0, Ordering::Relaxed);
        generation::bump(&shared.generation, head.generation);
    }
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Arena")
            .field("config", &self.area.config)
            .field("free_blocks", &self.free_blocks())
            .finish()
    }
}

/// The plugin side of the exchange arena: reads and writes inside issued blocks, each access
/// bounds- and generation-checked against the shared headers.
#[derive(Clone)]
pub struct ArenaView {
    area: ArenaArea,
}

fn bad(reason: String) -> IpcError {
    IpcError::BadSegment {
        area: "exchange arena",
        reason,
    }
}

impl ArenaView {
    pub(crate) fn attach(
        map: Arc<Mapping>,
        area: usize,
        len: usize,
    ) -> Result<ArenaView, IpcError> {
        if len < HEADER_LEN {
            return Err(bad(format!("{len} bytes cannot hold the arena header")));
        }
        let probe = ArenaArea {
            map,
            area,
            config: ArenaConfig {
                block_len: 0,
                block_count: 0,
            },
            data_offset: 0,
        };
        let header = probe.header();
        // SYNC: `check_header`'s Acquire load of `magic` pairs with its Release store in
        // `Arena::init`.
        check_header(&header.magic, &header.version, MAGIC, VERSION).map_err(bad)?;
        let config = ArenaConfig {
            block_len: header.block_len.load(Ordering::Relaxed),
            block_count: header.block_count.load(Ordering::Relaxed),
        };
        let needed = config
            .area_len()
            .map_err(|err| bad(format!("geometry refused: {err}")))?;
        let offsets_match = header.blocks_offset.load(Ordering::Relaxed) as usize == HEADER_LEN
            && header.data_offset.load(Ordering::Relaxed) as usize == config.data_offset();
        if !offsets_match || needed > len {
            return Err(bad(format!(
                "{} blocks of {} bytes need {needed} bytes with the standard offsets; the area \
                 has {len}",
                config.block_count, config.block_len
            )));
        }
        Ok(ArenaView {
            area: ArenaArea {
                data_offset: config.data_offset(),
                config,
                ..probe
            },
        })
    }

    /// The arena's geometry.
    pub fn config(&self) -> ArenaConfig {
        self.area.config
    }

    /// Check `r` against the shared headers; returns (first block, blocks in its run).
    fn check(&self, r: &ArenaRef) -> Result<(usize, usize), ArenaError> {
        let index = self.area.index_of(r)?;
        let block = self.area.block(index);
        // SYNC: pairs with the Release store in `generation::bump` (alloc / free).
        let found = block.generation.load(Ordering::Acquire);
        let run = block.run.load(Ordering::Relaxed) as usize;
        if found != r.generation || run == 0 {
            return Err(ArenaError::Stale {
                expected: r.generation,
                found,
            });
        }
        let count = self.area.config.block_count as usize;
        if run > count - index || r.len as usize > run * self.area.config.block_len as usize {
            return Err(ArenaError::OutOfBounds {
                offset: r.offset,
                len: r.len,
                reason: "runs past the end of its allocation",
            });
        }
        Ok((index, run))
    }

    /// Copy the bytes `r` names into `buf` (replacing its contents): bounds-checked, and
    /// generation-checked before and after the copy, so a stale reference never yields
    /// another holder's bytes.
    pub fn read(&self, r: &ArenaRef, buf: &mut Vec<u8>) -> Result<(), ArenaError> {
        buf.clear();
        let (index, run) = self.check(r)?;
        let block = self.area.block(index);
        generation::read_checked(
            &block.generation,
            r.generation,
            self.area.words(index, run),
            r.len as usize,
            buf,
        )
        .map_err(|stale| ArenaError::Stale {
            expected: r.generation,
            found: stale.found,
        })
    }

    /// Copy `len` bytes from byte `at` (a multiple of 8) of `r` into `buf`.
    pub fn read_at(
        &self,
        r: &ArenaRef,
        at: u32,
        len: u32,
        buf: &mut Vec<u8>,
    ) -> Result<(), ArenaError> {
        buf.clear();
        let (index, run) = self.check(r)?;
        let first = ArenaArea::span(r, at, len as usize, r.len as usize)?;
        let block = self.area.block(index);
        generation::read_checked(
            &block.generation,
            r.generation,
            &self.area.words(index, run)[first..],
            len as usize,
            buf,
        )
        .map_err(|stale| ArenaError::Stale {
            expected: r.generation,
            found: stale.found,
        })
    }

    /// Write `bytes` at byte `at` (a multiple of 8) of `r`.
    ///
    /// # Errors
    /// [`ArenaError::TooLarge`] if they do not fit in `r` from `at` (nothing is written: ask
    /// the kernel for an expansion block); `Stale` / `OutOfBounds` for a bad reference.
    pub fn write(&self, r: &ArenaRef, at: u32, bytes: &[u8]) -> Result<(), ArenaError> {
        let (index, run) = self.check(r)?;
        let first = ArenaArea::span(r, at, bytes.len(), r.len as usize)?;
        words::store(&self.area.words(index, run)[first..], bytes);
        Ok(())
    }

    /// Copy `call`'s arguments into `buf` (replacing its contents).
    pub fn read_args(&self, call: &CallFrame, buf: &mut Vec<u8>) -> Result<(), ArenaError> {
        self.read_at(&call.frame, 0, call.args_len, buf)
    }

    /// Answer `call` in place: write `result` after the arguments and complete the frame.
    ///
    /// # Errors
    /// [`ArenaError::TooLarge`] if it does not fit the frame's room: nothing is written; ask
    /// the kernel for an expansion block and answer with its reference instead.
    pub fn answer(&self, call: &CallFrame, result: &[u8]) -> Result<(), ArenaError> {
        self.write(&call.frame, call.result_offset(), result)?;
        self.complete(&call.frame, result.len() as u32)
    }

    /// Announce that frame `r` holds a result of `result_len` bytes (written before this
    /// call); the kernel's [`Arena::completion`] sees it. This is the shared-memory answer
    /// path for a caller that spins on the frame instead of waiting for an RPC reply.
    pub fn complete(&self, r: &ArenaRef, result_len: u32) -> Result<(), ArenaError> {
        let (index, _) = self.check(r)?;
        if result_len > r.len {
            return Err(ArenaError::TooLarge {
                len: u64::from(result_len),
                room: u64::from(r.len),
            });
        }
        let done = u64::from(r.generation) << 32 | u64::from(result_len);
        // SYNC: pairs with the Acquire load of `done` in `Arena::completion`.
        self.area.block(index).done.store(done, Ordering::Release);
        Ok(())
    }
}

impl std::fmt::Debug for ArenaView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArenaView")
            .field("config", &self.area.config)
            .finish()
    }
}
