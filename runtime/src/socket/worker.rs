//! A thread that runs the socket's blocking work in order — journaling an input (an fsync),
//! asking the kernel for a snapshot, testing a source — so the reactor itself never waits.
//! Its queue is bounded by the connection cap: a connection has at most one job queued at a
//! time, so a full queue only happens when clients that already left still have jobs waiting;
//! the reactor is then refused at once instead of waiting.

use crossbeam_channel::{Sender, TrySendError};

type Job = Box<dyn FnOnce() + Send>;

/// The sending side of one worker thread; dropping it ends the thread once its queue is done.
#[derive(Debug, Clone)]
pub(super) struct Worker {
    tx: Sender<Job>,
}

impl Worker {
    /// Starts thread `name` with room for `bound` queued jobs.
    pub(super) fn start(name: &str, bound: usize) -> std::io::Result<Self> {
        let (tx, rx) = crossbeam_channel::bounded::<Job>(bound.max(1));
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })?;
        Ok(Self { tx })
    }

    /// Queues `job` without waiting; false when the thread is gone or its queue is full (the
    /// job is dropped with what it owns).
    pub(super) fn run(&self, job: impl FnOnce() + Send + 'static) -> bool {
        match self.tx.try_send(Box::new(job)) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                tracing::warn!("socket worker queue full; refusing the request");
                false
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }
}
