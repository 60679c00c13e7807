//! The watchdog every test that could hang runs under (shared by the `hearth-plugin` tests).

use std::sync::mpsc;
use std::time::Duration;

/// Runs `test` on its own thread and fails if it takes longer than `limit`.
pub fn watchdog<F: FnOnce() + Send + 'static>(limit: Duration, test: F) {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        test();
        let _ = tx.send(());
    });
    match rx.recv_timeout(limit) {
        Ok(()) => handle.join().expect("test thread"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("watchdog: still running after {limit:?}"),
    }
}
