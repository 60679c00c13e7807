//! Writing, reading, deleting and listing documents. The files are the truth: every change is
//! made on disk first and then recorded in the index.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::error::IoContext;
use crate::index::Stat;
use crate::limits::MAX_DOCUMENT_BYTES;
use crate::name::{CONTENT_FILE, category_of, validate_lookup, validate_name};
use crate::vector::content_hash;
use crate::{KnowledgeBase, KnowledgeError};

/// One document as [`list`](KnowledgeBase::list) shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocInfo {
    /// Its name (e.g. `recipes/bread`).
    pub name: String,
    /// Its category: the parent path, `""` at the top level.
    pub category: String,
    /// Size of its `content.md` in bytes.
    pub bytes: u64,
    /// Modification time of its `content.md`, in milliseconds since the Unix epoch.
    pub modified_ms: i64,
    /// Why it is not indexed (not UTF-8, too large, unreadable), or `None` when it is.
    pub skipped: Option<String>,
}

/// What [`create`](KnowledgeBase::create) did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Created {
    /// The document's name.
    pub name: String,
    /// Whether an existing document was replaced.
    pub replaced: bool,
}

impl KnowledgeBase {
    /// Writes the document `name` with `content` and indexes it. An existing document is
    /// refused ([`KnowledgeError::Exists`]) unless `replace`. The file is written to
    /// `content.md.tmp`, flushed to disk and renamed over `content.md`, so a crash leaves the
    /// old or the new content, never a mix.
    pub fn create(
        &mut self,
        name: &str,
        content: &str,
        replace: bool,
    ) -> Result<Created, KnowledgeError> {
        validate_name(name)?;
        let bytes = content.len() as u64;
        if bytes > MAX_DOCUMENT_BYTES {
            return Err(KnowledgeError::TooLarge {
                name: name.to_owned(),
                bytes,
                limit: MAX_DOCUMENT_BYTES,
            });
        }
        let dir = self.real_dir_for_create(name)?;
        let file = dir.join(CONTENT_FILE);
        let existed = match fs::symlink_metadata(&file) {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(KnowledgeError::io("create", &file, e)),
        };
        if existed && !replace {
            return Err(KnowledgeError::Exists {
                name: name.to_owned(),
            });
        }
        self.make_dirs(name)?;
        write_atomically(&dir, &file, content.as_bytes())?;
        let meta = fs::metadata(&file).io_ctx("stat", &file)?;
        self.index_text(
            name,
            stat_of(&meta),
            content,
            content_hash(content.as_bytes()),
        )?;
        Ok(Created {
            name: name.to_owned(),
            replaced: existed,
        })
    }

    /// The current text of document `name`, read from its file. Syncs first.
    pub fn read(&mut self, name: &str) -> Result<String, KnowledgeError> {
        validate_lookup(name)?;
        self.sync()?;
        self.known(name)?;
        let file = self.root.join(name).join(CONTENT_FILE);
        let meta = fs::metadata(&file).io_ctx("read", &file)?;
        if meta.size() > MAX_DOCUMENT_BYTES {
            return Err(KnowledgeError::TooLarge {
                name: name.to_owned(),
                bytes: meta.size(),
                limit: MAX_DOCUMENT_BYTES,
            });
        }
        fs::read_to_string(&file).io_ctx("read", &file)
    }

    /// Deletes document `name`: its `content.md`, its directory when that leaves it empty (a
    /// directory that also holds other documents stays), and its index rows. Syncs first; a
    /// name that is not a document is [`KnowledgeError::NotFound`] and nothing is touched.
    pub fn delete(&mut self, name: &str) -> Result<(), KnowledgeError> {
        validate_lookup(name)?;
        self.sync()?;
        let id = self.known(name)?;
        let dir = self.root.join(name);
        let file = dir.join(CONTENT_FILE);
        match fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(KnowledgeError::io("delete", &file, e)),
        }
        // Not empty (sub-documents, the user's own files) is the ordinary case of keeping it.
        if fs::remove_dir(&dir).is_ok()
            && let Some(parent) = dir.parent()
        {
            sync_dir(parent)?;
        } else {
            sync_dir(&dir)?;
        }
        self.index.remove(id)?;
        self.dense = None;
        Ok(())
    }

    /// Every document, sorted by name, with the skipped ones and why. Syncs first.
    pub fn list(&mut self) -> Result<Vec<DocInfo>, KnowledgeError> {
        self.sync()?;
        Ok(self
            .index
            .docs()?
            .into_iter()
            .map(|row| DocInfo {
                category: category_of(&row.name).to_owned(),
                bytes: row.stat.size,
                modified_ms: row.stat.mtime_ns.div_euclid(1_000_000),
                skipped: row.skipped,
                name: row.name,
            })
            .collect())
    }

    /// The index id of document `name`, or `NotFound`.
    fn known(&self, name: &str) -> Result<i64, KnowledgeError> {
        self.index
            .doc(name)?
            .map(|row| row.id)
            .ok_or_else(|| KnowledgeError::NotFound {
                name: name.to_owned(),
            })
    }

    /// The directory of a new document, after checking that no existing part of its path is
    /// a symlink or a file: the write must land inside the root, where `name` says.
    fn real_dir_for_create(&self, name: &str) -> Result<PathBuf, KnowledgeError> {
        let mut dir = self.root.clone();
        for segment in name.split('/') {
            dir.push(segment);
            match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(KnowledgeError::InvalidName {
                        name: name.to_owned(),
                        reason: "a part of the path is a symlink; documents are written only \
                                 to real directories",
                    });
                }
                Ok(meta) if !meta.is_dir() => {
                    return Err(KnowledgeError::InvalidName {
                        name: name.to_owned(),
                        reason: "a part of the path is an existing file, not a directory",
                    });
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(KnowledgeError::io("create", &dir, e)),
            }
        }
        Ok(self.root.join(name))
    }

    /// Creates the missing directories of `name` (mode `0700`), each made durable in its parent.
    fn make_dirs(&self, name: &str) -> Result<(), KnowledgeError> {
        let mut dir = self.root.clone();
        for segment in name.split('/') {
            let parent = dir.clone();
            dir.push(segment);
            match fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => sync_dir(&parent)?,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(KnowledgeError::io("create directory", &dir, e)),
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to `file` through a temporary file in `dir`, flushed, renamed and made durable.
fn write_atomically(dir: &Path, file: &Path, bytes: &[u8]) -> Result<(), KnowledgeError> {
    const OP: &str = "write";
    let tmp = dir.join(format!("{CONTENT_FILE}.tmp"));
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .io_ctx(OP, &tmp)?;
    out.write_all(bytes).io_ctx(OP, &tmp)?;
    out.sync_all().io_ctx(OP, &tmp)?;
    drop(out);
    fs::rename(&tmp, file).io_ctx(OP, file)?;
    sync_dir(dir)
}

/// Flushes a directory's entries to disk (after a create, rename or remove in it).
fn sync_dir(dir: &Path) -> Result<(), KnowledgeError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .io_ctx("sync directory", dir)
}

pub(crate) fn stat_of(meta: &fs::Metadata) -> Stat {
    Stat {
        mtime_ns: meta
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(meta.mtime_nsec()),
        size: meta.size(),
    }
}
