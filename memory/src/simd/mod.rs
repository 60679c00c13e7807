//! Vector scoring: unit-length rows in one aligned matrix, a dot-product kernel chosen at run
//! time for the CPU, and top-k selection over the scores.
//!
//! Rows are normalised when they are stored, so cosine similarity against a unit query is a bare
//! dot product and a scan is one forward sweep over contiguous memory: bound by memory bandwidth
//! for large matrices, by L2 for small ones. `unsafe` in this module is limited to the kernels'
//! loads and `#[target_feature]` calls, and to viewing the matrix's aligned blocks as floats.
//!
//! ```
//! use hearth_memory::simd::{Kernel, Matrix, top_k};
//! let mut memory = Matrix::new(3);
//! memory.push(&[1.0, 0.0, 0.0])?;
//! memory.push(&[0.0, 2.0, 0.0])?; // stored as [0, 1, 0]
//! memory.push(&[1.0, 1.0, 0.0])?;
//! let best = top_k(&memory, &[0.0, 3.0, 0.0], 2)?;
//! assert_eq!(best[0].0, 1);
//! assert_eq!(best[1].0, 2);
//! assert!((best[0].1 - 1.0).abs() < 1e-6);
//!
//! let mut scores = vec![0.0; memory.len()];
//! Kernel::best().scores(&memory, &[1.0, 0.0, 0.0], &mut scores)?;
//! assert!((scores[0] - 1.0).abs() < 1e-6 && scores[1].abs() < 1e-6);
//! # Ok::<(), hearth_memory::simd::SimdError>(())
//! ```

mod error;
mod kernel;
mod matrix;
mod quant;
mod topk;

#[cfg(test)]
mod quant_tests;
#[cfg(test)]
mod tests;

pub use error::SimdError;
pub use kernel::Kernel;
pub use matrix::{BLOCK_FLOATS, Matrix, normalize};
pub use quant::{QUANT_MAX, QuantMatrix, dequantize, quant_scale, quantize};
pub use topk::{PARALLEL_MIN_ROWS, Rows, Scan, ScoreMoments, TopK, top_k, top_k_where};

/// The dot product of `a` and `b` with the best kernel of this CPU.
///
/// # Panics
/// If the lengths differ.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    Kernel::best().dot(a, b)
}
