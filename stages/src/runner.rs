//! The threads stage handlers run on, so a hung handler can be timed out.
//!
//! A handler cannot be interrupted safely, so a timeout means walking away: the runner thread that
//! holds it is abandoned (it finishes in the background; its reply goes to a closed channel and the
//! thread then exits) and the next handler gets a fresh runner. Runners are pooled so the common path
//! is two channel hand-offs per handler and no thread spawn.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;

use crate::{StageContext, StageHandler};

/// Idle runners kept for reuse; more only exist while that many stages run concurrently (a parallel
/// tool batch runs before_toolcall once per tool).
const MAX_IDLE_RUNNERS: usize = 4;

/// How one handler invocation ended.
// `Returned` is the common case; boxing it would add an allocation per handler to shrink the rare ones.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Outcome {
    /// The handler returned; its copy of the context is handed back.
    Returned(StageContext, Result<(), String>),
    Panicked(String),
    TimedOut,
}

struct Job {
    handler: Arc<dyn StageHandler>,
    ctx: StageContext,
}

#[allow(clippy::large_enum_variant)] // as for `Outcome`
enum Reply {
    Returned(StageContext, Result<(), String>),
    Panicked(String),
}

/// One persistent thread that runs handlers handed to it, one at a time.
struct Runner {
    jobs: Sender<Job>,
    replies: Receiver<Reply>,
}

impl Runner {
    fn spawn() -> std::io::Result<Runner> {
        let (jobs, job_rx) = crossbeam_channel::bounded::<Job>(1);
        let (reply_tx, replies) = crossbeam_channel::bounded::<Reply>(1);
        std::thread::Builder::new()
            .name("hearth-stage-runner".into())
            .spawn(move || {
                // Ends when the pool drops the runner (jobs closed) or abandons it (replies closed).
                while let Ok(job) = job_rx.recv() {
                    if reply_tx.send(invoke(job)).is_err() {
                        break;
                    }
                }
            })?;
        Ok(Runner { jobs, replies })
    }
}

fn invoke(job: Job) -> Reply {
    let Job { handler, mut ctx } = job;
    match panic::catch_unwind(AssertUnwindSafe(|| handler.handle(&mut ctx))) {
        Ok(result) => Reply::Returned(ctx, result),
        Err(payload) => Reply::Panicked(panic_message(payload.as_ref())),
    }
}

/// The text of a panic payload (`panic!` gives `&str` or `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Idle runners shared by every run of one pipeline.
#[derive(Default)]
pub(crate) struct RunnerPool {
    idle: Mutex<Vec<Runner>>,
}

impl RunnerPool {
    /// Borrow runners for one stage run; nothing is taken until the first handler needs one.
    pub(crate) fn lease(&self) -> Lease<'_> {
        Lease {
            pool: self,
            runner: None,
        }
    }

    #[cfg(test)]
    pub(crate) fn idle_count(&self) -> usize {
        self.idle.lock().len()
    }
}

/// The runner one stage run uses; returned to the pool when the run ends.
pub(crate) struct Lease<'a> {
    pool: &'a RunnerPool,
    runner: Option<Runner>,
}

impl Lease<'_> {
    /// Run `handler` on `ctx` with a time limit.
    pub(crate) fn execute(
        &mut self,
        handler: &Arc<dyn StageHandler>,
        ctx: StageContext,
        timeout: Duration,
    ) -> Outcome {
        let runner = match self.runner.take() {
            Some(r) => r,
            None => match self.pool.idle.lock().pop() {
                Some(r) => r,
                None => match Runner::spawn() {
                    Ok(r) => r,
                    Err(err) => return run_inline(handler, ctx, &err),
                },
            },
        };
        let job = Job {
            handler: Arc::clone(handler),
            ctx,
        };
        if let Err(crossbeam_channel::SendError(job)) = runner.jobs.send(job) {
            // The thread is gone (it cannot normally exit while we hold both ends): run here instead.
            let err = std::io::Error::other("stage runner thread exited");
            return run_inline(&job.handler, job.ctx, &err);
        }
        match runner.replies.recv_timeout(timeout) {
            Ok(Reply::Returned(ctx, result)) => {
                self.runner = Some(runner);
                Outcome::Returned(ctx, result)
            }
            Ok(Reply::Panicked(msg)) => {
                self.runner = Some(runner);
                Outcome::Panicked(msg)
            }
            // Dropping `runner` here abandons the thread still inside the handler.
            Err(RecvTimeoutError::Timeout) => Outcome::TimedOut,
            Err(RecvTimeoutError::Disconnected) => {
                Outcome::Panicked("stage runner thread exited".to_owned())
            }
        }
    }
}

impl Drop for Lease<'_> {
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
fn run_inline(handler: &Arc<dyn StageHandler>, ctx: StageContext, err: &std::io::Error) -> Outcome {
    tracing::warn!(%err, "no stage runner thread; running the handler inline without a timeout");
    match invoke(Job {
        handler: Arc::clone(handler),
        ctx,
    }) {
        Reply::Returned(ctx, result) => Outcome::Returned(ctx, result),
        Reply::Panicked(msg) => Outcome::Panicked(msg),
    }
}
