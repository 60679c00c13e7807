//! Handing the segment and a doorbell to a plugin child at fds 3 and 4.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::{DOORBELL_FD, SEGMENT_FD};

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
