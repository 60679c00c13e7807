//! Blocking stage handlers off the kernel's worker. The turn engine starts a stage on its worker
//! (inline handlers run there, at no hop); when a blocking handler is next, the rest of the stage
//! arrives here as a [`StageJob`] and its result goes back through a typed sink, like an LLM call
//! or a tool batch. Meanwhile the kernel keeps taking stops and interrupts; a stop cancels the
//! job through the task's token and the job ends within milliseconds, its writes discarded.

use crossbeam_channel::{Receiver, Sender, TrySendError};
use hearth_engine::{Sink, panic_message};
use hearth_stages::{StageDone, StageJob};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Jobs waiting on each of the two lanes. One task runs at a time, so at most one job waits on
/// the awaited lane; the observers' lane holds `after_output` jobs whose results nobody waits for,
/// and an observer that finds it full is skipped (with a warning), never run on the worker.
pub const STAGE_QUEUE: usize = 64;
/// Service threads: one for the stage the running task waits for, one for observers, so a slow
/// `after_output` observer never delays the next task's stage.
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
}

/// The stage service: two bounded lanes, each with its own thread that runs jobs to their end.
#[derive(Clone, Debug)]
pub struct StageService {
    /// Jobs the running task waits for; their results go to the sink.
    awaited: Sender<Queued>,
    /// `after_output` observers, run without reporting.
    observers: Sender<Queued>,
}

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queued").field("call", &self.call).finish()
    }
}

impl StageService {
    /// Starts the service threads; results go to `done`.
    pub fn start(done: Sink<StageJobDone>) -> std::io::Result<StageService> {
        let (awaited, awaited_rx) = crossbeam_channel::bounded::<Queued>(STAGE_QUEUE);
        let (observers, observers_rx) = crossbeam_channel::bounded::<Queued>(STAGE_QUEUE);
        spawn_lane(awaited_rx, Some(done))?;
        spawn_lane(observers_rx, None)?;
        Ok(StageService { awaited, observers })
    }

    /// Hands a job over; its result arrives on the sink with `call`. `report: false` runs it
    /// without reporting (observers nobody waits for). A full lane, or a service already
    /// stopped, hands the job back.
    pub fn submit(&self, call: u64, job: StageJob, report: bool) -> Result<(), StageJob> {
        let lane = if report {
            &self.awaited
        } else {
            &self.observers
        };
        match lane.try_send(Queued { call, job }) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(q) | TrySendError::Disconnected(q)) => Err(q.job),
        }
    }
}

/// One lane's thread: runs each job to its end and reports it to `done` when someone waits.
fn spawn_lane(rx: Receiver<Queued>, done: Option<Sink<StageJobDone>>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("hearth-stage".into())
        .spawn(move || {
            // Ends when the kernel (every sender) is gone.
            for Queued { call, job } in rx {
                let ran = catch_unwind(AssertUnwindSafe(|| job.run()));
                let done_ok = match ran {
                    Ok(d) => Some(d),
                    Err(p) => {
                        tracing::error!("stage job panicked: {}", panic_message(&*p));
                        None
                    }
                };
                if let Some(done) = &done {
                    done.send(StageJobDone {
                        call,
                        done: done_ok,
                    });
                }
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_stages::{
        CallContext, Caller, HandlerSpec, Stage, StageContext, StagePipeline, StageStep,
    };
    use hearth_testkit::within;
    use std::time::{Duration, Instant};

    fn pending(pipeline: &StagePipeline, stage: Stage) -> StageJob {
        let call = CallContext::new(
            1,
            Caller::kernel(),
            hearth_stages::Cancel::never(),
            Instant::now() + Duration::from_secs(30),
        );
        match pipeline.start(stage, &call, StageContext::default()) {
            StageStep::Pending(job) => job,
            StageStep::Done(_) => panic!("a blocking handler makes the stage pending"),
        }
    }

    /// Observers stuck in a slow handler fill their lane: the stage a task waits for still
    /// runs at once, and one more observer is handed back instead of queued.
    #[test]
    fn a_waited_stage_never_queues_behind_stuck_observers() {
        within(Duration::from_secs(30), || {
            let (release_tx, release_rx) = crossbeam_channel::unbounded::<()>();
            let pipeline = StagePipeline::new();
            pipeline.register(
                Stage::AfterOutput,
                HandlerSpec::new("slow-observer"),
                move |_: &CallContext, _: &mut StageContext| {
                    let _ = release_rx.recv();
                    Ok(())
                },
            );
            pipeline.register(
                Stage::PreAction,
                HandlerSpec::new("quick"),
                |_: &CallContext, _: &mut StageContext| Ok(()),
            );
            let (done_tx, done_rx) = crossbeam_channel::unbounded();
            let service = StageService::start(Sink::new(move |d: StageJobDone| {
                let _ = done_tx.send(d.call);
            }))
            .expect("service starts");
            // One observer runs (and blocks); the lane behind it fills.
            for call in 0..STAGE_QUEUE as u64 {
                let job = pending(&pipeline, Stage::AfterOutput);
                assert!(service.submit(call, job, false).is_ok(), "observer {call}");
            }
            let full_by = Instant::now() + Duration::from_secs(10);
            let extra = loop {
                match service.submit(999, pending(&pipeline, Stage::AfterOutput), false) {
                    Err(job) => break job,
                    // The running observer may not have taken its job off the lane yet.
                    Ok(()) => assert!(Instant::now() < full_by, "the observers' lane fills"),
                }
            };
            drop(extra);
            let job = pending(&pipeline, Stage::PreAction);
            service
                .submit(7, job, true)
                .expect("the waited lane has room");
            let got = done_rx
                .recv_timeout(Duration::from_secs(5))
                .expect("the waited stage ran while every observer was stuck");
            assert_eq!(got, 7);
            for _ in 0..STAGE_QUEUE + 2 {
                let _ = release_tx.send(());
            }
        });
    }
}
