//! Scratch directories for tests that need real files (SQLite stores, sockets, configs).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// A new, empty directory `hearth-<tag>-<pid>-<n>` under the system temp dir, unique within the
/// run; a leftover of an earlier run with the same pid is removed first. The caller removes it
/// when done (a daemon test keeps it across a restart).
pub fn fresh_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hearth-{tag}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create the scratch dir {}: {e}", dir.display()));
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_gives_a_new_empty_dir() {
        let a = fresh_dir("testkit");
        let b = fresh_dir("testkit");
        assert_ne!(a, b);
        assert!(a.is_dir() && b.is_dir());
        assert_eq!(std::fs::read_dir(&a).expect("readable").count(), 0);
        std::fs::remove_dir_all(a).expect("remove a");
        std::fs::remove_dir_all(b).expect("remove b");
    }
}
