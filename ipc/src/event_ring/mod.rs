//! The per-token event ring: one publisher, any number of readers, lossy for the slow.
//!
//! A region of fixed slots stamped with sequence numbers plus a payload area that wraps
//! (design §4.5: the original's payload arena never reset). The publisher never blocks,
//! never allocates and makes no syscall while no reader is parked; a reader that falls more
//! than the ring's history behind is told how many events it missed and resumes at the
//! oldest intact one. Readers validate every copy seqlock-style, so a payload is delivered
//! whole or not at all. The byte layout is in `ipc/DESIGN.md`.

mod config;
mod layout;
mod publisher;
mod reader;
mod region;

#[cfg(not(loom))]
pub(crate) use region::KeepAlive;

#[cfg(not(loom))]
use std::ptr::NonNull;

pub use config::RingConfig;
pub use publisher::Publisher;
pub use reader::{Armed, ReadResult, Reader, Subscriber};

use crate::IpcError;
use crate::sync::Arc;
use region::Shared;

/// A freshly laid-out ring, not yet split into its one [`Publisher`] and its [`Subscriber`].
pub struct EventRing {
    shared: Shared,
}

impl EventRing {
    /// A ring in its own page-aligned heap region (private to this process).
    pub fn new(config: RingConfig) -> Result<EventRing, IpcError> {
        Ok(EventRing {
            shared: Shared::new(config)?,
        })
    }

    /// Lay a ring out over a caller's mapping (e.g. a memfd mapped `MAP_SHARED`), so other
    /// processes can [`attach`](Self::attach) to it. Wakes use process-shared futexes.
    ///
    /// # Errors
    /// An invalid config, a misaligned `base`, or `len` below `config.region_len()`.
    ///
    /// # Safety
    /// `base..base + len` must be readable and writable memory that stays mapped for as long
    /// as any handle made from this ring lives, and that nobody else reads or writes until
    /// this function returns.
    #[cfg(not(loom))]
    pub unsafe fn init_in(
        base: NonNull<u8>,
        len: usize,
        config: RingConfig,
    ) -> Result<EventRing, IpcError> {
        // SAFETY: forwarded verbatim from this function's contract.
        let shared = unsafe { Shared::init_in(base, len, config, None)? };
        Ok(EventRing { shared })
    }

    /// [`init_in`](Self::init_in) over a mapping owned by `keep`, which every handle holds.
    ///
    /// # Safety
    /// As for `init_in`, except that the mapping only has to live as long as `keep` does.
    #[cfg(not(loom))]
    pub(crate) unsafe fn init_in_kept(
        base: NonNull<u8>,
        len: usize,
        config: RingConfig,
        keep: region::KeepAlive,
    ) -> Result<EventRing, IpcError> {
        // SAFETY: forwarded from this function's contract; `keep` outlives every handle.
        let shared = unsafe { Shared::init_in(base, len, config, Some(keep))? };
        Ok(EventRing { shared })
    }

    /// [`attach`](Self::attach) over a mapping owned by `keep`, which every handle holds.
    ///
    /// # Safety
    /// As for `attach`, except that the mapping only has to live as long as `keep` does.
    #[cfg(not(loom))]
    pub(crate) unsafe fn attach_kept(
        base: NonNull<u8>,
        len: usize,
        keep: region::KeepAlive,
    ) -> Result<Subscriber, IpcError> {
        // SAFETY: forwarded from this function's contract; `keep` outlives every handle.
        let shared = unsafe { Shared::attach(base, len, Some(keep))? };
        Ok(Subscriber::new(Arc::new(shared)))
    }

    /// Read an existing ring through a mapping of its region. The header is validated:
    /// magic, layout version, geometry in range and every section inside `len` bytes.
    ///
    /// # Errors
    /// [`IpcError::BadMagic`], [`IpcError::BadVersion`] or [`IpcError::BadRegion`].
    ///
    /// # Safety
    /// `base..base + len` must be readable and writable memory holding a ring laid out by
    /// [`init_in`](Self::init_in) (in this or another process; if another, mapped
    /// `MAP_SHARED`), and it must stay mapped for as long as any handle made from the
    /// returned subscriber lives. A corrupt peer can make readers return garbage events
    /// (still bounds-checked), never read outside the region.
    #[cfg(not(loom))]
    pub unsafe fn attach(base: NonNull<u8>, len: usize) -> Result<Subscriber, IpcError> {
        // SAFETY: forwarded verbatim from this function's contract.
        let shared = unsafe { Shared::attach(base, len, None)? };
        Ok(Subscriber::new(Arc::new(shared)))
    }

    /// The ring's geometry.
    pub fn config(&self) -> RingConfig {
        *self.shared.config()
    }

    /// Split into the ring's only publisher and a cloneable subscriber.
    pub fn split(self) -> (Publisher, Subscriber) {
        let shared = Arc::new(self.shared);
        let subscriber = Subscriber::new(Arc::clone(&shared));
        (Publisher::new(shared), subscriber)
    }
}

impl std::fmt::Debug for EventRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRing")
            .field("config", self.shared.config())
            .finish()
    }
}

#[cfg(all(test, loom))]
mod loom_wake;
#[cfg(all(test, not(loom)))]
mod tests;
