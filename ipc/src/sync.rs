//! The one place the ring's atomics come from.
//!
//! Under `cfg(loom)` every atomic, fence and `Arc` used by the slot protocol is loom's, so
//! `ipc/tests/loom_ring.rs` can model-check the publish/read protocol exhaustively; otherwise
//! they are the std types. Nothing outside this module names `std::sync::atomic` for ring state.

#[cfg(loom)]
pub(crate) use loom::sync::Arc;
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

#[cfg(not(loom))]
pub(crate) use std::sync::Arc;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

/// One step of a busy wait. Under loom a spin must yield, or the model never finishes.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
