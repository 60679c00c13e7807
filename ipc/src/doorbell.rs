//! An eventfd a plugin's ring reader sleeps on, so it can wait in `poll`/`epoll` beside its
//! other fds (its control pipe, its own sockets) instead of in a futex call of its own.
//!
//! The kernel keeps one doorbell per plugin child and passes the child its own copy as fd 4
//! ([`DOORBELL_FD`](crate::DOORBELL_FD)). The publisher rings every registered doorbell only
//! when the ring header's `bell_parked` count says some reader is asleep on one (the same
//! Dekker handshake as the futex path, `ipc/DESIGN.md` §1.7), so publishing into a ring whose
//! plugins are busy costs no syscall. A ring of a doorbell nobody was waiting for only leaves
//! the counter non-zero: that reader's next wait returns at once, finds nothing new, and
//! sleeps again: a spurious wake, never a lost one.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::eventfd::{EfdFlags, EventFd};

use crate::IpcError;

/// A non-blocking eventfd used as a wake-up line from the kernel's publisher to one plugin.
#[derive(Debug)]
pub struct Doorbell {
    fd: EventFd,
}

impl Doorbell {
    /// A fresh doorbell (close-on-exec; the spawn code hands the child a copy at fd 4).
    pub fn new() -> Result<Doorbell, IpcError> {
        let fd = EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK).map_err(
            |source| IpcError::Os {
                op: "eventfd",
                source,
            },
        )?;
        Ok(Doorbell { fd })
    }

    /// Adopt an inherited fd (a plugin's fd 4). Refused unless it is an eventfd; it is made
    /// non-blocking, so draining it never sleeps.
    pub fn from_fd(fd: OwnedFd) -> Result<Doorbell, IpcError> {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        match link {
            Ok(target) if target.as_os_str() == "anon_inode:[eventfd]" => {}
            Ok(target) => {
                return Err(IpcError::NotADoorbell {
                    fd: fd.as_raw_fd(),
                    found: target.display().to_string(),
                });
            }
            Err(err) => {
                return Err(IpcError::NotADoorbell {
                    fd: fd.as_raw_fd(),
                    found: err.to_string(),
                });
            }
        }
        let flags = fcntl(&fd, FcntlArg::F_GETFL).map_err(|source| IpcError::Os {
            op: "fcntl(F_GETFL) on the doorbell",
            source,
        })?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(&fd, FcntlArg::F_SETFL(flags)).map_err(|source| IpcError::Os {
            op: "fcntl(F_SETFL) on the doorbell",
            source,
        })?;
        // SAFETY: checked just above that the fd is an eventfd.
        Ok(Doorbell {
            fd: unsafe { EventFd::from_owned_fd(fd) },
        })
    }

    /// Another handle to the same eventfd (close-on-exec), e.g. the copy a child inherits.
    pub fn try_clone(&self) -> Result<Doorbell, IpcError> {
        let fd = self
            .fd
            .as_fd()
            .try_clone_to_owned()
            .map_err(|err| IpcError::Os {
                op: "dup of the doorbell",
                source: Errno::from_raw(err.raw_os_error().unwrap_or(0)),
            })?;
        // SAFETY: a duplicate of an eventfd is that eventfd.
        Ok(Doorbell {
            fd: unsafe { EventFd::from_owned_fd(fd) },
        })
    }

    /// Make the doorbell readable. Never blocks: a counter at its maximum (2^64 − 2 rings
    /// nobody drained) is already readable, so the `EAGAIN` it gives is ignored.
    #[inline]
    pub fn ring(&self) {
        let _ = self.fd.write(1);
    }

    /// Sleep until the doorbell is rung or `timeout` passes, then drain it. Returns whether it
    /// had been rung. Spurious wakes are allowed; callers re-check their condition.
    pub fn wait(&self, timeout: Duration) -> bool {
        let mut pollfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(timeout.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
        // SAFETY: `pollfd` is one valid, initialised entry that lives for the call.
        let ready = unsafe { libc::poll(&mut pollfd, 1, millis) };
        ready > 0 && self.drain()
    }

    /// Reset the counter without sleeping; returns whether it had been rung.
    pub fn drain(&self) -> bool {
        self.fd.read().is_ok()
    }
}

impl AsFd for Doorbell {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// The doorbells a publisher rings, shared between the publisher and whoever starts and stops
/// the processes that sleep on them (the plugin host adds one per child, removes it on exit).
///
/// The list is behind a mutex taken only on the publisher's cold wake path (some reader is
/// parked on a doorbell) and by `add`/`remove`; publishing to a ring nobody sleeps on never
/// touches it.
#[derive(Debug, Clone, Default)]
pub struct Doorbells {
    inner: std::sync::Arc<std::sync::Mutex<DoorbellList>>,
}

#[derive(Debug, Default)]
struct DoorbellList {
    bells: Vec<(u64, Doorbell)>,
    next_id: u64,
}

impl Doorbells {
    fn list(&self) -> std::sync::MutexGuard<'_, DoorbellList> {
        // A panic while holding the list leaves it consistent (each operation is one push or
        // swap_remove), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ring `doorbell` from now on; returns its id for [`remove`](Self::remove).
    pub fn add(&self, doorbell: Doorbell) -> u64 {
        let mut list = self.list();
        let id = list.next_id;
        list.next_id += 1;
        list.bells.push((id, doorbell));
        id
    }

    /// Stop ringing doorbell `id`; returns it, or `None` for an unknown id.
    pub fn remove(&self, id: u64) -> Option<Doorbell> {
        let mut list = self.list();
        let index = list.bells.iter().position(|(bell, _)| *bell == id)?;
        Some(list.bells.swap_remove(index).1)
    }

    /// Doorbells registered now.
    pub fn len(&self) -> usize {
        self.list().bells.len()
    }

    /// Whether none is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ring every doorbell but `spare`'s; returns how many were rung (one syscall each).
    pub(crate) fn ring_all_but(&self, spare: Option<u64>) -> u64 {
        let list = self.list();
        let mut rung = 0;
        for (id, bell) in &list.bells {
            if Some(*id) != spare {
                bell.ring();
                rung += 1;
            }
        }
        rung
    }
}
