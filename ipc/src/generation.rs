//! Generation-checked reads of memory that its owner may recycle at any time.
//!
//! An exchange-arena block is handed to a plugin under a generation number; when the kernel
//! frees the block it bumps the generation before the memory can carry anything else. A reader
//! holding a reference checks the generation before and after copying (the ring's seqlock
//! argument, with the generation as the stamp): a copy that saw any byte written after the bump
//! sees the bump on its re-check and is refused as stale, so a stale reference yields either the
//! bytes it was issued for or [`Stale`], never a mix. The loom model below checks exactly that.

use crate::sync::{AtomicU32, AtomicU64, Ordering, fence};
use crate::words;

/// The generation no longer matches: the block was freed (and possibly reused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stale {
    /// The generation found in the block header.
    pub found: u32,
}

/// Publish generation `next` for a block whose previous holders must be refused from now on.
/// Any store made to the block's words after this call is ordered after the bump for every
/// reader that re-checks (`fence(Release)` below).
#[inline]
pub(crate) fn bump(generation: &AtomicU32, next: u32) {
    // SYNC: pairs with the Acquire load in `read_checked`: a reader that sees `next` also sees
    // whatever was written to the block before it was (re)issued.
    generation.store(next, Ordering::Release);
    // SYNC: pairs with `fence(Acquire)` in `read_checked`: a reader whose copy observed any
    // word stored after this fence observes the bump on its re-check.
    fence(Ordering::Release);
}

/// Copy `len` bytes from `block` into `buf` (replacing its contents) if the block is still at
/// generation `expected` before and after the copy.
#[inline]
pub(crate) fn read_checked(
    generation: &AtomicU32,
    expected: u32,
    block: &[AtomicU64],
    len: usize,
    buf: &mut Vec<u8>,
) -> Result<(), Stale> {
    buf.clear();
    // SYNC: pairs with the Release store in `bump`.
    let before = generation.load(Ordering::Acquire);
    if before != expected {
        return Err(Stale { found: before });
    }
    words::load(block, len, buf);
    // SYNC: pairs with `fence(Release)` in `bump`.
    fence(Ordering::Acquire);
    let after = generation.load(Ordering::Relaxed);
    if after != expected {
        buf.clear();
        return Err(Stale { found: after });
    }
    Ok(())
}

#[cfg(all(test, loom))]
mod loom_model {
    //! Run: `RUSTFLAGS="--cfg loom" cargo test -p hearth-ipc --release --lib generation`

    use super::*;
    use crate::sync::Arc;

    fn bytes_of(value: u64) -> Vec<u8> {
        let mut bytes = value.to_le_bytes().to_vec();
        bytes.extend_from_slice(&(!value).to_le_bytes());
        bytes
    }

    struct Block {
        generation: AtomicU32,
        words: [AtomicU64; 2],
    }

    /// The kernel frees a block issued at generation 1 and reissues it (generation 2) with new
    /// bytes, while a plugin reads through its generation-1 reference: it gets the generation-1
    /// bytes whole, or `Stale`; never a mix, never generation-2 bytes.
    #[test]
    fn stale_reader_never_sees_recycled_bytes() {
        loom::model(|| {
            let block = Arc::new(Block {
                generation: AtomicU32::new(0),
                words: [AtomicU64::new(0), AtomicU64::new(0)],
            });
            words::store(&block.words, &bytes_of(0x1111));
            bump(&block.generation, 1);

            let kernel = {
                let block = Arc::clone(&block);
                loom::thread::spawn(move || {
                    bump(&block.generation, 2);
                    words::store(&block.words, &bytes_of(0x2222));
                })
            };
            let mut buf = Vec::new();
            match read_checked(&block.generation, 1, &block.words, 16, &mut buf) {
                Ok(()) => assert_eq!(buf, bytes_of(0x1111), "torn or recycled copy accepted"),
                Err(Stale { found }) => {
                    assert_eq!(found, 2);
                    assert!(buf.is_empty());
                }
            }
            kernel.join().expect("kernel thread");
            let mut fresh = Vec::new();
            read_checked(&block.generation, 2, &block.words, 16, &mut fresh).expect("current");
            assert_eq!(fresh, bytes_of(0x2222));
        });
    }
}
