//! Helpers shared by the crate's unit tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::Store;

/// Runs `body` on its own thread and fails the test if it takes longer than `secs` (the
/// workspace's one watchdog, `hearth_testkit::within`, with the limit in seconds).
pub(crate) fn watchdog<T: Send + 'static>(
    secs: u64,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    hearth_testkit::within(Duration::from_secs(secs), body)
}

/// A test's own directory under the system's temp dir, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    /// A fresh, empty directory named after the test (`name`), unique within the process.
    pub(crate) fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("hearth-memory-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create test dir");
        Self(dir)
    }

    /// Where the test's store lives.
    pub(crate) fn db(&self) -> PathBuf {
        self.0.join("memory.db")
    }

    /// The test's store, opened (created at first).
    pub(crate) fn store(&self) -> Store {
        Store::open(self.db()).expect("open store")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
