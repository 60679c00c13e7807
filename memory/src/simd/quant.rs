//! Unit vectors kept as one signed byte per component: a quarter of the bytes of `f32` rows, for
//! the cold context's vectors, which grow with every turn a user ever had.
//!
//! A vector `v` is scaled so its largest component is ±127 and rounded: `q = round(127 v /
//! max|v|)`. What is stored and scored is the unit vector `q / ‖q‖`, so a row's scale follows from
//! its bytes alone: quantizing the decoded vector again gives the same bytes and the same scale,
//! and a row scores bit for bit the same whether it came from the model or back from the store.
//! The rounding moves a 384- or 512-d cosine by about 1e-3 at most (`quant_tests` bound it).
// The one unsafe operation here views the block vector as the bytes it is made of.
#![allow(unsafe_code)]

use std::fmt;
use std::ops::Range;

use super::matrix::{check_vector, swap_remove_row};
use super::topk::Rows;
use super::{Kernel, SimdError};

/// Largest magnitude of a quantized component.
pub const QUANT_MAX: f32 = 127.0;

/// Bytes per aligned block; rows are padded to a whole number of blocks.
const BLOCK_BYTES: usize = 64;

#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Block([i8; BLOCK_BYTES]);

const _: () = assert!(size_of::<Block>() == BLOCK_BYTES);

impl Block {
    const ZERO: Block = Block([0; BLOCK_BYTES]);
}

/// Writes the bytes of `vector` into `out` (same length) and returns the scale that makes them a
/// unit vector (`out · scale` has length 1); a zero vector gives zeros and scale 0.
///
/// # Panics
/// If the lengths differ.
pub fn quantize(vector: &[f32], out: &mut [i8]) -> f32 {
    assert_eq!(
        vector.len(),
        out.len(),
        "quantize into a slice of another length"
    );
    let max = vector.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.fill(0);
        return 0.0;
    }
    let factor = f64::from(QUANT_MAX) / f64::from(max);
    for (q, &x) in out.iter_mut().zip(vector) {
        *q = (f64::from(x) * factor)
            .round()
            .clamp(-f64::from(QUANT_MAX), f64::from(QUANT_MAX)) as i8;
    }
    quant_scale(out)
}

/// `1 / ‖q‖`, the factor that makes `q` a unit vector (0 for all zeros).
pub fn quant_scale(q: &[i8]) -> f32 {
    let norm = q
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 { (1.0 / norm) as f32 } else { 0.0 }
}

/// The unit vector `q` stands for.
pub fn dequantize(q: &[i8]) -> Vec<f32> {
    let scale = quant_scale(q);
    q.iter().map(|&x| f32::from(x) * scale).collect()
}

/// Quantized unit vectors of one dimension, row after row, each row starting on a cache line
/// (64 bytes: 384- and 512-d rows carry no padding), with one scale per row.
#[derive(Clone)]
pub struct QuantMatrix {
    dim: usize,
    /// Bytes from one row start to the next: `dim` rounded up to 64.
    stride: usize,
    len: usize,
    blocks: Vec<Block>,
    scales: Vec<f32>,
}

impl QuantMatrix {
    /// An empty matrix of `dim`-wide rows.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            stride: dim.div_ceil(BLOCK_BYTES) * BLOCK_BYTES,
            len: 0,
            blocks: Vec::new(),
            scales: Vec::new(),
        }
    }

    /// Width of a row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the matrix has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `vector` (`dim` finite components, any length) quantized and returns its row.
    pub fn push(&mut self, vector: &[f32]) -> Result<usize, SimdError> {
        check_vector(vector, self.dim)?;
        let per_row = self.stride / BLOCK_BYTES;
        self.blocks.resize(self.blocks.len() + per_row, Block::ZERO);
        let start = self.len * self.stride;
        let dim = self.dim;
        let scale = quantize(vector, &mut self.bytes_mut()[start..start + dim]);
        self.scales.push(scale);
        self.len += 1;
        Ok(self.len - 1)
    }

    /// Row `row`'s bytes (without padding) and scale, if it exists.
    pub fn get(&self, row: usize) -> Option<(&[i8], f32)> {
        (row < self.len).then(|| {
            let start = row * self.stride;
            (&self.bytes()[start..start + self.dim], self.scales[row])
        })
    }

    /// The cosine of row `row` with the unit vector `query`, as a scan scores it.
    pub fn score(&self, kernel: Kernel, row: usize, query: &[f32]) -> Option<f32> {
        let (bytes, scale) = self.get(row)?;
        (query.len() == self.dim).then(|| kernel.dot_i8(bytes, query) * scale)
    }

    /// Removes row `row` by moving the last row into its place; returns the former index of the
    /// row that moved (`None` when the removed row was the last), like
    /// [`Matrix::swap_remove`](super::Matrix::swap_remove).
    ///
    /// # Panics
    /// If `row >= len`.
    pub fn swap_remove(&mut self, row: usize) -> Option<usize> {
        assert!(
            row < self.len,
            "swap_remove: row {row} out of range ({} rows)",
            self.len
        );
        let moved = swap_remove_row(&mut self.blocks, self.stride / BLOCK_BYTES, self.len, row);
        self.scales.swap_remove(row);
        self.len -= 1;
        moved
    }

    fn bytes(&self) -> &[i8] {
        // SAFETY: `Block` is `repr(C)` around `[i8; 64]` and exactly 64 bytes (asserted above),
        // so `n` contiguous blocks are `64 n` initialised bytes; the borrow is tied to `&self`.
        unsafe {
            std::slice::from_raw_parts(
                self.blocks.as_ptr().cast::<i8>(),
                self.blocks.len() * BLOCK_BYTES,
            )
        }
    }

    fn bytes_mut(&mut self) -> &mut [i8] {
        // SAFETY: as in `bytes`; the exclusive borrow of `self` makes the view unique.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr().cast::<i8>(),
                self.blocks.len() * BLOCK_BYTES,
            )
        }
    }
}

impl Rows for QuantMatrix {
    fn dim(&self) -> usize {
        self.dim
    }

    fn len(&self) -> usize {
        self.len
    }

    fn scan(&self, kernel: Kernel, range: Range<usize>, unit: &[f32], out: &mut [f32]) {
        let bytes = &self.bytes()[range.start * self.stride..range.end * self.stride];
        kernel.scan_i8(bytes, self.stride, &self.scales[range], unit, out);
    }
}

impl fmt::Debug for QuantMatrix {
    /// The shape only, like [`Matrix`](super::Matrix)'s.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuantMatrix")
            .field("dim", &self.dim)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}
