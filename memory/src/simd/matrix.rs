//! Contiguous, 64-byte aligned storage of unit-length `f32` rows.
//!
//! Layout: row `i` occupies floats `i * stride .. i * stride + dim` of [`Matrix::as_slice`], where
//! `stride` is `dim` rounded up to a whole 64-byte block (16 floats) and the padding floats are
//! always zero. Every row therefore starts on a cache-line boundary, a row never shares a line
//! with its neighbour, and a scan touches exactly `len * stride * 4` bytes in one forward sweep.
//! The real embedding dims (384, 512) are multiples of 16, so they carry no padding at all.
// The one unsafe operation here views the block vector as the floats it is made of.
#![allow(unsafe_code)]

use std::fmt;

use super::SimdError;

/// Floats per 64-byte block; rows are padded to a whole number of blocks.
pub const BLOCK_FLOATS: usize = 16;

/// One cache line of floats. `align(64)` is what makes every row start on a line boundary.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct Block([f32; BLOCK_FLOATS]);

// The float view in `floats`/`floats_mut` relies on a block being exactly its floats, no padding.
const _: () = assert!(size_of::<Block>() == BLOCK_FLOATS * size_of::<f32>());

impl Block {
    const ZERO: Block = Block([0.0; BLOCK_FLOATS]);
}

/// Unit-length vectors of one dimension, stored row after row so that scoring a query against
/// all of them is a single dot-product sweep (see [`Kernel::scores`](super::Kernel::scores)).
#[derive(Clone)]
pub struct Matrix {
    dim: usize,
    /// Floats from one row start to the next: `dim` rounded up to [`BLOCK_FLOATS`].
    stride: usize,
    len: usize,
    /// `len * stride / BLOCK_FLOATS` blocks.
    blocks: Vec<Block>,
}

impl Matrix {
    /// An empty matrix of `dim`-wide rows.
    pub fn new(dim: usize) -> Self {
        Self::with_capacity(dim, 0)
    }

    /// An empty matrix with room for `rows` rows before it reallocates.
    pub fn with_capacity(dim: usize, rows: usize) -> Self {
        let stride = dim.div_ceil(BLOCK_FLOATS) * BLOCK_FLOATS;
        Self {
            dim,
            stride,
            len: 0,
            blocks: Vec::with_capacity(rows * (stride / BLOCK_FLOATS)),
        }
    }

    /// Width of a row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Floats from one row start to the next (`dim` rounded up to 16); see the module docs.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the matrix has no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes room for `rows` more rows.
    pub fn reserve(&mut self, rows: usize) {
        self.blocks.reserve(rows * self.blocks_per_row());
    }

    /// Appends `vector` scaled to unit length and returns its row index. A zero vector is stored
    /// as zeros (it scores 0 against everything).
    pub fn push(&mut self, vector: &[f32]) -> Result<usize, SimdError> {
        self.check(vector)?;
        let row = self.grow();
        row.copy_from_slice(vector);
        normalize(row);
        Ok(self.len - 1)
    }

    /// Appends `vector` as it is, for vectors already of unit length (e.g. a model whose output
    /// is normalised). Returns its row index.
    pub fn push_normalized(&mut self, vector: &[f32]) -> Result<usize, SimdError> {
        self.check(vector)?;
        self.grow().copy_from_slice(vector);
        Ok(self.len - 1)
    }

    /// Row `row` (its `dim` floats, without padding), if it exists.
    pub fn get(&self, row: usize) -> Option<&[f32]> {
        (row < self.len).then(|| {
            let start = row * self.stride;
            &self.as_slice()[start..start + self.dim]
        })
    }

    /// The rows in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[f32]> + '_ {
        (0..self.len).map(|row| {
            let start = row * self.stride;
            &self.as_slice()[start..start + self.dim]
        })
    }

    /// Removes row `row` by moving the last row into its place (O(dim), like
    /// `Vec::swap_remove`). Returns the former index of the row that moved, or `None` when the
    /// removed row was the last one, so a caller can update its row → id map.
    ///
    /// # Panics
    /// If `row >= len`, like slice indexing.
    pub fn swap_remove(&mut self, row: usize) -> Option<usize> {
        assert!(
            row < self.len,
            "swap_remove: row {row} out of range ({} rows)",
            self.len
        );
        let per_row = self.blocks_per_row();
        let moved = swap_remove_row(&mut self.blocks, per_row, self.len, row);
        self.len -= 1;
        moved
    }

    /// Removes every row, keeping the allocation.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.len = 0;
    }

    /// All rows with their zero padding: `len * stride` floats, starting 64-byte aligned.
    pub fn as_slice(&self) -> &[f32] {
        // SAFETY: `Block` is `repr(C)` around `[f32; 16]` and exactly 64 bytes (asserted above),
        // so `n` contiguous blocks are `16 n` contiguous, initialised f32s at an address aligned
        // for f32; the returned borrow is tied to `&self`, which owns the vector.
        unsafe {
            std::slice::from_raw_parts(
                self.blocks.as_ptr().cast::<f32>(),
                self.blocks.len() * BLOCK_FLOATS,
            )
        }
    }

    fn floats_mut(&mut self) -> &mut [f32] {
        // SAFETY: as in `as_slice`; the exclusive borrow of `self` makes the view unique.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr().cast::<f32>(),
                self.blocks.len() * BLOCK_FLOATS,
            )
        }
    }

    fn blocks_per_row(&self) -> usize {
        self.stride / BLOCK_FLOATS
    }

    fn check(&self, vector: &[f32]) -> Result<(), SimdError> {
        check_vector(vector, self.dim)
    }

    /// Appends one zeroed row and hands back its `dim` floats.
    fn grow(&mut self) -> &mut [f32] {
        let per_row = self.blocks_per_row();
        self.blocks.resize(self.blocks.len() + per_row, Block::ZERO);
        let start = self.len * self.stride;
        let dim = self.dim;
        self.len += 1;
        &mut self.floats_mut()[start..start + dim]
    }
}

impl fmt::Debug for Matrix {
    /// The shape only: a derived `Debug` would print every float of a 150 MB matrix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Matrix")
            .field("dim", &self.dim)
            .field("stride", &self.stride)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// Moves the last of `len` rows (`per_row` blocks each) of `blocks` into row `row` and drops
/// the last; the former index of the row that moved, `None` when `row` was the last. Shared by
/// the f32 and the quantized matrix, whose rows are both whole blocks.
pub(crate) fn swap_remove_row<B: Copy>(
    blocks: &mut Vec<B>,
    per_row: usize,
    len: usize,
    row: usize,
) -> Option<usize> {
    let last = len - 1;
    if row != last {
        blocks.copy_within(last * per_row..(last + 1) * per_row, row * per_row);
    }
    blocks.truncate(last * per_row);
    (row != last).then_some(last)
}

/// Checks that `vector` has `dim` finite components.
pub(crate) fn check_vector(vector: &[f32], dim: usize) -> Result<(), SimdError> {
    if vector.len() != dim {
        return Err(SimdError::DimMismatch {
            expected: dim,
            got: vector.len(),
        });
    }
    match vector.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(SimdError::NonFinite { index }),
        None => Ok(()),
    }
}

/// Scales `vector` to unit length in place (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    // f64 keeps the sum of squares exact enough for any finite f32 input: no overflow at
    // f32::MAX, no underflow for tiny components.
    let norm = vector
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm > 0.0 {
        for x in vector.iter_mut() {
            *x = (f64::from(*x) / norm) as f32;
        }
    }
}
