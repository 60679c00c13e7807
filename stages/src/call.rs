//! What every handler call is told about itself: for which task, on whose behalf, until when.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{Cancel, HandlerError, Trust};

/// Who a call is made for: the input's source and the trust the ingress gave it, and which of
/// its inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The input's source (the channel it came from: `cli`, `qq`, `kernel`, ...).
    pub source: String,
    /// The plugin that sent the input, when a plugin did.
    pub plugin: Option<String>,
    /// What the source may do.
    pub trust: Trust,
    /// The input's request id, what memory names its turn by (empty outside an input): a fact
    /// a tool stores is then known to come from that turn.
    pub turn: String,
}

impl Caller {
    /// A caller from `source` with `trust`, not sent by a plugin.
    pub fn new(source: impl Into<String>, trust: Trust) -> Caller {
        Caller {
            source: source.into(),
            plugin: None,
            trust,
            turn: String::new(),
        }
    }

    /// The kernel acting on its own (heartbeats, consolidation, calls outside any input).
    pub fn kernel() -> Caller {
        Caller::new("kernel", Trust::Kernel)
    }

    /// The same caller, sent by `plugin`.
    pub fn with_plugin(mut self, plugin: impl Into<String>) -> Caller {
        self.plugin = Some(plugin.into());
        self
    }

    /// The same caller, for the input whose request id is `turn`.
    pub fn in_turn(mut self, turn: impl Into<String>) -> Caller {
        self.turn = turn.into();
        self
    }
}

/// The context of one handler call (a tool, a stage handler, an output channel).
///
/// Cloning is two reference-count increments: the pipeline hands each handler its own copy with
/// the deadline narrowed to that handler's timeout.
#[derive(Debug, Clone)]
pub struct CallContext {
    task_id: u64,
    caller: Arc<Caller>,
    cancel: Cancel,
    deadline: Instant,
}

impl CallContext {
    /// A call for task `task_id` (0 when there is no task), on behalf of `caller`, cancelled
    /// through `cancel`, due by `deadline`.
    pub fn new(task_id: u64, caller: Caller, cancel: Cancel, deadline: Instant) -> CallContext {
        CallContext {
            task_id,
            caller: Arc::new(caller),
            cancel,
            deadline,
        }
    }

    /// A kernel call outside any task that nothing cancels, due `within` from now.
    pub fn kernel(within: Duration) -> CallContext {
        CallContext::new(
            0,
            Caller::kernel(),
            Cancel::never(),
            Instant::now() + within,
        )
    }

    /// The task this call serves (0 outside a task).
    pub fn task_id(&self) -> u64 {
        self.task_id
    }

    /// On whose behalf the call is made.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The caller's trust.
    pub fn trust(&self) -> Trust {
        self.caller.trust
    }

    /// The call's cancellation, to hand on to work the handler starts itself.
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// Whether the call has been cancelled (a stop): the handler should return
    /// [`HandlerError::Cancelled`] at its next chance.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// When the caller stops waiting.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// How long is left before the deadline (zero once it passed).
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// `Err(Cancelled)` once cancelled, `Err(TimedOut)` once past the deadline, else `Ok`: a
    /// handler's `ctx.check()?` between steps.
    pub fn check(&self) -> Result<(), HandlerError> {
        if self.is_cancelled() {
            Err(HandlerError::Cancelled)
        } else if Instant::now() >= self.deadline {
            Err(HandlerError::TimedOut)
        } else {
            Ok(())
        }
    }

    /// The same call due by `deadline` or its own deadline, whichever comes first.
    pub fn narrowed(&self, deadline: Instant) -> CallContext {
        CallContext {
            deadline: deadline.min(self.deadline),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[test]
    fn check_reports_cancel_before_deadline_and_narrowing_never_widens() {
        let flag = Arc::new(AtomicBool::new(false));
        let caller = Caller::new("qq", Trust::External).with_plugin("qqbridge");
        let far = Instant::now() + Duration::from_secs(60);
        let call = CallContext::new(7, caller.clone(), Cancel::flag(Arc::clone(&flag)), far);
        assert_eq!((call.task_id(), call.trust()), (7, Trust::External));
        assert_eq!(call.caller(), &caller);
        assert_eq!(call.check(), Ok(()));
        assert!(call.remaining() > Duration::from_secs(59));

        let soon = Instant::now() + Duration::from_millis(5);
        assert_eq!(call.narrowed(soon).deadline(), soon);
        let later = far + Duration::from_secs(60);
        assert_eq!(
            call.narrowed(later).deadline(),
            far,
            "narrowing never widens"
        );

        let past = call.narrowed(Instant::now());
        assert_eq!(past.check(), Err(HandlerError::TimedOut));
        assert_eq!(past.remaining(), Duration::ZERO);
        flag.store(true, Ordering::Release);
        // Cancellation wins over the deadline, and every derived context sees it.
        assert_eq!(past.check(), Err(HandlerError::Cancelled));
        assert!(call.is_cancelled() && call.cancel().is_cancelled());
    }

    #[test]
    fn a_kernel_call_is_trusted_and_never_cancelled() {
        let call = CallContext::kernel(Duration::from_secs(1));
        assert_eq!(call.task_id(), 0);
        assert_eq!(call.caller(), &Caller::kernel());
        assert!(call.trust().is_trusted());
        assert!(!call.is_cancelled());
        assert_eq!(call.check(), Ok(()));
    }
}
