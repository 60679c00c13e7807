//! The one error type of the adapter layer: every variant names the adapter (or file) and, for a
//! call, the script function that failed, so a log line says which script to fix.

use std::path::PathBuf;
use std::time::Duration;

/// Which per-call budget a script ran through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// The instruction budget (VM instructions per call).
    Instructions(u64),
    /// The wall-clock budget per call.
    Time(Duration),
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exceeded::Instructions(n) => write!(f, "instruction budget of {n} exceeded"),
            Exceeded::Time(d) => write!(f, "time budget of {} ms exceeded", d.as_millis()),
        }
    }
}

/// What can go wrong loading or calling a Lua adapter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// The script could not become an adapter: syntax error, a binary chunk, an error while the
    /// chunk ran, no returned table, or a missing `transform_request`.
    #[error("adapter {file}: load failed: {message}")]
    Load {
        /// The script's file name.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// The script raised an error or returned something that is not a string.
    #[error("adapter {adapter}: {function}: {message}")]
    Script {
        /// The adapter's name.
        adapter: String,
        /// The adapter function that was called.
        function: &'static str,
        /// The script's error text.
        message: String,
    },
    /// The call ran past its instruction or time budget and was aborted.
    #[error("adapter {adapter}: {function}: {exceeded}")]
    Budget {
        /// The adapter's name.
        adapter: String,
        /// The adapter function that was called.
        function: &'static str,
        /// Which budget ran out.
        exceeded: Exceeded,
    },
    /// The call hit the adapter's memory limit.
    #[error("adapter {adapter}: {function}: out of memory (limit {limit_bytes} bytes)")]
    Memory {
        /// The adapter's name.
        adapter: String,
        /// The adapter function that was called.
        function: &'static str,
        /// The memory limit in bytes.
        limit_bytes: usize,
    },
    /// The call did not come back in time even though the VM budget should have stopped it (a
    /// long-running library function such as a pathological pattern match). The adapter refuses
    /// calls until that call finishes.
    #[error("adapter {adapter}: {function} did not return within {} ms", waited.as_millis())]
    Hung {
        /// The adapter's name.
        adapter: String,
        /// The adapter function that was called.
        function: &'static str,
        /// How long the caller waited.
        waited: Duration,
    },
    /// The adapter cannot take calls: a previous call is still stuck, or its VM thread is gone.
    #[error("adapter {adapter} is unusable: {reason}")]
    Broken {
        /// The adapter's name.
        adapter: String,
        /// Why it cannot take calls.
        reason: String,
    },
    /// Reading or installing an adapter file failed.
    #[error("adapter file {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        message: String,
    },
}
