//! The adapters that ship inside the binary, and their installation into the adapter
//! directory. A file that already exists is never touched: users edit their adapters.

use super::AdapterError;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Distinguishes the staging files of concurrent installs within one process.
static STAGING: AtomicU64 = AtomicU64::new(0);

/// File name and source of every bundled adapter.
pub const ADAPTERS: &[(&str, &str)] = &[
    ("openai.lua", include_str!("../../adapters/openai.lua")),
    (
        "anthropic.lua",
        include_str!("../../adapters/anthropic.lua"),
    ),
    ("gemini.lua", include_str!("../../adapters/gemini.lua")),
    ("ollama.lua", include_str!("../../adapters/ollama.lua")),
];

/// The source of a bundled adapter, by name (`openai`) or file name (`openai.lua`).
pub fn source(name: &str) -> Option<&'static str> {
    let file = name.strip_suffix(".lua").unwrap_or(name);
    ADAPTERS
        .iter()
        .find(|(f, _)| f.strip_suffix(".lua") == Some(file))
        .map(|(_, src)| *src)
}

/// The names of the bundled adapters (`openai`, `anthropic`, …).
pub fn names() -> impl Iterator<Item = &'static str> {
    ADAPTERS
        .iter()
        .map(|(f, _)| f.strip_suffix(".lua").unwrap_or(f))
}

fn write_new(dest: &Path, src: &str) -> std::io::Result<bool> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dest)
    {
        Ok(mut f) => f
            .write_all(src.as_bytes())
            .and_then(|()| f.sync_all())
            .map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Writes every bundled adapter that is missing from `dir` (created if needed) and returns the
/// paths it wrote. Each file appears whole or not at all: it is written under a temporary name
/// and hard-linked into place, which fails instead of replacing a file that appeared meanwhile.
pub fn install(dir: &Path) -> Result<Vec<PathBuf>, AdapterError> {
    let io_err = |path: &Path, e: std::io::Error| AdapterError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    let mut written = Vec::new();
    for (file, src) in ADAPTERS {
        let dest = dir.join(file);
        if dest.exists() {
            continue;
        }
        let unique = STAGING.fetch_add(1, Relaxed);
        let tmp = dir.join(format!(".{file}.{}-{unique}.tmp", std::process::id()));
        let staged = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(src.as_bytes()).and_then(|()| f.sync_all()))
            .map_err(|e| io_err(&tmp, e));
        let linked = staged.and_then(|()| match std::fs::hard_link(&tmp, &dest) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            // Filesystems without hard links: exclusive create still never replaces a file.
            Err(_) => write_new(&dest, src).map_err(|e| io_err(&dest, e)),
        });
        let _ = std::fs::remove_file(&tmp);
        if linked? {
            written.push(dest);
        }
    }
    Ok(written)
}
