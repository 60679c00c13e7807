//! Helpers shared by the behaviour tests.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hearth_media::{MediaMeta, MediaStore};

/// A fresh store in its own temporary directory (kept alive by the returned guard).
pub fn fresh() -> (tempfile::TempDir, PathBuf, MediaStore) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("media");
    let store = MediaStore::open(&dir).unwrap();
    (tmp, dir, store)
}

/// Metadata with only a MIME type.
pub fn mime(m: &str) -> MediaMeta {
    MediaMeta {
        mime: m.into(),
        ..MediaMeta::default()
    }
}

/// The permission bits of a file or directory.
pub fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every file under `dir`, relative, sorted (to show that nothing was written).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The row count of `media.db` as SQLite itself sees it, bypassing the store.
pub fn rows(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open(dir.join("media.db")).unwrap();
    conn.query_row("SELECT count(*) FROM media", [], |r| r.get(0))
        .unwrap()
}
