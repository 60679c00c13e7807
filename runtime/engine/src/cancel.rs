//! Cancellation that reaches a call blocked in another thread: a flag the call polls, plus
//! hooks (e.g. "shut down this socket") run by whoever cancels, so a read that is waiting on
//! a silent server returns at once instead of at its next byte.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

type Hook = Box<dyn FnOnce() + Send>;

/// A cancellation flag shared by clones, with hooks run once when it fires.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    hooks: Mutex<Vec<Hook>>,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl CancelToken {
    /// A token that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the token has fired.
    pub fn is_cancelled(&self) -> bool {
        // SYNC: pairs with the Release store in `cancel`, so hook state set before is visible.
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Fires once; later calls are no-ops.
    pub fn cancel(&self) {
        // SYNC: pairs with the Acquire loads in `is_cancelled` and `on_cancel`.
        if self.inner.cancelled.swap(true, Ordering::AcqRel) {
            return;
        }
        let hooks = std::mem::take(&mut *self.inner.hooks.lock());
        for hook in hooks {
            hook();
        }
    }

    /// Runs `hook` when the token fires, or at once if it already has.
    pub fn on_cancel(&self, hook: impl FnOnce() + Send + 'static) {
        let mut hooks = self.inner.hooks.lock();
        // Checked under the lock so a concurrent `cancel` either sees this hook or we see the flag.
        if self.inner.cancelled.load(Ordering::Acquire) {
            drop(hooks);
            hook();
        } else {
            hooks.push(Box::new(hook));
        }
    }
}

/// Cancels its token when the deadline passes; dropping it first ends the watch without
/// cancelling (the watching thread leaves at once instead of sleeping out the deadline).
#[derive(Debug)]
pub struct Deadline {
    _done: crossbeam_channel::Sender<()>,
}

impl CancelToken {
    /// Cancels this token after `after`, unless the returned [`Deadline`] is dropped before.
    pub fn cancel_after(&self, after: std::time::Duration) -> Deadline {
        let (done, watch) = crossbeam_channel::bounded::<()>(0);
        let token = self.clone();
        let spawned = std::thread::Builder::new()
            .name("hearth-deadline".into())
            .spawn(move || {
                if let Err(crossbeam_channel::RecvTimeoutError::Timeout) = watch.recv_timeout(after)
                {
                    token.cancel();
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start a deadline thread, the call runs without one: {e}");
        }
        Deadline { _done: done }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn hooks_run_once_before_or_after() {
        let count = Arc::new(AtomicUsize::new(0));
        let token = CancelToken::new();
        let c = count.clone();
        token.on_cancel(move || {
            c.fetch_add(1, Ordering::SeqCst);
        });
        assert!(!token.is_cancelled());
        token.cancel();
        token.cancel();
        assert_eq!(count.load(Ordering::SeqCst), 1);
        let c = count.clone();
        token.on_cancel(move || {
            c.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(count.load(Ordering::SeqCst), 11);
    }

    #[test]
    fn deadline_cancels_unless_dropped_first() {
        let fired = CancelToken::new();
        let _deadline = fired.cancel_after(std::time::Duration::from_millis(20));
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(fired.is_cancelled());
        let kept = CancelToken::new();
        drop(kept.cancel_after(std::time::Duration::from_millis(20)));
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!kept.is_cancelled());
    }

    #[test]
    fn concurrent_cancel_and_register_never_loses_a_hook() {
        for _ in 0..500 {
            let count = Arc::new(AtomicUsize::new(0));
            let token = CancelToken::new();
            let t = token.clone();
            let canceller = std::thread::spawn(move || t.cancel());
            let c = count.clone();
            token.on_cancel(move || {
                c.fetch_add(1, Ordering::SeqCst);
            });
            canceller.join().expect("canceller thread");
            assert_eq!(count.load(Ordering::SeqCst), 1);
        }
    }
}
