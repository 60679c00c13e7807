//! The daemon's data dir: private (0700, whatever the umask) and held by one daemon at a time
//! through an exclusive `flock` on `<data_dir>/hearthd.lock`, which holds the owner's pid so a
//! second daemon can say who is in the way. The lock goes with the process, however it ends.

use super::DaemonError;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The locked data dir; dropping it releases the lock.
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    _lock: Flock<File>,
}

/// The lock file's name inside the data dir.
pub const LOCK_FILE: &str = "hearthd.lock";

impl DataDir {
    /// Creates `path` (mode 0700), takes its lock and writes this process's pid into it.
    pub fn lock(path: &Path) -> Result<Self, DaemonError> {
        let io_err = |source: std::io::Error| DaemonError::DataDir {
            path: path.display().to_string(),
            source,
        };
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(io_err)?;
        std::fs::set_permissions(path, Permissions::from_mode(0o700)).map_err(io_err)?;
        let lock_path = path.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(io_err)?;
        file.set_permissions(Permissions::from_mode(0o600))
            .map_err(io_err)?;
        let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(lock) => lock,
            Err((mut file, nix::errno::Errno::EWOULDBLOCK)) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                return Err(DaemonError::Locked {
                    pid: pid.trim().to_string(),
                    path: path.display().to_string(),
                });
            }
            Err((_, errno)) => return Err(io_err(errno.into())),
        };
        lock.set_len(0).map_err(io_err)?;
        lock.rewind().map_err(io_err)?;
        writeln!(lock, "{}", std::process::id()).map_err(io_err)?;
        lock.sync_all().map_err(io_err)?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
        })
    }

    /// The locked directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_and_the_dir_is_private() {
        let dir = std::env::temp_dir().join(format!("hearth-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = DataDir::lock(&dir).expect("first");
        let mode = std::fs::metadata(&dir).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let lock_mode = std::fs::metadata(dir.join(LOCK_FILE))
            .expect("lock meta")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(lock_mode, 0o600);
        // flock locks belong to the open file description: a second open conflicts even in
        // the same process, just as a second daemon's would.
        let err = DataDir::lock(&dir).expect_err("second");
        let text = err.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        assert!(text.contains(&dir.display().to_string()), "{text}");
        drop(first);
        DataDir::lock(&dir).expect("free again after the first is dropped");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
