//! What a handler knows about the call it serves.

use std::time::{Duration, Instant};

use hearth_rpc::{CancelToken, Trust, WireContext};

use crate::host::Host;

/// The context of one tool, stage or output call: the task, the caller and its trust, the
/// deadline, cancellation, and the kernel to call back on the task's behalf.
pub struct CallContext {
    wire: WireContext,
    cancel: CancelToken,
    deadline: Option<Instant>,
    host: Host,
}

impl CallContext {
    pub(crate) fn new(wire: WireContext, cancel: CancelToken, host: &Host) -> CallContext {
        let deadline = wire.deadline_from(Instant::now());
        CallContext {
            host: host.for_call(wire.clone(), deadline),
            wire,
            cancel,
            deadline,
        }
    }

    /// The kernel task this call serves (empty outside a task).
    pub fn task_id(&self) -> &str {
        &self.wire.task_id
    }

    /// Who started the task: `"kernel"` or a plugin or channel name.
    pub fn caller(&self) -> &str {
        &self.wire.caller
    }

    /// How far the caller is trusted.
    pub fn trust(&self) -> Trust {
        self.wire.trust
    }

    /// Whether the kernel cancelled the call; long handlers poll this and return
    /// [`ToolError::cancelled`](crate::ToolError::cancelled).
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// When the kernel stops waiting, if it set a deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Time left before the deadline (`None`: no deadline).
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// The kernel, called on this task's behalf.
    pub fn host(&self) -> &Host {
        &self.host
    }
}
