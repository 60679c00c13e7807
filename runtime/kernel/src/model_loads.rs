//! Embedding models still loading when the process wants to exit.
//!
//! A model loads on a thread of its own (`hearth-memory`) while the daemon already serves. If
//! the process exits during that load, the C++ runtime's global destructors run while the loader
//! is still inside it, and the process dies of a segmentation fault instead of exiting 0. The
//! count is process-wide because that hazard is: the launcher waits for it to reach zero
//! (bounded by its grace) before it returns from `main`.

use parking_lot::{Condvar, Mutex};
use std::time::{Duration, Instant};

static LOADING: Mutex<usize> = Mutex::new(0);
static DONE: Condvar = Condvar::new();

/// Held while one model load runs; dropping it (also by unwinding) ends the load.
pub(crate) struct Loading(());

impl Loading {
    /// Counts a load as running until the guard drops.
    pub(crate) fn start() -> Self {
        *LOADING.lock() += 1;
        Self(())
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        let mut n = LOADING.lock();
        *n -= 1;
        if *n == 0 {
            DONE.notify_all();
        }
    }
}

/// Waits up to `limit` for every model load of this process to end; `false` if one still runs.
pub fn wait_for_model_loads(limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut n = LOADING.lock();
    while *n > 0 {
        if DONE.wait_until(&mut n, deadline).timed_out() {
            return *n == 0;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_a_running_load_and_returns_when_it_ends() {
        hearth_testkit::within(Duration::from_secs(30), || {
            let guard = Loading::start();
            assert!(!wait_for_model_loads(Duration::from_millis(20)));
            let ender = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                drop(guard);
            });
            assert!(wait_for_model_loads(Duration::from_secs(20)));
            ender.join().expect("ender");
        });
    }
}
