//! How far the borrower wrote, readable without the table's lock.

use crate::sync::{Arc, AtomicU64, Ordering};

/// How far the borrower wrote a lent request's writes: one more than the sequence number of
/// the last one it wrote or began (0: none yet). Stored after each write, so it only grows
/// while the writer is lent.
#[derive(Clone, Debug, Default)]
pub struct WrittenMark(Arc<AtomicU64>);

impl WrittenMark {
    /// Whether the borrower wrote something after `seq` of this request: then `seq` was
    /// written whole (it stops at its first short write and writes nothing after), and the
    /// answer under the lock would be "written, nothing comes back".
    pub fn passed(&self, seq: u64) -> bool {
        // SYNC: pairs with the Release store in `set`, made after the write it counts.
        self.0.load(Ordering::Acquire) > seq.saturating_add(1)
    }

    /// The last sequence number the borrower wrote, whole or in part (`None`: none yet).
    pub(crate) fn through(&self) -> Option<u64> {
        self.0.load(Ordering::Acquire).checked_sub(1)
    }

    pub(crate) fn set(&self, seq: u64) {
        self.0.store(seq.saturating_add(1), Ordering::Release);
    }
}
