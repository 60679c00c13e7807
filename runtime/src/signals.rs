//! Graceful shutdown on SIGTERM / SIGINT. The signals are blocked in every thread (install this
//! before starting any) and taken synchronously by whoever waits, so no async-signal-unsafe code
//! ever runs in a handler.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};

/// SIGTERM and SIGINT, blocked and waited for synchronously (see the module docs).
#[derive(Debug)]
pub struct ShutdownSignals {
    set: SigSet,
}

impl ShutdownSignals {
    /// Blocks SIGTERM and SIGINT for this thread and every thread it starts afterwards.
    pub fn install() -> nix::Result<Self> {
        let mut set = SigSet::empty();
        set.add(Signal::SIGTERM);
        set.add(Signal::SIGINT);
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)?;
        Ok(Self { set })
    }

    /// Blocks until SIGTERM or SIGINT arrives and returns which.
    pub fn wait(&self) -> nix::Result<Signal> {
        self.set.wait()
    }
}
