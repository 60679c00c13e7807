//! A thread that runs the socket's blocking work in order — journaling an input (an fsync),
//! asking the kernel for a snapshot, testing a source — so the reactor itself never waits.

use crossbeam_channel::Sender;

type Job = Box<dyn FnOnce() + Send>;

/// The sending side of one worker thread; dropping it ends the thread once its queue is done.
#[derive(Debug, Clone)]
pub(super) struct Worker {
    tx: Sender<Job>,
}

impl Worker {
    pub(super) fn start(name: &str) -> std::io::Result<Self> {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })?;
        Ok(Self { tx })
    }

    /// Queues `job`; false when the thread is gone.
    pub(super) fn run(&self, job: impl FnOnce() + Send + 'static) -> bool {
        self.tx.send(Box::new(job)).is_ok()
    }
}
