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

/// Orders a handshake's announcing SeqCst access before the SeqCst load that follows it (the
/// wake handshakes: the publisher stores `write_seq` then loads `parked`; a reader adds itself
/// to `parked` or `bell_parked` then loads `write_seq`). The C11 model gives that order to the
/// SeqCst accesses alone, so the real build needs nothing more here; loom regards SeqCst
/// accesses as AcqRel (its README, "Unsupported features") and would report wakes lost that
/// cannot be, so under loom each handshake also takes the SeqCst fence loom does model. The
/// model then checks the handshake's shape: each side announces before it looks.
#[inline(always)]
pub(crate) fn handshake_fence() {
    #[cfg(loom)]
    fence(Ordering::SeqCst);
}

/// One step of a busy wait. Under loom a spin must yield, or the model never finishes.
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}
