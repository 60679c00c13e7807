//! The crate-boundary error, and the per-frame error the reader hands back.

use std::time::Duration;

use crate::error_code::{ErrorKind, ErrorObject, HandlerError};
use crate::id::Id;

/// Why one frame was rejected. The stream goes on after any of these: the reader has already
/// skipped to the next newline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame is longer than the limit; it was skipped unread.
    #[error("frame of {len} bytes exceeds the frame limit of {limit} bytes")]
    TooLarge {
        /// How many bytes were skipped (up to the newline or the end of the stream).
        len: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The frame is not UTF-8.
    #[error("frame is not UTF-8 (invalid byte at {at})")]
    InvalidUtf8 {
        /// Offset of the first bad byte.
        at: usize,
    },
    /// The frame is not JSON.
    #[error("frame is not JSON: {reason}")]
    InvalidJson {
        /// The parser's message.
        reason: String,
    },
    /// The frame is JSON but not a JSON-RPC 2.0 message.
    #[error("frame is not a JSON-RPC message: {reason}")]
    InvalidMessage {
        /// The request id, when the frame carried a readable one.
        id: Option<Id>,
        /// What is wrong with it.
        reason: String,
    },
}

impl FrameError {
    /// The error object sent back to the peer about this frame.
    pub fn to_object(&self) -> ErrorObject {
        let kind = match self {
            FrameError::TooLarge { .. } => ErrorKind::FrameTooLarge,
            FrameError::InvalidUtf8 { .. } | FrameError::InvalidJson { .. } => {
                ErrorKind::ParseError
            }
            FrameError::InvalidMessage { .. } => ErrorKind::InvalidRequest,
        };
        let data = match self {
            FrameError::TooLarge { len, limit } => {
                Some(serde_json::json!({"len": len, "limit": limit}))
            }
            _ => None,
        };
        ErrorObject {
            code: kind.code(),
            message: self.to_string(),
            data,
        }
    }

    /// The id of the request this frame was, when it could be read.
    pub fn request_id(&self) -> Option<Id> {
        match self {
            FrameError::InvalidMessage { id, .. } => *id,
            _ => None,
        }
    }
}

/// Everything that can go wrong at the `hearth-rpc` boundary.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RpcError {
    /// Reading or writing the pipe failed.
    #[error("{op} failed: {source}")]
    Io {
        /// What was being done (`"read frame"`, `"write frame"`).
        op: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// An outgoing frame would exceed the frame limit; nothing was written.
    #[error("outgoing {method} frame of {len} bytes exceeds the frame limit of {limit} bytes")]
    OutgoingTooLarge {
        /// The method of the message, or `"response"`.
        method: String,
        /// The encoded length.
        len: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A value could not be encoded or a result not decoded into the expected type.
    #[error("{method}: {source}")]
    Codec {
        /// The method involved.
        method: String,
        /// The serde error.
        source: serde_json::Error,
    },
    /// The peer answered with an error.
    #[error("{method} failed at the peer: {error}")]
    Remote {
        /// The method that was called.
        method: String,
        /// The peer's error, typed.
        error: HandlerError,
    },
    /// No answer arrived within the timeout; the call was abandoned and `$/cancel` sent.
    #[error("{method} got no answer within {after:?}")]
    TimedOut {
        /// The method that was called.
        method: String,
        /// The timeout.
        after: Duration,
    },
    /// The caller cancelled the call before the answer arrived.
    #[error("{method} was cancelled before it was answered")]
    Cancelled {
        /// The method that was called.
        method: String,
    },
    /// The connection closed (the peer exited or closed its pipe) before the answer arrived.
    #[error("{method}: the connection is closed (the peer exited or closed its pipe)")]
    Closed {
        /// The method that was called.
        method: String,
    },
    /// A manifest lists a capability this build does not know.
    #[error("unknown capability {name:?} in the manifest (known capabilities: {known})")]
    UnknownCapability {
        /// The name as written.
        name: String,
        /// Every known capability, comma-separated.
        known: String,
    },
    /// The handshake failed; the peer must be stopped.
    #[error("handshake with {plugin} failed: {reason}")]
    Handshake {
        /// The plugin's name as the kernel knows it.
        plugin: String,
        /// Why, in one sentence a user can act on.
        reason: String,
    },
}

impl RpcError {
    /// The typed kind, for handlers that pass a failed reverse call on as their own error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RpcError::Remote { error, .. } => error.kind,
            RpcError::TimedOut { .. } => ErrorKind::TimedOut,
            RpcError::Cancelled { .. } => ErrorKind::Cancelled,
            RpcError::Closed { .. } | RpcError::Io { .. } => ErrorKind::Unavailable,
            RpcError::Handshake { .. } => ErrorKind::VersionMismatch,
            RpcError::OutgoingTooLarge { .. } => ErrorKind::FrameTooLarge,
            RpcError::Codec { .. } | RpcError::UnknownCapability { .. } => {
                ErrorKind::InvalidArguments
            }
        }
    }
}

impl From<RpcError> for HandlerError {
    /// A remote error passes through unchanged; anything else keeps its kind and message.
    fn from(e: RpcError) -> HandlerError {
        match e {
            RpcError::Remote { error, .. } => error,
            other => HandlerError::new(other.kind(), other.to_string()),
        }
    }
}
