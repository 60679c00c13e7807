//! NEON kernel for aarch64: 4 lanes, two accumulators per row, rows scored four at a time.
//! Deliberately the same shape as the AVX2 kernel (zero-padded tail, fixed reduction order) so
//! the two read alike; NEON is part of every aarch64 target, detection is a formality.
//!
//! A row's arithmetic is the same whether it is scored alone or in a block: chunk pairs go to
//! accumulators 0 and 1, an odd last chunk to accumulator 0, the zero-padded tail to
//! accumulator 1, then `vaddvq(acc0 + acc1)`.

use std::arch::aarch64::*;

use super::row;

const LANES: usize = 4;
/// Rows scored together: 4 rows × 2 accumulators + 2 query registers of the 32 vector registers.
const BLOCK: usize = 4;

block_drivers!("neon");

#[target_feature(enable = "neon")]
pub(super) fn sum(data: &[f32]) -> f32 {
    let (wide, rest) = data.as_chunks::<{ 8 * LANES }>();
    let mut acc = [vdupq_n_f32(0.0); 8];
    for block in wide {
        let (vectors, _) = block.as_chunks::<LANES>();
        for (lane, vector) in acc.iter_mut().zip(vectors) {
            *lane = vaddq_f32(*lane, load(vector));
        }
    }
    let (chunks, tail) = rest.as_chunks::<LANES>();
    for chunk in chunks {
        acc[0] = vaddq_f32(acc[0], load(chunk));
    }
    acc[1] = vaddq_f32(acc[1], load(&padded(tail)));
    let quad = [
        vaddq_f32(acc[0], acc[4]),
        vaddq_f32(acc[1], acc[5]),
        vaddq_f32(acc[2], acc[6]),
        vaddq_f32(acc[3], acc[7]),
    ];
    vaddvq_f32(vaddq_f32(
        vaddq_f32(quad[0], quad[1]),
        vaddq_f32(quad[2], quad[3]),
    ))
}

/// Dot products of `R` rows (each `query.len()` long) with `query`.
#[target_feature(enable = "neon")]
#[inline]
fn dot_rows<const R: usize>(rows: [&[f32]; R], query: &[f32]) -> [f32; R] {
    let (q_chunks, q_tail) = query.as_chunks::<LANES>();
    let (q_pairs, q_odd) = q_chunks.as_chunks::<2>();
    let split = rows.map(|r| {
        let (chunks, tail) = r.as_chunks::<LANES>();
        let (pairs, odd) = chunks.as_chunks::<2>();
        assert!(pairs.len() == q_pairs.len() && odd.len() == q_odd.len());
        (pairs, odd, tail)
    });
    let mut acc = [[vdupq_n_f32(0.0); 2]; R];
    for (j, q_pair) in q_pairs.iter().enumerate() {
        let q0 = load(&q_pair[0]);
        let q1 = load(&q_pair[1]);
        for (acc, (pairs, _, _)) in acc.iter_mut().zip(&split) {
            // vfmaq_f32(a, b, c) = a + b * c, fused.
            acc[0] = vfmaq_f32(acc[0], load(&pairs[j][0]), q0);
            acc[1] = vfmaq_f32(acc[1], load(&pairs[j][1]), q1);
        }
    }
    if let [q_last] = q_odd {
        let q = load(q_last);
        for (acc, (_, odd, _)) in acc.iter_mut().zip(&split) {
            acc[0] = vfmaq_f32(acc[0], load(&odd[0]), q);
        }
    }
    if !q_tail.is_empty() {
        let q = load(&padded(q_tail));
        for (acc, (_, _, tail)) in acc.iter_mut().zip(&split) {
            acc[1] = vfmaq_f32(acc[1], load(&padded(tail)), q);
        }
    }
    acc.map(|[a0, a1]| vaddvq_f32(vaddq_f32(a0, a1)))
}

#[target_feature(enable = "neon")]
#[inline]
fn load(chunk: &[f32; LANES]) -> float32x4_t {
    // SAFETY: `chunk` is 4 readable floats, exactly the 16 bytes `vld1q_f32` reads.
    unsafe { vld1q_f32(chunk.as_ptr()) }
}

/// The last `< 4` floats of a vector, zero-extended to a full chunk (zeros add nothing).
#[inline]
fn padded(tail: &[f32]) -> [f32; LANES] {
    let mut chunk = [0.0; LANES];
    chunk[..tail.len()].copy_from_slice(tail);
    chunk
}
