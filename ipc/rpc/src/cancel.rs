//! Cancellation of one call, shared between the code that waits and the code that works.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once when the caller gives up on a call (`$/cancel`, a timeout, a stop); handlers that
/// run long poll it and answer [`ErrorKind::Cancelled`](crate::ErrorKind::Cancelled).
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Marks the call cancelled; idempotent.
    pub fn cancel(&self) {
        // SYNC: Release pairs with the Acquire in `is_cancelled`, so whatever the canceller wrote
        // before cancelling (a reason, a deadline) is visible to the handler that sees the flag.
        self.0.store(true, Ordering::Release);
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        // SYNC: pairs with the Release store in `cancel`.
        self.0.load(Ordering::Acquire)
    }
}
