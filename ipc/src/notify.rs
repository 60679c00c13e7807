//! Park and wake for ring readers: a futex on the header's 32-bit `wake_epoch` word.
//!
//! Why a futex and not an eventfd: the word lives inside the ring's region, so a reader in
//! another process that maps the region `MAP_SHARED` waits on the very same word with no fd
//! to pass at handshake, and one `FUTEX_WAKE` wakes every parked reader (an eventfd read
//! would wake and drain for one). Regions private to this process use `FUTEX_PRIVATE_FLAG`,
//! which skips the kernel's shared-mapping lookup.
//!
//! The publisher calls [`wake_all`] only when the header's `parked` counter is non-zero, so
//! an idle-reader ring costs no syscall per event (see `Publisher::publish`).

use std::time::Duration;

use crate::sync::AtomicU32;

/// Block until `word` no longer holds `expected`, a wake arrives, or `timeout` passes.
/// Spurious returns are allowed: callers re-check their condition in a loop.
#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration, process_shared: bool) {
    let op = if process_shared {
        libc::FUTEX_WAIT
    } else {
        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG
    };
    let ts = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 1e9, so it fits a c_long of any width.
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word.as_ptr()` points to a live, 4-byte-aligned u32 for the whole call (the
    // caller holds a reference into the ring region, which outlives every handle); the kernel
    // only reads it and `ts`. EAGAIN / ETIMEDOUT / EINTR are all fine: callers loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wake every thread parked on `word` (in any process, for a shared region).
#[cfg(all(not(loom), any(target_os = "linux", target_os = "android")))]
pub(crate) fn wake_all(word: &AtomicU32, process_shared: bool) {
    let op = if process_shared {
        libc::FUTEX_WAKE
    } else {
        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG
    };
    // SAFETY: as in `wait`: a live, aligned u32; FUTEX_WAKE does not even read it.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), op, i32::MAX);
    }
}

/// Without futexes, parking degrades to a short sleep (correct, just slower to wake).
#[cfg(all(not(loom), not(any(target_os = "linux", target_os = "android"))))]
pub(crate) fn wait(_word: &AtomicU32, _expected: u32, timeout: Duration, _process_shared: bool) {
    std::thread::sleep(timeout.min(Duration::from_millis(1)));
}

#[cfg(all(not(loom), not(any(target_os = "linux", target_os = "android"))))]
pub(crate) fn wake_all(_word: &AtomicU32, _process_shared: bool) {}

/// Under loom the futex is simulated by one mutex and condition variable shared by every word
/// (a futex may wake spuriously, so sharing one is allowed): `wait` compares the word under
/// the mutex and sleeps on the condition variable, `wake_all` notifies under the mutex, so a
/// wake that comes after the comparison always reaches the sleeper, as the kernel's
/// futex-bucket lock guarantees. The timeout is ignored: a reader whose wake the ring's
/// handshake lost sleeps with nobody left to wake it, which loom reports as a deadlock
/// instead of a late return.
#[cfg(loom)]
mod simulated {
    use loom::sync::{Condvar, Mutex};

    loom::lazy_static! {
        /// The one futex bucket of a model run (loom rebuilds it for every interleaving).
        pub(super) static ref BUCKET: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
    }
}

#[cfg(loom)]
pub(crate) fn wait(word: &AtomicU32, expected: u32, _timeout: Duration, _process_shared: bool) {
    let (lock, sleepers) = &*simulated::BUCKET;
    let bucket = lock.lock().expect("the simulated bucket is never poisoned");
    if word.load(crate::sync::Ordering::SeqCst) == expected {
        drop(sleepers.wait(bucket));
    }
}

#[cfg(loom)]
pub(crate) fn wake_all(_word: &AtomicU32, _process_shared: bool) {
    let (lock, sleepers) = &*simulated::BUCKET;
    let _bucket = lock.lock().expect("the simulated bucket is never poisoned");
    sleepers.notify_all();
}
