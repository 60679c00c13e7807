//! The portable kernel and the reference for every other one.
//!
//! Eight independent accumulators rather than one running sum: that bounds the rounding error
//! the same way the SIMD kernels do and lets the compiler vectorise with the target's baseline.

use super::row;

const LANES: usize = 8;

pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a_chunks, a_tail) = a[..n].as_chunks::<LANES>();
    let (b_chunks, b_tail) = b[..n].as_chunks::<LANES>();
    let mut acc = [0.0f32; LANES];
    for (x, y) in a_chunks.iter().zip(b_chunks) {
        for ((lane, &x), &y) in acc.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    for ((lane, &x), &y) in acc.iter_mut().zip(a_tail).zip(b_tail) {
        *lane += x * y;
    }
    reduce(acc)
}

pub(super) fn scores(rows: &[f32], stride: usize, query: &[f32], out: &mut [f32]) {
    let dim = query.len();
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = dot(row(rows, stride, dim, i), query);
    }
}

pub(super) fn sum(data: &[f32]) -> f32 {
    let (chunks, tail) = data.as_chunks::<LANES>();
    let mut acc = [0.0f32; LANES];
    for chunk in chunks {
        for (lane, &x) in acc.iter_mut().zip(chunk) {
            *lane += x;
        }
    }
    for (lane, &x) in acc.iter_mut().zip(tail) {
        *lane += x;
    }
    reduce(acc)
}

/// Pairwise, in a fixed order.
fn reduce(acc: [f32; LANES]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// `Σ rowᵢ · queryᵢ` of a quantized row, with the accumulators of [`dot`].
pub(super) fn dot_i8(row: &[i8], query: &[f32]) -> f32 {
    let n = row.len().min(query.len());
    let (r_chunks, r_tail) = row[..n].as_chunks::<LANES>();
    let (q_chunks, q_tail) = query[..n].as_chunks::<LANES>();
    let mut acc = [0.0f32; LANES];
    for (r, q) in r_chunks.iter().zip(q_chunks) {
        for ((lane, &x), &y) in acc.iter_mut().zip(r).zip(q) {
            *lane += f32::from(x) * y;
        }
    }
    for ((lane, &x), &y) in acc.iter_mut().zip(r_tail).zip(q_tail) {
        *lane += f32::from(x) * y;
    }
    reduce(acc)
}

byte_scan!();
