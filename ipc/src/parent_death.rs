//! Tying a child's life to the thread that spawns it, so no plugin outlives a killed daemon.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Arrange for `command`'s child to receive SIGKILL when the spawning **thread** exits (the
/// kernel's `PR_SET_PDEATHSIG` fires on the death of the thread that forked, not of the whole
/// process), which covers a SIGKILLed daemon. Spawn from a thread that lives as long as the
/// child, such as the one that waits for it.
///
/// If the parent is already gone when the child gets to set the signal, the spawn fails
/// instead of leaving an orphan behind.
pub fn kill_with_parent(command: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and calls only `prctl` and
    // `getppid`, which are async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl; then nothing would fire.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
