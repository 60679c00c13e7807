//! The kernel crate's one error type: why a caller's request was not taken.

use crate::provider_service::PROVIDER_QUEUE;

/// Why the kernel did not take an input or a call. Each case has already been answered to the
/// input's reply channel where one exists; the error tells the submitting code what happened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// The input's trust does not allow what it asks (answered `denied`, never journaled).
    #[error("denied: the caller may not submit this input")]
    Denied,
    /// The store's owner has stopped, so the input could not be recorded (and was answered so).
    #[error("the input could not be recorded, so it was not accepted: the store owner has stopped")]
    StoreStopped,
    /// [`PROVIDER_QUEUE`] LLM calls are already waiting for the provider thread.
    #[error("the provider queue is full ({PROVIDER_QUEUE} calls waiting)")]
    ProviderQueueFull,
}
