//! What can go wrong in cold context. Embedding failures are not here on purpose: without a
//! working model the cold context falls back to keyword search (and says so), it never fails a
//! prune or a recall for it.

use crate::StoreError;
use crate::simd::SimdError;

/// Failure of a cold-context prune, archive or recall.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecallError {
    /// The durable store refused an operation; nothing of it was written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A query vector did not fit the index (a model whose output width changed at run time).
    #[error("cold context vector search: {0}")]
    Vector(#[from] SimdError),
    /// A turn asked to be forgotten is still being answered: its reply, written when it ends,
    /// would bring its words back. Nothing was removed; the memory service marks it instead
    /// (`Store::journal_forget_when_answered`) and forgets it when the reply is journaled.
    #[error("turn {0} is still being answered: it can be forgotten once its answer is in")]
    InFlight(String),
}
