//! The kernel side: the allocator and the authoritative checks.

use std::sync::Arc;

use crate::sync::Ordering;
use crate::{ArenaError, generation, words};

use super::super::mapping::Mapping;
use super::{
    ArenaArea, ArenaConfig, ArenaRef, CallFrame, HEADER_LEN, KERNEL_OWNER, MAGIC, VERSION,
};

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
