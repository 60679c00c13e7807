//! Binding the socket so that it is never reachable with a wider mode than 0600: it is bound
//! under a temporary name inside the daemon's private (0700) data dir, given its mode, and only
//! then renamed into place. Whatever is at the path already decides what happens: a live socket
//! is another daemon (an error), a stale socket is replaced, anything else is an error and is
//! left untouched.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The identity of the bound socket's file, so that stopping removes only our own.
#[derive(Debug)]
pub(super) struct Bound {
    path: PathBuf,
    inode: (u64, u64),
}

impl Bound {
    /// Removes the socket file if it is still the one bound here (not one a later daemon
    /// put in its place, and not gone already).
    pub(super) fn remove_file(&self) {
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| (m.dev(), m.ino()) == self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds `path` with mode 0600, staging it in `private_dir` (which must be mode 0700 and on the
/// same file system).
pub(super) fn bind_private(path: &Path, private_dir: &Path) -> io::Result<(UnixListener, Bound)> {
    check_target(path)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let staging = private_dir.join(format!(".hearth.sock.{}", std::process::id()));
    let _ = std::fs::remove_file(&staging);
    let listener = UnixListener::bind(&staging)?;
    let placed = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&staging, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&staging);
        return Err(io::Error::new(
            e.kind(),
            format!(
                "cannot move the socket from {} to {}: {e}",
                staging.display(),
                path.display()
            ),
        ));
    }
    let meta = std::fs::symlink_metadata(path)?;
    Ok((
        listener,
        Bound {
            path: path.to_path_buf(),
            inode: (meta.dev(), meta.ino()),
        },
    ))
}

/// Refuses a path held by a live daemon or by something that is not a socket.
fn check_target(path: &Path) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if !meta.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} exists and is not a socket; refusing to replace it (move it away or set socket_path)",
                path.display()
            ),
        ));
    }
    if UnixStream::connect(path).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("another daemon is listening on {}", path.display()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hearth-bind-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        dir
    }

    #[test]
    fn the_socket_appears_with_mode_0600_and_a_regular_file_is_left_alone() {
        let dir = private_dir("modes");
        let path = dir.join("hearth.sock");
        let (listener, _bound) = bind_private(&path, &dir).expect("bind");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let live = bind_private(&path, &dir).expect_err("a live socket is refused");
        assert_eq!(live.kind(), io::ErrorKind::AddrInUse);
        drop(listener);
        // Stale now: replaced.
        let (_listener, again) = bind_private(&path, &dir).expect("stale socket replaced");
        again.remove_file();
        assert!(!path.exists());

        std::fs::write(&path, "precious").expect("file");
        let err = bind_private(&path, &dir).expect_err("a regular file is refused");
        assert!(err.to_string().contains("not a socket"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("kept"), "precious");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stopping_removes_only_our_own_socket_file() {
        let dir = private_dir("own");
        let path = dir.join("hearth.sock");
        let (_listener, bound) = bind_private(&path, &dir).expect("bind");
        std::fs::remove_file(&path).expect("rm");
        let _other = UnixListener::bind(&path).expect("another daemon's socket");
        bound.remove_file();
        assert!(path.exists(), "the other daemon's socket stays");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
