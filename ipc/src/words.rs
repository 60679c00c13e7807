//! Bytes in and out of shared 8-byte words.
//!
//! A peer may write bytes while this process copies them, and a plain `memcpy` of bytes another
//! thread or process writes is a data race in the Rust memory model. Every shared payload (ring
//! events, stage-context fields, arena frames) is therefore stored and loaded as relaxed
//! `AtomicU64` words; whoever needs a consistent copy validates it afterwards (a stamp, a
//! version or a generation re-check). On x86-64 and AArch64 these are plain 8-byte moves.

use crate::sync::{AtomicU64, Ordering};

/// Store `bytes` into `words` from the first word on; the last word is zero-padded.
///
/// # Panics
/// If `words` is shorter than `bytes` rounded up to whole words (callers size it first).
#[inline]
pub(crate) fn store(words: &[AtomicU64], bytes: &[u8]) {
    let mut chunks = bytes.chunks_exact(8);
    let mut index = 0;
    for chunk in chunks.by_ref() {
        let word = u64::from_le_bytes(chunk.try_into().expect("chunks_exact(8) yields 8 bytes"));
        words[index].store(word, Ordering::Relaxed);
        index += 1;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut tail = [0u8; 8];
        tail[..rest.len()].copy_from_slice(rest);
        words[index].store(u64::from_le_bytes(tail), Ordering::Relaxed);
    }
}

/// Append the first `len` bytes held in `words` to `buf`. The copy may be torn if a peer
/// writes meanwhile; the caller validates it. Callers size `words` first; bytes past its end
/// would read as zero, never out of bounds.
#[inline]
pub(crate) fn load(words: &[AtomicU64], len: usize, buf: &mut Vec<u8>) {
    let start = buf.len();
    buf.resize(start + len.div_ceil(8) * 8, 0);
    for (chunk, word) in buf[start..].chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.load(Ordering::Relaxed).to_le_bytes());
    }
    buf.truncate(start + len);
}

/// Words needed to hold `len` bytes.
#[inline]
pub(crate) const fn count(len: usize) -> usize {
    len.div_ceil(8)
}
