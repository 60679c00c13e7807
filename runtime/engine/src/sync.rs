//! The one place the park/wake handshake's atomics and parker come from.
//!
//! Under `cfg(loom)` the atomics and fences of [`WorkerSignal`](crate::waker) and the parker a
//! worker sleeps on are loom's, so `loom_park` can model-check that no wake-up is lost;
//! otherwise they are the std atomics and crossbeam's parker.

#[cfg(not(loom))]
pub(crate) use crossbeam_utils::sync::{Parker, Unparker};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
#[cfg(loom)]
pub(crate) use loom_parker::{Parker, Unparker};

/// A parker with crossbeam's semantics (one token: an unpark before the park makes the park
/// return at once) built on loom's mutex and condition variable.
#[cfg(loom)]
mod loom_parker {
    use loom::sync::{Arc, Condvar, Mutex};
    use std::time::Instant;

    struct Token {
        set: Mutex<bool>,
        changed: Condvar,
    }

    /// The sleeping side.
    pub(crate) struct Parker {
        unparker: Unparker,
    }

    /// The waking side.
    #[derive(Clone)]
    pub(crate) struct Unparker {
        token: Arc<Token>,
    }

    impl Parker {
        pub(crate) fn new() -> Self {
            Self {
                unparker: Unparker {
                    token: Arc::new(Token {
                        set: Mutex::new(false),
                        changed: Condvar::new(),
                    }),
                },
            }
        }

        pub(crate) fn unparker(&self) -> &Unparker {
            &self.unparker
        }

        pub(crate) fn park(&self) {
            let token = &self.unparker.token;
            let mut set = token.set.lock().expect("parker lock");
            while !*set {
                set = token.changed.wait(set).expect("parker lock");
            }
            *set = false;
        }

        /// Loom has no clock, so a deadline never fires: the model then proves the wake-up
        /// arrives by itself instead of being rescued by a timeout.
        pub(crate) fn park_deadline(&self, _deadline: Instant) {
            self.park();
        }
    }

    impl Default for Parker {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Unparker {
        pub(crate) fn unpark(&self) {
            *self.token.set.lock().expect("parker lock") = true;
            self.token.changed.notify_one();
        }
    }
}
