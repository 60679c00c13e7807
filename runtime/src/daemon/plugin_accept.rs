//! A plugin's injected input (`io.injectText`, `io.injectMedia`, …) is acknowledged once it is
//! journaled and in the kernel's queue, the way a client's `accepted` line is: an injection
//! answered `{}` survives a crash of the daemon, and one the kernel refused (media that cannot
//! be stored, a trust that does not allow it, a full queue) is the call's error, not a reply
//! nobody reads. The reply itself goes to the channel's output; nobody waits for it here.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use hearth_kernel::KernelError;
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::input::{InputEvent, Reply, ReplyListener};
use hearth_rpc::{ErrorKind, HandlerError};

/// How long an injection waits for the journal's commit and the kernel's queue: well past a
/// commit's fsync, short of a plugin's call deadline.
const ACCEPT_WAIT: Duration = Duration::from_secs(20);

/// What became of a submitted input first.
enum Outcome {
    /// The kernel's queue holds it.
    Admitted,
    /// It was answered before it reached the queue: refused.
    Replied,
}

/// Tells [`accept`] the first thing that happens to its input.
struct Latch(Sender<Outcome>);

impl ReplyListener for Latch {
    fn admitted(&self, _request_id: &str) {
        let _ = self.0.try_send(Outcome::Admitted);
    }

    fn replied(&self) {
        let _ = self.0.try_send(Outcome::Replied);
    }
}

/// Journals and queues `input` (an interrupt when `interrupt`); `Ok` once the kernel's queue
/// holds it, the refusal as the error otherwise.
pub(super) fn accept(
    handle: &KernelHandle,
    mut input: InputEvent,
    interrupt: bool,
) -> Result<(), HandlerError> {
    let (reply_tx, reply_rx) = bounded(1);
    // Admitted, then replied: both fit, so the listener never blocks the kernel.
    let (seen_tx, seen_rx) = bounded(2);
    input.reply_to(reply_tx, Arc::new(Latch(seen_tx)));
    let id = input.request_id.clone();
    if let Err(e) = handle.submit_durably(input, interrupt) {
        let kind = match e {
            KernelError::Denied => ErrorKind::Denied,
            _ => ErrorKind::Unavailable,
        };
        return Err(HandlerError::new(kind, format!("input {id}: {e}")));
    }
    match seen_rx.recv_timeout(ACCEPT_WAIT) {
        Ok(Outcome::Admitted) => Ok(()),
        Ok(Outcome::Replied) => Err(refusal(&id, &reply_rx)),
        Err(_) => Err(HandlerError::new(
            ErrorKind::TimedOut,
            format!(
                "input {id} was not queued within {} s; it may still run",
                ACCEPT_WAIT.as_secs()
            ),
        )),
    }
}

/// The error for an input answered before it was queued.
fn refusal(id: &str, replies: &Receiver<Reply>) -> HandlerError {
    let Ok(reply) = replies.try_recv() else {
        return HandlerError::new(ErrorKind::Failed, format!("input {id} was not accepted"));
    };
    if reply.skipped {
        let why = reply.reason.as_deref().unwrap_or("skipped");
        return HandlerError::new(
            ErrorKind::Unavailable,
            format!("input {id} was not queued: {why}"),
        );
    }
    HandlerError::new(ErrorKind::Failed, format!("input {id}: {}", reply.content))
}
