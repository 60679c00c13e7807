//! Behaviour tests of the event ring on real threads (and real shared mappings).
#![cfg(not(loom))]

mod attach;
mod model;
mod stress;
mod wake;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

/// Run `body` on its own thread and fail the test if it has not finished within `limit`,
/// so a lost wake-up or a livelock fails loudly instead of hanging the suite.
pub fn with_watchdog<T: Send + 'static>(
    limit: Duration,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = thread::spawn(move || {
        let value = body();
        let _ = tx.send(());
        value
    });
    match rx.recv_timeout(limit) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(RecvTimeoutError::Timeout) => {
            panic!("watchdog: test body still running after {limit:?}")
        }
    }
}
