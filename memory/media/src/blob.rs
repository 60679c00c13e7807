//! Blob files under `<dir>/blobs/<first 2 hex>/<remaining 62 hex>`, written so that a crash at
//! any point leaves either no blob or the whole blob, never a partial one under its final name.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::MediaError;
use crate::digest::digest_reader;
use crate::error::IoContext;

/// Suffix of a blob being written; such files are never read and are swept at open.
pub(crate) const TMP_SUFFIX: &str = ".tmp";

/// The blob directory tree.
#[derive(Debug)]
pub(crate) struct Blobs {
    root: PathBuf,
}

/// What is on disk under a blob's path, compared with its digest.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum BlobState {
    /// The file holds exactly the content its name promises.
    Intact,
    /// No file.
    Missing,
    /// A file whose bytes do not hash to its name.
    Corrupted,
}

impl Blobs {
    /// Opens the tree at `root`, creating it (mode `0700`) when missing.
    /// The blobs under `root`, for reading only: nothing is created.
    pub(crate) fn at(root: PathBuf) -> Blobs {
        Blobs { root }
    }

    pub(crate) fn open(root: PathBuf) -> Result<Blobs, MediaError> {
        make_dir(&root)?;
        Ok(Blobs { root })
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The path of a (validated) digest: two-level fan-out keeps directories small.
    pub(crate) fn path(&self, digest: &str) -> PathBuf {
        self.root.join(&digest[..2]).join(&digest[2..])
    }

    /// Compares the file of `digest` with its name, reading at most `expect + 1` bytes so a
    /// grown file is caught without reading all of it.
    pub(crate) fn check(&self, digest: &str, expect: u64) -> Result<BlobState, MediaError> {
        let path = self.path(digest);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(BlobState::Missing),
            Err(e) => return Err(e).io("check blob", &path),
        };
        let (found, n) = digest_reader(file.take(expect + 1)).io("check blob", &path)?;
        Ok(if n == expect && found == digest {
            BlobState::Intact
        } else {
            BlobState::Corrupted
        })
    }

    /// The blob file of `digest`, open for reading, and its path; `Missing` when it is not
    /// there.
    fn open_blob(&self, digest: &str) -> Result<(File, PathBuf), MediaError> {
        let path = self.path(digest);
        match File::open(&path) {
            Ok(file) => Ok((file, path)),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(MediaError::Missing {
                digest: digest.to_owned(),
                path,
            }),
            Err(e) => Err(e).io("read blob", &path),
        }
    }

    /// Reads the blob of `digest` and re-verifies it: the bytes are returned only if they hash
    /// to `digest`, so a flipped bit on disk is an error and never wrong content.
    pub(crate) fn read(&self, digest: &str, expect: u64) -> Result<Vec<u8>, MediaError> {
        self.read_verified(digest, Some(expect))
    }

    /// Reads the blob of `digest` when its size is not known (no row read): at most the
    /// default limit, returned only if the bytes hash to `digest`.
    pub(crate) fn read_unsized(&self, digest: &str) -> Result<Vec<u8>, MediaError> {
        self.read_verified(digest, None)
    }

    /// At most `expect` + 1 bytes (the default limit + 1 without a size), checked against the
    /// size when one is known and always against the digest.
    fn read_verified(&self, digest: &str, expect: Option<u64>) -> Result<Vec<u8>, MediaError> {
        let (file, path) = self.open_blob(digest)?;
        let limit = expect.unwrap_or(crate::DEFAULT_MAX_BYTES);
        // Preallocate for what the row promises, but not beyond the default limit: a damaged
        // row must not make one read allocate without bound.
        let reserve = expect.map_or(0, |e| e.min(crate::DEFAULT_MAX_BYTES + 1));
        let mut data = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
        file.take(limit + 1)
            .read_to_end(&mut data)
            .io("read blob", &path)?;
        let size_ok = expect.is_none_or(|e| data.len() as u64 == e);
        if !size_ok || crate::digest::digest_of(&data) != digest {
            return Err(MediaError::Corrupted {
                digest: digest.to_owned(),
                path,
            });
        }
        Ok(data)
    }

    /// Writes `data` as the blob of `digest`: `<path>.tmp` (created new, `0600`), fsync,
    /// rename over `<path>`, fsync the directory. A rename replaces atomically, so this also
    /// repairs a corrupted blob in place.
    pub(crate) fn write(&self, digest: &str, data: &[u8]) -> Result<(), MediaError> {
        let path = self.path(digest);
        let fan = self.root.join(&digest[..2]);
        if make_dir(&fan)? {
            // The new fan-out directory's own entry must be durable before the blob in it is.
            sync_dir(&self.root)?;
        }
        let tmp = tmp_path(&path);
        // A tmp of this digest can only be left by a write that failed in this process (open
        // swept older ones), so it is garbage: replace it.
        match fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e).io("remove stale tmp blob", &tmp),
        }
        let result = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)
                .io("create tmp blob", &tmp)?;
            file.write_all(data).io("write tmp blob", &tmp)?;
            file.sync_all().io("fsync tmp blob", &tmp)?;
            drop(file);
            fs::rename(&tmp, &path).io("rename tmp blob", &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result?;
        sync_dir(&fan)
    }

    /// Removes the blob of `digest`; a blob already gone is not an error (a delete interrupted
    /// after the unlink is retried this way).
    pub(crate) fn remove(&self, digest: &str) -> Result<(), MediaError> {
        let path = self.path(digest);
        match fs::remove_file(&path) {
            Ok(()) => sync_dir(&self.root.join(&digest[..2])),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).io("remove blob", &path),
        }
    }

    /// Removes every `*.tmp` left by a write that was interrupted (a crash or a kill). They are
    /// never a blob's only copy: a blob exists only once renamed to its final name.
    pub(crate) fn sweep_tmp(&self) -> Result<usize, MediaError> {
        let mut swept = 0;
        for fan in read_dir(&self.root)? {
            let is_dir = fan.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir {
                swept += remove_if_tmp(&fan.path())?;
                continue;
            }
            for entry in read_dir(&fan.path())? {
                swept += remove_if_tmp(&entry.path())?;
            }
        }
        Ok(swept)
    }

    /// Digests of every blob file on disk with a well-formed name, in no particular order.
    pub(crate) fn list(&self) -> Result<Vec<String>, MediaError> {
        let mut out = Vec::new();
        for fan in read_dir(&self.root)? {
            if !fan.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let prefix = fan.file_name().to_string_lossy().into_owned();
            for entry in read_dir(&fan.path())? {
                let digest = format!("{prefix}{}", entry.file_name().to_string_lossy());
                if crate::digest::is_valid_digest(&digest) {
                    out.push(digest);
                }
            }
        }
        Ok(out)
    }
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(TMP_SUFFIX);
    PathBuf::from(s)
}

fn remove_if_tmp(path: &Path) -> Result<usize, MediaError> {
    let is_tmp = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(TMP_SUFFIX));
    if !is_tmp {
        return Ok(0);
    }
    match fs::remove_file(path) {
        Ok(()) => {
            tracing::info!(path = %path.display(), "removed an interrupted media write");
            Ok(1)
        }
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e).io("sweep tmp blob", path),
    }
}

fn read_dir(dir: &Path) -> Result<Vec<fs::DirEntry>, MediaError> {
    fs::read_dir(dir)
        .io("list blobs", dir)?
        .collect::<Result<Vec<_>, _>>()
        .io("list blobs", dir)
}

/// Creates `dir` with mode `0700` when missing; returns whether it was created. An existing
/// directory keeps its mode: the owner may have chosen it.
pub(crate) fn make_dir(dir: &Path) -> Result<bool, MediaError> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => Ok(false),
        Err(e) => Err(e).io("create directory", dir),
    }
}

/// Makes a directory's entries (a rename, a new file, an unlink) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), MediaError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .io("fsync directory", dir)
}
