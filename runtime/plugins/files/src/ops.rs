//! The four operations, each inside one root.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstatat};
use serde_json::{Value, json};

use hearth_plugin::ToolError;

use crate::beneath;
use crate::roots::{Target, io_failed, refused};

/// How deep a search descends, and how many files it opens at most.
const SEARCH_DEPTH: usize = 16;
const SEARCH_FILES: usize = 10_000;

fn kind_of(fd: &OwnedFd, name: &std::ffi::CStr) -> Option<(&'static str, u64)> {
    let st = fstatat(fd.as_fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
    let kind = match SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT {
        SFlag::S_IFREG => "file",
        SFlag::S_IFDIR => "dir",
        SFlag::S_IFLNK => "symlink",
        _ => "other",
    };
    Some((kind, st.st_size as u64))
}

/// Reads `length` bytes of text from `offset` (the whole file when it fits `max`). A window
/// that does not reach the end says so (`eof: false`, `next_offset`): nothing is cut silently.
pub fn read(
    target: &Target<'_>,
    offset: u64,
    length: Option<u64>,
    max: u64,
) -> Result<Value, ToolError> {
    let fd = beneath::open(target, OFlag::O_RDONLY, Mode::empty())?;
    let mut file = File::from(fd);
    let meta = file.metadata().map_err(|e| io_failed(target, e))?;
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "{}: is a directory (use files_list)",
            target.shown().display()
        )));
    }
    let size = meta.len();
    let want = length.unwrap_or(max).min(max);
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| io_failed(target, e))?;
    let mut bytes = Vec::new();
    file.take(want)
        .read_to_end(&mut bytes)
        .map_err(|e| io_failed(target, e))?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // A window may end inside a character: stop before it, the next read starts there.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).expect("valid up to here")
        }
        Err(_) => {
            return Err(ToolError::failed(format!(
                "{}: not UTF-8 text (a binary file); files_read returns text only",
                target.shown().display()
            )));
        }
    };
    let end = offset + text.len() as u64;
    Ok(json!({
        "path": target.shown(),
        "content": text,
        "offset": offset,
        "bytes": text.len(),
        "size": size,
        "eof": end >= size,
        "next_offset": (end < size).then_some(end),
    }))
}

/// The entries of a directory, sorted by name; symlinks are listed as such, never followed.
pub fn list(target: &Target<'_>) -> Result<Value, ToolError> {
    let fd = beneath::open_dir_at(target, &target.rel)?;
    let probe = fd.try_clone().map_err(|e| io_failed(target, e))?;
    let mut dir = Dir::from_fd(fd).map_err(|e| io_failed(target, e))?;
    let mut entries = Vec::new();
    for entry in dir.iter().flatten() {
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let Some((kind, size)) = kind_of(&probe, name) else {
            continue;
        };
        entries.push(json!({
            "name": String::from_utf8_lossy(bytes),
            "kind": kind,
            "size": size,
        }));
    }
    entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Ok(json!({"path": target.shown(), "entries": entries}))
}

struct Search<'a> {
    needle: String,
    max_results: usize,
    max_read: u64,
    hits: Vec<Value>,
    files: usize,
    more: bool,
    base: &'a Path,
}

/// Files under the target whose name or lines contain `query` (case-insensitive). The walk
/// opens every entry relative to its directory with `O_NOFOLLOW`, so it never leaves the tree
/// and never follows a symlink.
pub fn search(
    target: &Target<'_>,
    query: &str,
    max_results: usize,
    max_read: u64,
) -> Result<Value, ToolError> {
    if query.is_empty() {
        return Err(ToolError::failed("files_search: query is empty"));
    }
    let fd = beneath::open_dir_at(target, &target.rel)?;
    let base = target.shown();
    let mut s = Search {
        needle: query.to_lowercase(),
        max_results,
        max_read,
        hits: Vec::new(),
        files: 0,
        more: false,
        base: &base,
    };
    s.walk(fd, PathBuf::new(), 0);
    Ok(json!({"path": base, "query": query, "hits": s.hits, "more": s.more}))
}

impl Search<'_> {
    fn full(&mut self) -> bool {
        if self.hits.len() >= self.max_results {
            self.more = true;
        }
        self.more
    }

    fn walk(&mut self, dir_fd: OwnedFd, rel: PathBuf, depth: usize) {
        let Ok(probe) = dir_fd.try_clone() else {
            return;
        };
        let Ok(mut dir) = Dir::from_fd(dir_fd) else {
            return;
        };
        let mut names: Vec<std::ffi::CString> = dir
            .iter()
            .flatten()
            .filter(|e| !matches!(e.file_name().to_bytes(), b"." | b".."))
            .map(|e| e.file_name().to_owned())
            .collect();
        names.sort();
        for name in names {
            if self.full() {
                return;
            }
            let shown = rel.join(String::from_utf8_lossy(name.to_bytes()).as_ref());
            let Some((kind, _)) = kind_of(&probe, &name) else {
                continue;
            };
            match kind {
                "dir" if depth < SEARCH_DEPTH => {
                    let flags =
                        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
                    if let Ok(sub) = openat(probe.as_fd(), name.as_c_str(), flags, Mode::empty()) {
                        self.walk(sub, shown, depth + 1);
                    }
                }
                "file" if self.files < SEARCH_FILES => {
                    self.files += 1;
                    self.file(&probe, &name, &shown);
                }
                _ => {}
            }
        }
    }

    fn file(&mut self, dir: &OwnedFd, name: &std::ffi::CStr, shown: &Path) {
        let path = self.base.join(shown);
        if shown
            .to_string_lossy()
            .to_lowercase()
            .contains(&self.needle)
        {
            self.hits.push(json!({"path": path, "line": 0, "text": ""}));
        }
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(fd) = openat(dir.as_fd(), name, flags, Mode::empty()) else {
            return;
        };
        let mut bytes = Vec::new();
        if File::from(fd)
            .take(self.max_read)
            .read_to_end(&mut bytes)
            .is_err()
        {
            return;
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return;
        };
        for (n, line) in text.lines().enumerate() {
            if self.full() {
                return;
            }
            if line.to_lowercase().contains(&self.needle) {
                let mut shown_line = line.to_owned();
                if shown_line.len() > 300 {
                    shown_line.truncate(shown_line.floor_char_boundary(300));
                    shown_line.push('…');
                }
                self.hits
                    .push(json!({"path": path, "line": n + 1, "text": shown_line}));
            }
        }
    }
}

/// Writes (or appends) `content` to a file in a writable root. The file is opened beneath the
/// root with `O_NOFOLLOW`: writing through a symlink is refused, even one pointing inside.
pub fn write(target: &Target<'_>, content: &str, append: bool) -> Result<Value, ToolError> {
    if !target.root.write {
        return Err(refused(format!(
            "{}: {} is read-only for the files plugin (allow writes with {{\"path\": ..., \"write\": true}} in its config)",
            target.shown().display(),
            target.root.path.display()
        )));
    }
    if target.rel == Path::new(".") {
        return Err(ToolError::failed(format!(
            "{}: is a directory",
            target.shown().display()
        )));
    }
    let mode = if append {
        OFlag::O_APPEND
    } else {
        OFlag::O_TRUNC
    };
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_NOFOLLOW | mode;
    let fd = beneath::open(target, flags, Mode::from_bits_truncate(0o644))?;
    let mut file = File::from(fd);
    file.write_all(content.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| io_failed(target, e))?;
    Ok(json!({"path": target.shown(), "bytes": content.len(), "appended": append}))
}
