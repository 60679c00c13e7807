//! The id that pairs a JSON-RPC request with its response: what a message carries and what a
//! frame error names, so both can answer the caller that sent it.

/// A request id. Hearth's ids are unsigned integers; a frame without an id is a notification.
pub type Id = u64;
