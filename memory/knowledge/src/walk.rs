//! Finding the documents under the root: every directory holding a `content.md`, with one `stat`
//! of that file each (plus one directory read per directory), so a sync that finds nothing
//! changed costs next to nothing.
//!
//! Hidden entries (editor swap files, `.git`) are passed over silently. Symlinks are followed
//! only when they resolve inside the root and not to a directory the link is inside of (a loop);
//! a link to another directory of the root shows that directory's documents under both names.
//! The descent stops at [`MAX_WALK_DEPTH`](crate::MAX_WALK_DEPTH) whatever the links. Everything
//! else the walk will not take is reported with a reason.

use std::fs;
use std::path::{Path, PathBuf};

use crate::KnowledgeError;
use crate::docs::stat_of;
use crate::error::IoContext;
use crate::index::Stat;
use crate::limits::{MAX_DOCUMENTS, MAX_WALK_DEPTH};
use crate::name::{CONTENT_FILE, walk_segment_problem};

/// Something under the root that is not indexed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Its path under the root (a document name, or the directory passed over).
    pub path: String,
    /// Why it is not indexed.
    pub reason: String,
}

/// A document on disk.
pub(crate) struct Found {
    /// Its name (the directory's path under the root).
    pub(crate) name: String,
    /// Its `content.md`.
    pub(crate) file: PathBuf,
    pub(crate) stat: Stat,
}

/// What a walk found.
#[derive(Default)]
pub(crate) struct Walk {
    /// The documents, in name order of the directory tree.
    pub(crate) found: Vec<Found>,
    /// Entries passed over, with why.
    pub(crate) skipped: Vec<Skipped>,
    /// Whether the walk stopped at [`MAX_DOCUMENTS`].
    pub(crate) truncated: bool,
}

/// Walks `root` (already canonical).
pub(crate) fn walk(root: &Path) -> Result<Walk, KnowledgeError> {
    let mut walk = Walk::default();
    // The root must be readable; below it, an unreadable directory is only a skip.
    fs::read_dir(root).io_ctx("read directory", root)?;
    descend(root, root, root, "", 0, &mut walk);
    Ok(walk)
}

fn skip(walk: &mut Walk, path: String, reason: String) {
    walk.skipped.push(Skipped { path, reason });
}

/// Visits `dir`, named `name` under the root, at `depth` levels below it; `real` is its
/// canonical path.
fn descend(root: &Path, dir: &Path, real: &Path, name: &str, depth: usize, walk: &mut Walk) {
    if walk.truncated {
        return;
    }
    if depth > 0 {
        visit_content(root, dir, name, walk);
    }
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => return skip(walk, name.to_owned(), format!("cannot read directory: {e}")),
    };
    let mut children: Vec<(String, PathBuf, bool)> = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => return skip(walk, name.to_owned(), format!("cannot read directory: {e}")),
        };
        let file_name = entry.file_name();
        if file_name.as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let is_link = file_type.is_symlink();
        if !file_type.is_dir() && !is_link {
            continue;
        }
        let Some(segment) = file_name.to_str() else {
            let shown = join(name, &file_name.to_string_lossy());
            skip(walk, shown, "the directory name is not UTF-8".to_owned());
            continue;
        };
        children.push((segment.to_owned(), entry.path(), is_link));
    }
    children.sort();
    for (segment, path, is_link) in children {
        let child = join(name, &segment);
        let mut real_child = real.join(&segment);
        if is_link {
            match fs::canonicalize(&path) {
                Ok(target) if !target.starts_with(root) => {
                    skip(
                        walk,
                        child,
                        "a symlink that leaves the knowledge root".to_owned(),
                    );
                    continue;
                }
                Ok(target) if real.starts_with(&target) => {
                    skip(
                        walk,
                        child,
                        "a symlink to a directory it is inside of (a loop)".to_owned(),
                    );
                    continue;
                }
                Ok(target) if target.is_dir() => real_child = target,
                Ok(_) => continue,
                Err(e) => {
                    skip(walk, child, format!("a broken symlink: {e}"));
                    continue;
                }
            }
        }
        if let Some(reason) = walk_segment_problem(&segment) {
            skip(walk, child, reason.to_owned());
            continue;
        }
        if depth + 1 > MAX_WALK_DEPTH {
            skip(walk, child, format!("deeper than {MAX_WALK_DEPTH} levels"));
            continue;
        }
        descend(root, &path, &real_child, &child, depth + 1, walk);
        if walk.truncated {
            return;
        }
    }
}

/// Records `dir/content.md` if it is a document file.
fn visit_content(root: &Path, dir: &Path, name: &str, walk: &mut Walk) {
    let file = dir.join(CONTENT_FILE);
    let meta = match fs::symlink_metadata(&file) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            return skip(
                walk,
                name.to_owned(),
                format!("cannot stat {CONTENT_FILE}: {e}"),
            );
        }
    };
    let meta = if meta.file_type().is_symlink() {
        match fs::canonicalize(&file) {
            Ok(target) if target.starts_with(root) => match fs::metadata(&target) {
                Ok(meta) => meta,
                Err(e) => {
                    return skip(
                        walk,
                        name.to_owned(),
                        format!("cannot stat {CONTENT_FILE}: {e}"),
                    );
                }
            },
            Ok(_) => {
                let reason = format!("{CONTENT_FILE} is a symlink that leaves the knowledge root");
                return skip(walk, name.to_owned(), reason);
            }
            Err(e) => {
                return skip(
                    walk,
                    name.to_owned(),
                    format!("{CONTENT_FILE} is a broken symlink: {e}"),
                );
            }
        }
    } else {
        meta
    };
    if !meta.is_file() {
        return skip(
            walk,
            name.to_owned(),
            format!("{CONTENT_FILE} is not a regular file"),
        );
    }
    if walk.found.len() >= MAX_DOCUMENTS {
        walk.truncated = true;
        return;
    }
    walk.found.push(Found {
        name: name.to_owned(),
        file,
        stat: stat_of(&meta),
    });
}

fn join(parent: &str, segment: &str) -> String {
    if parent.is_empty() {
        segment.to_owned()
    } else {
        format!("{parent}/{segment}")
    }
}
