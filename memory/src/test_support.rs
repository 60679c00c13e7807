//! Helpers shared by the crate's unit tests.

use std::time::Duration;

/// Runs `body` on its own thread and fails the test if it takes longer than `secs` (the
/// workspace's one watchdog, `hearth_testkit::within`, with the limit in seconds).
pub(crate) fn watchdog<T: Send + 'static>(
    secs: u64,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    hearth_testkit::within(Duration::from_secs(secs), body)
}
