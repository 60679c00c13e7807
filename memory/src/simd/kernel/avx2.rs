//! AVX2 + FMA kernel: 8 lanes, two accumulators per row, rows scored four at a time so each
//! query load feeds four fused multiply-adds.
//!
//! A row's arithmetic is the same whether it is scored alone or in a block: chunk pairs go to
//! accumulators 0 and 1, an odd last chunk to accumulator 0, the zero-padded tail to
//! accumulator 1, then `hsum(acc0 + acc1)`.

use std::arch::x86_64::*;

use super::row;

const LANES: usize = 8;
/// Rows scored together; 4 rows × 2 accumulators + 2 query registers fit the 16 YMM registers.
const BLOCK: usize = 4;

block_drivers!("avx2,fma");

#[target_feature(enable = "avx2,fma")]
pub(super) fn sum(data: &[f32]) -> f32 {
    // Eight independent adds in flight hide the add latency; the loop is then load-bound.
    let (wide, rest) = data.as_chunks::<{ 8 * LANES }>();
    let mut acc = [_mm256_setzero_ps(); 8];
    for block in wide {
        let (vectors, _) = block.as_chunks::<LANES>();
        for (lane, vector) in acc.iter_mut().zip(vectors) {
            *lane = _mm256_add_ps(*lane, load(vector));
        }
    }
    let (chunks, tail) = rest.as_chunks::<LANES>();
    for chunk in chunks {
        acc[0] = _mm256_add_ps(acc[0], load(chunk));
    }
    acc[1] = _mm256_add_ps(acc[1], load(&padded(tail)));
    let quad = [
        _mm256_add_ps(acc[0], acc[4]),
        _mm256_add_ps(acc[1], acc[5]),
        _mm256_add_ps(acc[2], acc[6]),
        _mm256_add_ps(acc[3], acc[7]),
    ];
    hsum(_mm256_add_ps(
        _mm256_add_ps(quad[0], quad[1]),
        _mm256_add_ps(quad[2], quad[3]),
    ))
}

/// Dot products of `R` rows (each `query.len()` long) with `query`.
#[target_feature(enable = "avx2,fma")]
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
    let mut acc = [[_mm256_setzero_ps(); 2]; R];
    for (j, q_pair) in q_pairs.iter().enumerate() {
        let q0 = load(&q_pair[0]);
        let q1 = load(&q_pair[1]);
        for (acc, (pairs, _, _)) in acc.iter_mut().zip(&split) {
            acc[0] = _mm256_fmadd_ps(load(&pairs[j][0]), q0, acc[0]);
            acc[1] = _mm256_fmadd_ps(load(&pairs[j][1]), q1, acc[1]);
        }
    }
    if let [q_last] = q_odd {
        let q = load(q_last);
        for (acc, (_, odd, _)) in acc.iter_mut().zip(&split) {
            acc[0] = _mm256_fmadd_ps(load(&odd[0]), q, acc[0]);
        }
    }
    if !q_tail.is_empty() {
        let q = load(&padded(q_tail));
        for (acc, (_, _, tail)) in acc.iter_mut().zip(&split) {
            acc[1] = _mm256_fmadd_ps(load(&padded(tail)), q, acc[1]);
        }
    }
    acc.map(|[a0, a1]| hsum(_mm256_add_ps(a0, a1)))
}

#[target_feature(enable = "avx2,fma")]
#[inline]
fn load(chunk: &[f32; LANES]) -> __m256 {
    // SAFETY: `chunk` is 8 readable floats, exactly the 32 bytes one unaligned load reads.
    unsafe { _mm256_loadu_ps(chunk.as_ptr()) }
}

/// The last `< 8` floats of a vector, zero-extended to a full chunk (zeros add nothing).
#[inline]
fn padded(tail: &[f32]) -> [f32; LANES] {
    let mut chunk = [0.0; LANES];
    chunk[..tail.len()].copy_from_slice(tail);
    chunk
}

/// Horizontal sum in a fixed order: high half + low half, then pairs, then the last two.
#[target_feature(enable = "avx2,fma")]
#[inline]
fn hsum(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps::<0b01>(s, s));
    _mm_cvtss_f32(s)
}

/// `Σ rowᵢ · queryᵢ` of a quantized row: 16 bytes widened to two 8-lane float vectors per step,
/// one accumulator each, then the tail in scalar order.
#[target_feature(enable = "avx2,fma")]
#[inline]
pub(super) fn dot_i8(row: &[i8], query: &[f32]) -> f32 {
    let n = row.len().min(query.len());
    let (r_chunks, r_tail) = row[..n].as_chunks::<16>();
    let (q_chunks, q_tail) = query[..n].as_chunks::<16>();
    let mut acc = [_mm256_setzero_ps(); 2];
    for (r, q) in r_chunks.iter().zip(q_chunks) {
        // SAFETY: `r` is 16 readable bytes, exactly what one unaligned 128-bit load reads.
        let bytes = unsafe { _mm_loadu_si128(r.as_ptr().cast()) };
        let lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
        let hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128::<8>(bytes)));
        let (q_lo, q_hi) = q.split_at(LANES);
        let q_lo: &[f32; LANES] = q_lo.try_into().expect("8 floats");
        let q_hi: &[f32; LANES] = q_hi.try_into().expect("8 floats");
        acc[0] = _mm256_fmadd_ps(lo, load(q_lo), acc[0]);
        acc[1] = _mm256_fmadd_ps(hi, load(q_hi), acc[1]);
    }
    let mut sum = hsum(_mm256_add_ps(acc[0], acc[1]));
    for (&x, &y) in r_tail.iter().zip(q_tail) {
        sum += f32::from(x) * y;
    }
    sum
}

byte_scan!(target_feature(enable = "avx2,fma"));
