//! Helpers shared by the crate's unit tests.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `body` on its own thread and fails the test if it takes longer than `secs`; a panic in
/// the body is re-raised with its own message.
pub(crate) fn watchdog<T: Send + 'static>(
    secs: u64,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: test body still running after {secs} s")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => unreachable!("sender dropped without sending or panicking"),
        },
    }
}
