//! Opening a path so that it cannot leave its root: one `openat2` with `RESOLVE_BENEATH`, so
//! the kernel itself refuses any resolution step that would end outside the root's directory
//! (a symlink pointing out, an absolute symlink, a magic link), atomically. A symlink swapped
//! between a check and the open cannot win, because there is no separate check.

use std::os::fd::OwnedFd;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::Mode;

use hearth_plugin::ToolError;

use crate::roots::{Target, refused};

fn how(flags: OFlag, mode: Mode) -> OpenHow {
    OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC)
        .mode(mode)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_MAGICLINKS)
}

/// The root's directory, opened for resolving beneath it.
fn root_dir(target: &Target<'_>) -> Result<OwnedFd, ToolError> {
    nix::fcntl::open(
        &target.root.path,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| ToolError::failed(format!("{}: {e}", target.root.path.display())))
}

/// Why an open failed, in words naming the path.
fn explain(target: &Target<'_>, e: Errno) -> ToolError {
    let shown = target.shown();
    let failed = match e {
        Errno::EXDEV => {
            return refused(format!(
                "{}: refused, it leads outside the allowed directory {} (through a symlink)",
                shown.display(),
                target.root.path.display()
            ));
        }
        Errno::ELOOP => {
            return refused(format!(
                "{}: refused, it is a symlink (written files are never followed through one)",
                shown.display()
            ));
        }
        Errno::ENOENT => format!("{}: no such file or directory", shown.display()),
        Errno::ENOTDIR => format!("{}: a part of the path is not a directory", shown.display()),
        Errno::EISDIR => format!("{}: is a directory", shown.display()),
        Errno::EACCES | Errno::EPERM => format!("{}: permission denied", shown.display()),
        other => format!("{}: {other}", shown.display()),
    };
    ToolError::failed(failed)
}

/// Opens `target` beneath its root with `flags`.
pub fn open(target: &Target<'_>, flags: OFlag, mode: Mode) -> Result<OwnedFd, ToolError> {
    let dir = root_dir(target)?;
    openat2(&dir, target.rel.as_path(), how(flags, mode)).map_err(|e| explain(target, e))
}

/// Opens the directory `rel` (relative to the target's root) beneath the root.
pub fn open_dir_at(target: &Target<'_>, rel: &Path) -> Result<OwnedFd, ToolError> {
    let dir = root_dir(target)?;
    openat2(
        &dir,
        rel,
        how(OFlag::O_RDONLY | OFlag::O_DIRECTORY, Mode::empty()),
    )
    .map_err(|e| explain(target, e))
}
