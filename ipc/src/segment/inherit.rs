//! Handing the segment and a doorbell to a plugin child at fds 3 and 4, and claiming them on
//! the child's side.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{DOORBELL_FD, PluginSegment, SEGMENT_FD};
use crate::{Doorbell, IpcError};

/// Arrange for `command`'s child to find `segment` at fd 3 and `doorbell` at fd 4 (without
/// close-on-exec); every other fd of this process stays close-on-exec as usual.
///
/// Both fds must stay open until the child is spawned.
pub fn inherit_plugin_fds(
    command: &mut Command,
    segment: BorrowedFd<'_>,
    doorbell: BorrowedFd<'_>,
) {
    let segment = segment.as_raw_fd();
    let doorbell = doorbell.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and calls only `fcntl` and
    // `dup2`, which are async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        command.pre_exec(move || {
            // Move both out of the way first (close-on-exec copies above fd 10), so that a
            // source already sitting at 3 or 4 is not clobbered by the other's dup2.
            let seg = libc::fcntl(segment, libc::F_DUPFD_CLOEXEC, 10);
            let bell = libc::fcntl(doorbell, libc::F_DUPFD_CLOEXEC, 10);
            if seg < 0 || bell < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // dup2 clears close-on-exec on the target fd.
            if libc::dup2(seg, SEGMENT_FD) < 0 || libc::dup2(bell, DOORBELL_FD) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Set once fds 3 and 4 have been claimed, so no two owners ever close them.
static CLAIMED: AtomicBool = AtomicBool::new(false);

impl PluginSegment {
    /// In a process spawned with [`inherit_plugin_fds`]: claim fd 3 and fd 4 (the convention
    /// of `ipc/DESIGN.md` §3, like systemd's socket activation starting at fd 3), attach to
    /// the segment and adopt the doorbell. Call it once, at startup, before anything else in
    /// the process could have opened an fd numbered 3 or 4.
    ///
    /// # Errors
    /// A second call (the fds are already owned), fds that are not open, or any attach or
    /// doorbell validation failure.
    pub fn attach_inherited() -> Result<(PluginSegment, Doorbell), IpcError> {
        if CLAIMED.swap(true, Ordering::Relaxed) {
            return Err(IpcError::BadSegment {
                area: "inherited fds",
                reason: "fds 3 and 4 were already claimed by this process".into(),
            });
        }
        for fd in [SEGMENT_FD, DOORBELL_FD] {
            // SAFETY: F_GETFD only inspects the descriptor table; an unopened number fails.
            if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
                return Err(IpcError::BadSegment {
                    area: "inherited fds",
                    reason: format!(
                        "fd {fd} is not open: the process was not spawned with the plugin fds"
                    ),
                });
            }
        }
        // SAFETY: both fds are open (checked above), belong to this process by the spawn
        // convention, and the once-guard above makes this the only place that takes them.
        let (segment, bell) = unsafe {
            (
                OwnedFd::from_raw_fd(SEGMENT_FD),
                OwnedFd::from_raw_fd(DOORBELL_FD),
            )
        };
        Ok((PluginSegment::attach(segment)?, Doorbell::from_fd(bell)?))
    }
}
