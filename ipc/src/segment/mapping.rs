//! The memfd behind a segment and one `MAP_SHARED` mapping of it.
//!
//! The kernel creates the file, sizes it once and seals it against shrinking (and growing, and
//! further sealing): a mapping of a file that shrinks faults with `SIGBUS` on the lost pages, so
//! the seal is what lets a plugin trust that the bytes it mapped stay mapped. An attaching
//! plugin refuses a file without `F_SEAL_SHRINK` for the same reason.

use std::num::NonZeroUsize;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;

use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::mman::{MapFlags, ProtFlags, mmap, munmap};

use crate::sync::AtomicU64;
use crate::{IpcError, ShmSafe};

/// Seals every segment carries: its size is final, and nobody can lift that.
const SEALS: SealFlag = SealFlag::F_SEAL_SHRINK
    .union(SealFlag::F_SEAL_GROW)
    .union(SealFlag::F_SEAL_SEAL);

/// A mapped memfd, unmapped when dropped (after the last handle into it: every handle holds
/// an `Arc<Mapping>`).
pub(crate) struct Mapping {
    base: NonNull<u8>,
    len: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is plain shared memory owned by this value; every access to it goes
// through atomics (see `words`), so the pointer may move to and be used from any thread.
unsafe impl Send for Mapping {}
// SAFETY: as for `Send`: `&Mapping` only hands out the base pointer, used through atomics.
unsafe impl Sync for Mapping {}

fn os(op: &'static str) -> impl FnOnce(nix::errno::Errno) -> IpcError {
    move |source| IpcError::Os { op, source }
}

impl Mapping {
    /// A new zero-filled, sealed memfd of `len` bytes, mapped read-write.
    pub(crate) fn create(len: usize) -> Result<Mapping, IpcError> {
        let fd = memfd_create(
            c"hearth-segment",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )
        .map_err(os("memfd_create"))?;
        let size = i64::try_from(len).map_err(|_| IpcError::BadSegment {
            area: "segment",
            reason: format!("{len} bytes do not fit a file size"),
        })?;
        nix::unistd::ftruncate(&fd, size).map_err(os("ftruncate of the segment"))?;
        fcntl(&fd, FcntlArg::F_ADD_SEALS(SEALS)).map_err(os("fcntl(F_ADD_SEALS)"))?;
        Mapping::map(fd, len)
    }

    /// Map an inherited segment fd. The file must be sealed against shrinking and non-empty;
    /// its size is the mapping's length (the superblock is checked against it next).
    pub(crate) fn attach(fd: OwnedFd) -> Result<Mapping, IpcError> {
        let seals = fcntl(&fd, FcntlArg::F_GET_SEALS).map_err(os("fcntl(F_GET_SEALS)"))?;
        if !SealFlag::from_bits_truncate(seals).contains(SealFlag::F_SEAL_SHRINK) {
            return Err(IpcError::BadSegment {
                area: "segment",
                reason: "the file is not sealed against shrinking (F_SEAL_SHRINK)".into(),
            });
        }
        let stat = nix::sys::stat::fstat(&fd).map_err(os("fstat of the segment"))?;
        let len = usize::try_from(stat.st_size).unwrap_or(0);
        if len == 0 {
            return Err(IpcError::BadSegment {
                area: "segment",
                reason: "the file is empty".into(),
            });
        }
        Mapping::map(fd, len)
    }

    fn map(fd: OwnedFd, len: usize) -> Result<Mapping, IpcError> {
        let size = NonZeroUsize::new(len).ok_or_else(|| IpcError::BadSegment {
            area: "segment",
            reason: "zero length".into(),
        })?;
        // SAFETY: a fresh shared mapping of a file we hold; the file is sealed against
        // shrinking, so every mapped page stays backed, and Rust code only ever reaches the
        // bytes through atomics.
        let base = unsafe {
            mmap(
                None,
                size,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                &fd,
                0,
            )
        }
        .map_err(os("mmap of the segment"))?;
        Ok(Mapping {
            base: base.cast(),
            len,
            fd,
        })
    }

    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    /// Check that `len` bytes at `offset` lie inside the mapping, `align`-aligned.
    fn check(&self, offset: usize, len: usize, align: usize) -> *mut u8 {
        let fits = offset.checked_add(len).is_some_and(|end| end <= self.len);
        let ptr = self.base.as_ptr().wrapping_add(offset);
        // Offsets come from this crate's own planning or from geometry validated on attach; a
        // failure here is a bug in this crate, never something a peer can cause.
        assert!(
            fits && ptr.align_offset(align) == 0,
            "shared access of {len} bytes at {offset} is outside the {}-byte mapping or misaligned",
            self.len
        );
        ptr
    }

    /// The shared `T` at byte `offset` of the segment.
    ///
    /// # Panics
    /// If it does not lie inside the mapping, aligned (a bug in the caller's geometry).
    pub(crate) fn at<T: ShmSafe>(&self, offset: usize) -> &T {
        let ptr = self.check(offset, std::mem::size_of::<T>(), std::mem::align_of::<T>());
        // SAFETY: in bounds and aligned (checked above); the mapping lives as long as `&self`;
        // `T: ShmSafe` is valid for every bit pattern, and its live fields are atomics.
        unsafe { &*ptr.cast::<T>() }
    }

    /// `count` shared 8-byte words starting at byte `offset` of the segment.
    ///
    /// # Panics
    /// As for [`at`](Self::at).
    pub(crate) fn words(&self, offset: usize, count: usize) -> &[AtomicU64] {
        let ptr = self.check(offset, count * 8, 8);
        // SAFETY: in bounds and 8-aligned (checked above); the mapping lives as long as
        // `&self`; any bit pattern is a valid `AtomicU64`, and words are only used atomically.
        unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU64>(), count) }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` came from a successful mmap and are unmapped once, here, after
        // the last handle holding this `Mapping` is gone.
        let _ = unsafe { munmap(self.base.cast(), self.len) };
    }
}
