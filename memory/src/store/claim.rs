//! One writer per file in a process. SQLite would let a second read-write connection open the
//! same file, and the two would then meet on its busy handler (1–25 ms sleeps) on every write;
//! a claim on the file's canonical path, held by the [`Store`](super::Store) for its whole life,
//! turns that into an error at open.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::StoreError;

/// Canonical paths of every database a [`Store`](super::Store) in this process has open.
fn claimed() -> &'static Mutex<HashSet<PathBuf>> {
    static CLAIMED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    CLAIMED.get_or_init(Default::default)
}

/// The claim on one database file; released when dropped.
#[derive(Debug)]
pub(super) struct Claim {
    canonical: PathBuf,
}

impl Claim {
    /// Claims `path`, or fails with [`StoreError::AlreadyOpen`] when another `Store` in this
    /// process holds it. The file need not exist yet: its directory is resolved instead, so two
    /// spellings of one path (a symlinked dir, `./`, `..`) are the same claim.
    pub(super) fn take(op: &'static str, path: &Path) -> Result<Claim, StoreError> {
        let canonical = canonical(path);
        let mut set = claimed().lock().unwrap_or_else(|p| p.into_inner());
        if !set.insert(canonical.clone()) {
            return Err(StoreError::AlreadyOpen {
                op,
                path: path.to_path_buf(),
            });
        }
        Ok(Claim { canonical })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut set = claimed().lock().unwrap_or_else(|p| p.into_inner());
        set.remove(&self.canonical);
    }
}

/// The file's path with its directory resolved (symlinks, `.` and `..`); as given when the
/// directory cannot be resolved (the open then fails on its own).
fn canonical(path: &Path) -> PathBuf {
    if let Ok(file) = std::fs::canonicalize(path) {
        return file;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}
