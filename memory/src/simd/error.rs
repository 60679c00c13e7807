//! What can go wrong when storing or scoring vectors. Every variant is `Copy`: these errors are
//! returned on the recall hot path and never allocate.

use super::Kernel;

/// A vector, buffer or kernel that does not fit the matrix it was used with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimdError {
    /// A vector's length is not the matrix's dimension (vectors of different models never mix).
    #[error("vector has {got} dimensions, the matrix holds {expected}")]
    DimMismatch {
        /// The matrix's dimension.
        expected: usize,
        /// The vector's length.
        got: usize,
    },
    /// A component is NaN or infinite; it would poison every score and the ranking.
    #[error("vector component {index} is not finite")]
    NonFinite {
        /// Position of the first bad component.
        index: usize,
    },
    /// The score buffer is shorter than the matrix.
    #[error("score buffer holds {got} entries, the matrix has {needed} rows")]
    OutputTooShort {
        /// Rows in the matrix, one score each.
        needed: usize,
        /// Length of the buffer given.
        got: usize,
    },
    /// The kernel needs CPU features this machine lacks.
    #[error("kernel {0:?} is not supported by this CPU")]
    Unsupported(Kernel),
}
