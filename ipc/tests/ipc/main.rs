//! Behaviour tests of the event ring and the shared segment on real threads, real shared
//! mappings and real child processes.
#![cfg(not(loom))]

mod ring_attach;
mod ring_model;
mod ring_stress;
mod ring_wake;
mod segment_arena;
mod segment_fields;
mod segment_json;
mod segment_layout;
mod segment_processes;
mod support;

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
