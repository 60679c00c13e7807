//! AVX-512F kernel: 16 lanes, two accumulators per row, rows scored four at a time so each
//! query load feeds four fused multiply-adds; the tail is a masked load (no padding copy).
//!
//! A row's arithmetic is the same whether it is scored alone or in a block: chunk pairs go to
//! accumulators 0 and 1, an odd last chunk to accumulator 0, the masked tail to accumulator 1,
//! then `reduce_add(acc0 + acc1)`.

use std::arch::x86_64::*;

use super::row;

const LANES: usize = 16;
/// Rows scored together: 4 rows × 2 accumulators keep 8 independent FMA chains in flight,
/// enough to cover the FMA latency on both ports.
const BLOCK: usize = 4;

block_drivers!("avx512f");

#[target_feature(enable = "avx512f")]
pub(super) fn sum(data: &[f32]) -> f32 {
    // Eight independent adds in flight hide the add latency; the loop is then load-bound.
    let (wide, rest) = data.as_chunks::<{ 8 * LANES }>();
    let mut acc = [_mm512_setzero_ps(); 8];
    for block in wide {
        let (vectors, _) = block.as_chunks::<LANES>();
        for (lane, vector) in acc.iter_mut().zip(vectors) {
            *lane = _mm512_add_ps(*lane, load(vector));
        }
    }
    let (chunks, tail) = rest.as_chunks::<LANES>();
    for chunk in chunks {
        acc[0] = _mm512_add_ps(acc[0], load(chunk));
    }
    acc[1] = _mm512_add_ps(acc[1], load_tail(tail));
    let quad = [
        _mm512_add_ps(acc[0], acc[4]),
        _mm512_add_ps(acc[1], acc[5]),
        _mm512_add_ps(acc[2], acc[6]),
        _mm512_add_ps(acc[3], acc[7]),
    ];
    _mm512_reduce_add_ps(_mm512_add_ps(
        _mm512_add_ps(quad[0], quad[1]),
        _mm512_add_ps(quad[2], quad[3]),
    ))
}

/// Dot products of `R` rows (each `query.len()` long) with `query`.
#[target_feature(enable = "avx512f")]
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
    let mut acc = [[_mm512_setzero_ps(); 2]; R];
    for (j, q_pair) in q_pairs.iter().enumerate() {
        let q0 = load(&q_pair[0]);
        let q1 = load(&q_pair[1]);
        for (acc, (pairs, _, _)) in acc.iter_mut().zip(&split) {
            acc[0] = _mm512_fmadd_ps(load(&pairs[j][0]), q0, acc[0]);
            acc[1] = _mm512_fmadd_ps(load(&pairs[j][1]), q1, acc[1]);
        }
    }
    if let [q_last] = q_odd {
        let q = load(q_last);
        for (acc, (_, odd, _)) in acc.iter_mut().zip(&split) {
            acc[0] = _mm512_fmadd_ps(load(&odd[0]), q, acc[0]);
        }
    }
    if !q_tail.is_empty() {
        let q = load_tail(q_tail);
        for (acc, (_, _, tail)) in acc.iter_mut().zip(&split) {
            acc[1] = _mm512_fmadd_ps(load_tail(tail), q, acc[1]);
        }
    }
    acc.map(|[a0, a1]| _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)))
}

#[target_feature(enable = "avx512f")]
#[inline]
fn load(chunk: &[f32; LANES]) -> __m512 {
    // SAFETY: `chunk` is 16 readable floats, exactly the 64 bytes one unaligned load reads.
    unsafe { _mm512_loadu_ps(chunk.as_ptr()) }
}

/// Loads the last `< 16` floats of a vector, zeroing the other lanes.
#[target_feature(enable = "avx512f")]
#[inline]
fn load_tail(tail: &[f32]) -> __m512 {
    let len = tail.len().min(LANES - 1);
    let mask: __mmask16 = (1u16 << len) - 1;
    // SAFETY: only the first `len ≤ tail.len()` lanes are enabled in `mask`; masked-off lanes
    // are neither read nor able to fault, so the load touches only `tail`'s own floats.
    unsafe { _mm512_maskz_loadu_ps(mask, tail.as_ptr()) }
}
