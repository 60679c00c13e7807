//! The watchdog every test that could hang runs under.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `body` on its own thread and fails the test if it does not finish within `limit`. A
/// panic in `body` is re-raised with its own message, so the failure reads as the body's.
pub fn within<T: Send + 'static>(limit: Duration, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::sync_channel(1);
    let worker = std::thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(limit) {
        Ok(value) => {
            let _ = worker.join();
            value
        }
        // The body panicked (its sender is gone): surface its own message.
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => unreachable!("the body either sends its value or panics"),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: test did not finish within {limit:?}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_the_value_of_a_quick_body() {
        assert_eq!(within(Duration::from_secs(5), || 42), 42);
    }

    #[test]
    #[should_panic(expected = "watchdog: test did not finish within")]
    fn fails_a_body_that_runs_past_its_limit() {
        within(Duration::from_millis(20), || {
            std::thread::sleep(Duration::from_secs(2));
        });
    }

    #[test]
    #[should_panic(expected = "the body's own message")]
    fn re_raises_the_body_panic() {
        within(Duration::from_secs(5), || panic!("the body's own message"));
    }
}
