//! What the socket's owner has decided (accepting, draining until when), shared with the
//! reactor, which reads it on every wake.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the owner of the socket has decided, read by the reactor on every wake.
#[derive(Debug)]
pub(super) struct ServerState {
    accepting: AtomicBool,
    drain_until: Mutex<Option<Instant>>,
}

impl ServerState {
    /// Accepting connections, no drain decided.
    pub(super) fn accepting() -> Self {
        Self {
            accepting: AtomicBool::new(true),
            drain_until: Mutex::new(None),
        }
    }

    /// No new connections or requests from now on.
    pub(super) fn stop_accepting(&self) {
        self.accepting.store(false, Ordering::Relaxed);
    }

    /// Stops accepting, and closes every connection `grace` from now at the latest.
    pub(super) fn drain_for(&self, grace: Duration) {
        self.stop_accepting();
        *self.drain_until.lock() = Some(Instant::now() + grace);
    }

    pub(super) fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::Relaxed)
    }

    pub(super) fn drain_deadline(&self) -> Option<Instant> {
        *self.drain_until.lock()
    }
}
