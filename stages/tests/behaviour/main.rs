//! Behaviour tests of hearth-stages, one binary with a module per area.

mod output_dispatch;
mod pipeline_isolation;
mod pipeline_order;
mod tool_registry;

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Run `body` on its own thread and fail the test if it does not finish within `limit`.
pub fn within<T: Send + 'static>(limit: Duration, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let worker = thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(limit) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("test body ended without a result"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: test still running after {limit:?}")
        }
    }
}
