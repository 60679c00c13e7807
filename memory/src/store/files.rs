//! The files of one store on disk: the database, its `-wal` and its `-shm`. They are private to
//! the user running Hearth (0600, whatever the umask) because the journal holds every input
//! verbatim, and they are copied aside, never changed, when the store is found damaged.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::error::StoreError;

/// Mode of every store file and of every copy of one.
pub(crate) const PRIVATE_FILE_MODE: u32 = 0o600;
/// Mode of a directory that holds copies of store files.
pub(crate) const PRIVATE_DIR_MODE: u32 = 0o700;

/// The paths SQLite derives from a database path.
#[derive(Clone, Debug)]
pub(super) struct StoreFiles {
    pub db: PathBuf,
    pub wal: PathBuf,
    pub shm: PathBuf,
}

impl StoreFiles {
    pub fn new(db: &Path) -> Self {
        let with = |suffix: &str| {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        };
        StoreFiles {
            db: db.to_path_buf(),
            wal: with("-wal"),
            shm: with("-shm"),
        }
    }

    /// The three paths, database first.
    pub fn all(&self) -> [&Path; 3] {
        [&self.db, &self.wal, &self.shm]
    }

    /// The directory the files live in.
    pub fn dir(&self) -> &Path {
        match self.db.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    }

    /// Creates a missing database file as an empty file of mode 0600, so SQLite (which keeps the
    /// mode of an existing file and gives `-wal` and `-shm` the database's mode) never creates
    /// one under the process umask. Returns whether the file was created.
    pub fn create_private_db(&self, op: &'static str) -> Result<bool, StoreError> {
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(PRIVATE_FILE_MODE)
            .open(&self.db)
        {
            Ok(file) => {
                // The mode given to open(2) is filtered by the umask; set it exactly.
                file.set_permissions(fs::Permissions::from_mode(PRIVATE_FILE_MODE))
                    .map_err(|e| io_err(op, &self.db, e))?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(io_err(op, &self.db, e)),
        }
    }

    /// Takes group and other access away from every file of the store that exists.
    pub fn make_private(&self, op: &'static str) -> Result<(), StoreError> {
        for path in self.all() {
            make_private(op, path)?;
        }
        Ok(())
    }

    /// Copies every file of the store that exists into a new directory beside the database,
    /// `<db>.damaged-<UTC time>/` (0700, files 0600), syncs the copies and both directories,
    /// and returns the directory. The originals are only read.
    pub fn back_up(&self, op: &'static str) -> Result<PathBuf, StoreError> {
        let dir = self.new_aside_dir(op, "damaged")?;
        for path in self.all() {
            let Some(name) = path.file_name() else {
                continue;
            };
            if path.exists() {
                copy_private(op, path, &dir.join(name))?;
            }
        }
        sync_dir(op, &dir)?;
        sync_dir(op, self.dir())?;
        Ok(dir)
    }

    /// Creates `<db>.<what>-<UTC time>/` (0700), with a counter after the time when a directory
    /// of that second already exists.
    pub fn new_aside_dir(&self, op: &'static str, what: &str) -> Result<PathBuf, StoreError> {
        let stamp = utc_stamp(hearth_engine::now_ms());
        for n in 0u32.. {
            let mut name = self.db.as_os_str().to_owned();
            name.push(format!(".{what}-{stamp}"));
            if n > 0 {
                name.push(format!("-{n}"));
            }
            let dir = PathBuf::from(name);
            match fs::DirBuilder::new().mode(PRIVATE_DIR_MODE).create(&dir) {
                // The umask can only take bits away from 0700: the directory is private as made.
                Ok(()) => return Ok(dir),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err(op, &dir, e)),
            }
        }
        unreachable!("u32 counter exhausted")
    }
}

/// Copies a file to a new file of mode 0600 and syncs the copy.
pub(super) fn copy_private(op: &'static str, from: &Path, to: &Path) -> Result<(), StoreError> {
    let mut src = File::open(from).map_err(|e| io_err(op, from, e))?;
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .open(to)
        .map_err(|e| io_err(op, to, e))?;
    io::copy(&mut src, &mut out).map_err(|e| io_err(op, to, e))?;
    out.sync_all().map_err(|e| io_err(op, to, e))
}

/// The size of a file, `None` when it does not exist.
pub(super) fn file_len(op: &'static str, path: &Path) -> Result<Option<u64>, StoreError> {
    match fs::metadata(path) {
        Ok(m) => Ok(Some(m.len())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(op, path, e)),
    }
}

/// Sets a file that exists to 0600 when group or others have any access to it.
pub(super) fn make_private(op: &'static str, path: &Path) -> Result<(), StoreError> {
    match fs::metadata(path) {
        Ok(m) if m.permissions().mode() & 0o077 != 0 => {
            fs::set_permissions(path, fs::Permissions::from_mode(PRIVATE_FILE_MODE))
                .map_err(|e| io_err(op, path, e))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(op, path, e)),
    }
}

/// Fsyncs a directory, so the entries created or renamed in it survive a power loss.
pub(super) fn sync_dir(op: &'static str, dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err(op, dir, e))
}

pub(super) fn io_err(op: &'static str, path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// `YYYY-MM-DDTHHMMSSZ`: sortable, and without the colons some file systems refuse.
fn utc_stamp(ms: i64) -> String {
    let minute = crate::format_minute(ms, 0)
        .replace(' ', "T")
        .replace(':', "");
    format!("{minute}{:02}Z", ms.div_euclid(1000).rem_euclid(60))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_files_utc_stamp_is_sortable_and_colon_free() {
        // 2024-02-29 23:59:07.5 UTC
        assert_eq!(utc_stamp(1_709_251_147_500), "2024-02-29T235907Z");
        assert_eq!(utc_stamp(0), "1970-01-01T000000Z");
    }

    #[test]
    fn store_files_derive_wal_and_shm_names() {
        let f = StoreFiles::new(Path::new("/data/memory.db"));
        assert_eq!(f.wal, Path::new("/data/memory.db-wal"));
        assert_eq!(f.shm, Path::new("/data/memory.db-shm"));
        assert_eq!(f.dir(), Path::new("/data"));
        assert_eq!(
            StoreFiles::new(Path::new("memory.db")).dir(),
            Path::new(".")
        );
    }
}
