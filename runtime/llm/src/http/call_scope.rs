//! Which call a pooled connection is working for. One `ureq` agent serves every call so its
//! connections are kept alive between calls, but its resolver, connector and transports are
//! shared while the cancel token and the stream deadline belong to one call. `ureq` runs a
//! request's name lookup, connect, request write and head read on the calling thread, so the
//! client enters the call's [`CallBinding`] on that thread for the length of `Agent::run`, and
//! the connection layer reads it from there; a transport taken from the pool re-binds itself to
//! the new call on its first write.

use super::deadline::ReadDeadline;
use hearth_engine::CancelToken;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The per-call state the shared connection layer needs.
#[derive(Debug)]
pub(super) struct CallBinding {
    id: u64,
    /// Fired by a stop or a deadline; shuts the bound socket down.
    pub(super) cancel: CancelToken,
    /// A streamed call's first-event, idle and total limits, applied to every socket read.
    pub(super) deadline: Option<Arc<ReadDeadline>>,
    reused: AtomicBool,
}

/// Distinguishes calls; starts at 1 so 0 can mean "bound to no call yet".
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

impl CallBinding {
    pub(super) fn new(cancel: CancelToken, deadline: Option<Arc<ReadDeadline>>) -> Arc<Self> {
        Arc::new(Self {
            id: NEXT_CALL.fetch_add(1, Ordering::Relaxed),
            cancel,
            deadline,
            reused: AtomicBool::new(false),
        })
    }

    /// This call's number, never 0.
    pub(super) fn id(&self) -> u64 {
        self.id
    }

    /// Records that the call runs on a connection an earlier call opened.
    pub(super) fn mark_reused(&self) {
        self.reused.store(true, Ordering::Relaxed);
    }

    /// Whether the call ran on a connection an earlier call opened, which the server may have
    /// closed while it sat idle.
    pub(super) fn reused(&self) -> bool {
        self.reused.load(Ordering::Relaxed)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<CallBinding>>> = const { RefCell::new(None) };
}

/// The call this thread is running inside `Agent::run`, if any.
pub(super) fn current() -> Option<Arc<CallBinding>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Makes `call` this thread's current call until the guard drops (a panic included).
pub(super) fn enter(call: &Arc<CallBinding>) -> Entered {
    let previous = CURRENT.with(|c| c.replace(Some(call.clone())));
    Entered { previous }
}

/// Restores the thread's previous call when dropped.
pub(super) struct Entered {
    previous: Option<Arc<CallBinding>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_current_only_inside_its_scope_and_scopes_nest() {
        assert!(current().is_none());
        let outer = CallBinding::new(CancelToken::new(), None);
        let inner = CallBinding::new(CancelToken::new(), None);
        assert_ne!(outer.id(), inner.id());
        {
            let _o = enter(&outer);
            assert_eq!(current().map(|c| c.id()), Some(outer.id()));
            {
                let _i = enter(&inner);
                assert_eq!(current().map(|c| c.id()), Some(inner.id()));
            }
            assert_eq!(current().map(|c| c.id()), Some(outer.id()));
            // Another thread sees no call: body reads elsewhere keep the binding they have.
            assert!(std::thread::spawn(|| current().is_none()).join().unwrap());
        }
        assert!(current().is_none());
    }
}
