//! The read side of a cancellation, as handlers see it.
//!
//! There is one cancellation token in Hearth, the engine's: it is what a stop fires, and it also
//! closes sockets and ends LLM streams through its hooks. This crate does not depend on the engine,
//! so a handler gets a [`Cancel`]: a cheap clonable view that can only ask "has it fired?". The
//! kernel builds it from its token (`Cancel::observe(move || token.is_cancelled())`), so a handler
//! and an LLM call of the same task see the same stop. A second token type that could itself be
//! fired would let the two disagree; a view cannot.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

type Probe = dyn Fn() -> bool + Send + Sync;

/// Whether the call a handler is running for has been cancelled.
///
/// A handler that can stop early polls [`Cancel::is_cancelled`] (or `CallContext::check`) between
/// units of work and returns `HandlerError::Cancelled`. Checking is one indirect call and usually
/// one atomic load.
#[derive(Clone, Default)]
pub struct Cancel {
    /// `None` is "never cancelled": the common case for calls not tied to a task costs nothing.
    probe: Option<Arc<Probe>>,
}

impl Cancel {
    /// A call nothing can cancel.
    pub const fn never() -> Cancel {
        Cancel { probe: None }
    }

    /// A view of some other cancellation, read through `probe` (which must be cheap and must
    /// never block: handlers call it in loops).
    pub fn observe(probe: impl Fn() -> bool + Send + Sync + 'static) -> Cancel {
        Cancel {
            probe: Some(Arc::new(probe)),
        }
    }

    /// A view of a plain flag set by whoever cancels.
    pub fn flag(flag: Arc<AtomicBool>) -> Cancel {
        // SYNC: pairs with the canceller's Release (or stronger) store, so whatever it wrote before
        // cancelling is visible to a handler that sees the flag.
        Cancel::observe(move || flag.load(Ordering::Acquire))
    }

    /// Whether the call has been cancelled; once true it stays true.
    pub fn is_cancelled(&self) -> bool {
        self.probe.as_ref().is_some_and(|probe| probe())
    }
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_stays_false_and_a_flag_is_seen_by_every_clone() {
        assert!(!Cancel::never().is_cancelled());
        assert!(!Cancel::default().is_cancelled());
        let flag = Arc::new(AtomicBool::new(false));
        let cancel = Cancel::flag(Arc::clone(&flag));
        let clone = cancel.clone();
        assert!(!cancel.is_cancelled());
        flag.store(true, Ordering::Release);
        assert!(cancel.is_cancelled() && clone.is_cancelled());
        assert_eq!(format!("{clone:?}"), "Cancel { cancelled: true }");
    }
}
