//! The plugin side: reads and writes inside issued blocks.

use std::sync::Arc;

use crate::sync::Ordering;
use crate::{ArenaError, IpcError, generation, words};

use super::super::check_header;
use super::super::mapping::Mapping;
use super::{ArenaArea, ArenaConfig, ArenaRef, CallFrame, HEADER_LEN, MAGIC, VERSION};

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
    /// call); the kernel's [`Arena::completion`](crate::Arena::completion) sees it. This is the shared-memory answer
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
