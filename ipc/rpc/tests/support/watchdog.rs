//! The watchdog every test that could hang runs under (shared by the `hearth-plugin` tests).

use std::time::Duration;

/// Runs `test` on its own thread and fails if it takes longer than `limit` (the workspace's one
/// watchdog, `hearth_testkit::within`).
pub fn watchdog<F: FnOnce() + Send + 'static>(limit: Duration, test: F) {
    hearth_testkit::within(limit, test)
}
