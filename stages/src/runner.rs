//! The threads blocking stage handlers run on, so a hung handler can be timed out or walked away
//! from on a stop.
//!
//! A handler cannot be interrupted safely, so a timeout or a cancel means walking away: the runner
//! thread that holds it is abandoned (it finishes in the background; its reply goes to a closed
//! channel and the thread then exits) and the next handler gets a fresh runner. Runners are pooled
//! so the common path is two channel hand-offs per handler and no thread spawn.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;

use crate::{CallContext, HandlerError, StageContext, StageHandler};

/// Idle runners kept for reuse; more only exist while that many stages run concurrently (a parallel
/// tool batch runs before_toolcall once per tool).
const MAX_IDLE_RUNNERS: usize = 4;

/// How often a wait for a blocking handler looks at the call's cancellation. A stop is answered by
/// the kernel at once whatever this is; this only bounds how long the stage's service thread stays
/// occupied by a handler it has already given up on.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(10);

/// How one handler invocation ended.
// `Returned` is the common case; boxing it would add an allocation per handler to shrink the rare ones.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Outcome {
    /// The handler returned; its copy of the context is handed back.
    Returned(StageContext, Result<(), HandlerError>),
    Panicked(String),
    TimedOut,
    /// The call was cancelled while the handler ran; it was abandoned.
    Cancelled,
}

struct Job {
    handler: Arc<dyn StageHandler>,
    call: CallContext,
    ctx: StageContext,
}

/// Run `handler` on `ctx` here, catching a panic: the one place a handler is called, whichever
/// thread it runs on.
pub(crate) fn invoke(
    handler: &dyn StageHandler,
    call: &CallContext,
    mut ctx: StageContext,
) -> Outcome {
    match panic::catch_unwind(AssertUnwindSafe(|| handler.handle(call, &mut ctx))) {
        Ok(result) => Outcome::Returned(ctx, result),
        Err(payload) => Outcome::Panicked(panic_message(payload.as_ref())),
    }
}

/// One persistent thread that runs handlers handed to it, one at a time.
struct Runner {
    jobs: Sender<Job>,
    replies: Receiver<Outcome>,
}

impl Runner {
    fn spawn() -> std::io::Result<Runner> {
        let (jobs, job_rx) = crossbeam_channel::bounded::<Job>(1);
        let (reply_tx, replies) = crossbeam_channel::bounded::<Outcome>(1);
        std::thread::Builder::new()
            .name("hearth-stage-runner".into())
            .spawn(move || {
                // Ends when the pool drops the runner (jobs closed) or abandons it (replies closed).
                while let Ok(job) = job_rx.recv() {
                    if reply_tx
                        .send(invoke(&*job.handler, &job.call, job.ctx))
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok(Runner { jobs, replies })
    }
}

pub(crate) use hearth_engine::panic_message;

/// Idle runners shared by every run of one pipeline.
#[derive(Default)]
pub(crate) struct RunnerPool {
    idle: Mutex<Vec<Runner>>,
}

impl RunnerPool {
    #[cfg(test)]
    pub(crate) fn idle_count(&self) -> usize {
        self.idle.lock().len()
    }
}

/// The runner one stage run uses; returned to the pool when the run ends.
pub(crate) struct Lease {
    pool: Arc<RunnerPool>,
    runner: Option<Runner>,
}

impl Lease {
    /// Borrow runners for one stage run; nothing is taken until the first handler needs one.
    pub(crate) fn new(pool: Arc<RunnerPool>) -> Lease {
        Lease { pool, runner: None }
    }

    /// Run `handler` on `ctx` on a runner, until `call`'s deadline or its cancellation.
    pub(crate) fn execute(
        &mut self,
        handler: &Arc<dyn StageHandler>,
        call: CallContext,
        ctx: StageContext,
    ) -> Outcome {
        let runner = match self.runner.take() {
            Some(r) => r,
            None => match self.pool.idle.lock().pop() {
                Some(r) => r,
                None => match Runner::spawn() {
                    Ok(r) => r,
                    Err(err) => return run_here(handler, &call, ctx, &err),
                },
            },
        };
        let deadline = call.deadline();
        let cancel = call.cancel().clone();
        let job = Job {
            handler: Arc::clone(handler),
            call,
            ctx,
        };
        if let Err(crossbeam_channel::SendError(job)) = runner.jobs.send(job) {
            // The thread is gone (it cannot normally exit while we hold both ends): run here instead.
            let err = std::io::Error::other("stage runner thread exited");
            return run_here(&job.handler, &job.call, job.ctx, &err);
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match runner.replies.recv_timeout(left.min(CANCEL_POLL)) {
                Ok(outcome) => {
                    self.runner = Some(runner);
                    return outcome;
                }
                // Returning drops `runner`, which abandons the thread still inside the handler.
                Err(RecvTimeoutError::Timeout) if left <= CANCEL_POLL => return Outcome::TimedOut,
                Err(RecvTimeoutError::Timeout) => {
                    if cancel.is_cancelled() {
                        return Outcome::Cancelled;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Outcome::Panicked("stage runner thread exited".to_owned());
                }
            }
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(runner) = self.runner.take() {
            let mut idle = self.pool.idle.lock();
            if idle.len() < MAX_IDLE_RUNNERS {
                idle.push(runner);
            }
        }
    }
}

/// Last resort when no thread can be started: isolation from panics is kept, the timeout is not.
fn run_here(
    handler: &Arc<dyn StageHandler>,
    call: &CallContext,
    ctx: StageContext,
    err: &std::io::Error,
) -> Outcome {
    tracing::warn!(%err, "no stage runner thread; running the handler here without a timeout");
    invoke(&**handler, call, ctx)
}
