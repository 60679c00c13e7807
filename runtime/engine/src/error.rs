//! Errors of building, placing nodes on, and starting an engine.

/// Why an engine operation was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// `workers(0)` was asked for.
    #[error("an engine needs at least one worker")]
    NoWorkers,
    /// A node was placed on (or a handle asked for) a worker that does not exist.
    #[error("no worker {worker}: the engine has {count}")]
    NoSuchWorker {
        /// The worker asked for.
        worker: usize,
        /// How many workers the engine has.
        count: usize,
    },
    /// `start` was called twice.
    #[error("the engine is already started")]
    AlreadyStarted,
    /// The OS refused to create a worker thread.
    #[error("cannot start worker thread {worker}")]
    ThreadSpawn {
        /// The worker whose thread failed to start.
        worker: usize,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
}
