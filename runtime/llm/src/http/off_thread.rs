//! Blocking steps that have no socket to shut down yet (name lookup, `connect`) run on a helper
//! thread; the caller waits on a channel that the cancel token can also wake, so it stops
//! waiting the moment the call is cancelled. The helper finishes on its own (bounded by the
//! step's own timeout) and its late result is dropped, which closes any socket it made.

use crossbeam_channel::bounded;
use hearth_engine::CancelToken;
use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What waiting for a helper-thread step produced.
pub(super) enum OffThread<T> {
    Done(T),
    Cancelled,
}

/// Runs `job` on a new thread named `name` and waits for it or for `cancel`, whichever is first.
pub(super) fn run_cancellable<T: Send + 'static>(
    cancel: &CancelToken,
    name: &str,
    job: impl FnOnce() -> T + Send + 'static,
) -> io::Result<OffThread<T>> {
    if cancel.is_cancelled() {
        return Ok(OffThread::Cancelled);
    }
    // Room for both the result and the cancel signal, so neither side ever blocks on a send.
    let (tx, rx) = bounded::<Option<std::thread::Result<T>>>(2);
    let waker = tx.clone();
    cancel.on_cancel(move || {
        let _ = waker.try_send(None);
    });
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(job));
            let _ = tx.send(Some(result));
        })?;
    match rx.recv() {
        Ok(Some(Ok(value))) => Ok(OffThread::Done(value)),
        Ok(Some(Err(_))) => Err(io::Error::other(format!("{name} helper thread panicked"))),
        // The waker lives in the token, so the channel cannot disconnect before one of the
        // two sends; treat it as the cancellation it would be.
        Ok(None) | Err(_) => Ok(OffThread::Cancelled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn cancel_stops_the_wait_for_a_blocked_job() {
        let cancel = CancelToken::new();
        let c = cancel.clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            let at = Instant::now();
            c.cancel();
            at
        });
        let outcome = run_cancellable(&cancel, "test-sleeper", || {
            std::thread::sleep(Duration::from_secs(3));
        })
        .expect("spawn");
        let returned = Instant::now();
        let cancelled_at = canceller.join().expect("canceller");
        assert!(matches!(outcome, OffThread::Cancelled));
        let lag = returned.saturating_duration_since(cancelled_at);
        assert!(
            lag < Duration::from_millis(50),
            "returned {lag:?} after cancel"
        );
    }

    #[test]
    fn a_finished_job_hands_back_its_value_and_a_panic_is_an_error() {
        let cancel = CancelToken::new();
        match run_cancellable(&cancel, "test-job", || 41 + 1).expect("spawn") {
            OffThread::Done(v) => assert_eq!(v, 42),
            OffThread::Cancelled => panic!("not cancelled"),
        }
        let err = run_cancellable(&cancel, "test-panic", || -> u8 { panic!("boom") });
        assert!(err.is_err());
        cancel.cancel();
        assert!(matches!(
            run_cancellable(&cancel, "test-never", || 1).expect("no spawn"),
            OffThread::Cancelled
        ));
    }
}
