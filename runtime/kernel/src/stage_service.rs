//! Blocking stage handlers off the kernel's worker. The turn engine starts a stage on its worker
//! (inline handlers run there, at no hop); when a blocking handler is next, the rest of the stage
//! arrives here as a [`StageJob`] and its result goes back through a typed sink, like an LLM call
//! or a tool batch. Meanwhile the kernel keeps taking stops and interrupts; a stop cancels the
//! job through the task's token and the job ends within milliseconds, its writes discarded.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use hearth_engine::{Sink, panic_message};
use hearth_stages::{StageDone, StageJob};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Jobs waiting for a service thread. One task runs at a time, so at most one job waits for its
/// answer; the rest are `after_output` observers whose results nobody waits for.
pub const STAGE_QUEUE: usize = 64;
/// Service threads: one for the running task's stage, one so a slow `after_output` observer never
/// delays the next task's stage.
pub const STAGE_THREADS: usize = 2;

/// The end of one stage job, as the service reports it.
#[derive(Debug)]
pub struct StageJobDone {
    /// The call number given to [`StageService::submit`].
    pub call: u64,
    /// The context after the stage and what ran; `None` if the job panicked outside any handler
    /// (handlers' own panics are caught and reported inside `done`).
    pub done: Option<StageDone>,
}

struct Queued {
    call: u64,
    job: StageJob,
    /// Whether anyone waits for the result (after_output is fire-and-forget).
    report: bool,
}

/// The stage service: a bounded queue and [`STAGE_THREADS`] threads that run jobs to their end.
#[derive(Clone, Debug)]
pub struct StageService {
    tx: Sender<Queued>,
}

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queued").field("call", &self.call).finish()
    }
}

impl StageService {
    /// Starts the service threads; results go to `done`.
    pub fn start(done: Sink<StageJobDone>) -> std::io::Result<StageService> {
        let (tx, rx) = crossbeam_channel::bounded::<Queued>(STAGE_QUEUE);
        for _ in 0..STAGE_THREADS {
            let rx: Receiver<Queued> = rx.clone();
            let done = done.clone();
            std::thread::Builder::new()
                .name("hearth-stage".into())
                .spawn(move || {
                    // Ends when the kernel (every sender) is gone.
                    for Queued { call, job, report } in rx {
                        let ran = catch_unwind(AssertUnwindSafe(|| job.run()));
                        let done_ok = match ran {
                            Ok(d) => Some(d),
                            Err(p) => {
                                tracing::error!("stage job panicked: {}", panic_message(&*p));
                                None
                            }
                        };
                        if report {
                            done.send(StageJobDone {
                                call,
                                done: done_ok,
                            });
                        }
                    }
                })?;
        }
        Ok(StageService { tx })
    }

    /// Hands a job over; its result arrives on the sink with `call`. `report: false` runs it
    /// without reporting (observers nobody waits for). A full queue hands the job back.
    pub fn submit(&self, call: u64, job: StageJob, report: bool) -> Result<(), StageJob> {
        match self.tx.try_send(Queued { call, job, report }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(q) | TrySendError::Disconnected(q)) => Err(q.job),
        }
    }
}
