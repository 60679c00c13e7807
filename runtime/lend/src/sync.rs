//! The one place the lending protocol's lock, atomics and shared pointer come from.
//!
//! Under `cfg(loom)` they are loom's, so `tests/loom_lend.rs` can model-check that every
//! write reaches the peer once and in order; otherwise the lock is `parking_lot`'s and the
//! atomics are std's.

#[cfg(not(loom))]
pub(crate) use parking_lot::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub(crate) use loom::sync::{Arc, MutexGuard};
#[cfg(loom)]
pub(crate) use loom_mutex::Mutex;

/// A mutex with `parking_lot`'s surface (no poisoning) over loom's.
#[cfg(loom)]
mod loom_mutex {
    /// Loom's mutex, locked as `parking_lot`'s is.
    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

    impl<T> Mutex<T> {
        pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
            self.0
                .lock()
                .expect("a model thread panicked holding the lock")
        }
    }
}
