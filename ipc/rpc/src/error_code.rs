//! The error codes on the wire and the typed error every handler returns.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What went wrong, as a handler or the protocol layer reports it. Each kind has one wire code:
/// the JSON-RPC 2.0 standard codes, then Hearth's own in the implementation-defined range
/// `-32000..=-32099`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// -32700: the frame is not JSON (or not UTF-8).
    ParseError,
    /// -32600: the frame is JSON but not a JSON-RPC message (or a duplicate request id).
    InvalidRequest,
    /// -32601: no such method.
    MethodNotFound,
    /// -32602: the arguments (params) do not fit the method.
    InvalidArguments,
    /// -32603: the serving side broke (a handler panicked, a result did not serialise).
    Internal,
    /// -32000: the operation was attempted and failed.
    Failed,
    /// -32001: the caller may not do this (a capability the manifest does not grant).
    Denied,
    /// -32002: the deadline passed first.
    TimedOut,
    /// -32003: the caller cancelled the call.
    Cancelled,
    /// -32004: the service behind the method is not there right now (not loaded, shutting down).
    Unavailable,
    /// -32005: too many requests in flight; retry later.
    Busy,
    /// -32006: a frame exceeded the frame limit and was skipped.
    FrameTooLarge,
    /// -32007: no protocol version both sides speak.
    VersionMismatch,
    /// A code this build does not know (kept so nothing the peer said is lost).
    Other(i64),
}

impl ErrorKind {
    /// The wire code.
    pub const fn code(self) -> i64 {
        match self {
            ErrorKind::ParseError => -32700,
            ErrorKind::InvalidRequest => -32600,
            ErrorKind::MethodNotFound => -32601,
            ErrorKind::InvalidArguments => -32602,
            ErrorKind::Internal => -32603,
            ErrorKind::Failed => -32000,
            ErrorKind::Denied => -32001,
            ErrorKind::TimedOut => -32002,
            ErrorKind::Cancelled => -32003,
            ErrorKind::Unavailable => -32004,
            ErrorKind::Busy => -32005,
            ErrorKind::FrameTooLarge => -32006,
            ErrorKind::VersionMismatch => -32007,
            ErrorKind::Other(code) => code,
        }
    }

    /// The kind a wire code names.
    pub const fn from_code(code: i64) -> ErrorKind {
        match code {
            -32700 => ErrorKind::ParseError,
            -32600 => ErrorKind::InvalidRequest,
            -32601 => ErrorKind::MethodNotFound,
            -32602 => ErrorKind::InvalidArguments,
            -32603 => ErrorKind::Internal,
            -32000 => ErrorKind::Failed,
            -32001 => ErrorKind::Denied,
            -32002 => ErrorKind::TimedOut,
            -32003 => ErrorKind::Cancelled,
            -32004 => ErrorKind::Unavailable,
            -32005 => ErrorKind::Busy,
            -32006 => ErrorKind::FrameTooLarge,
            -32007 => ErrorKind::VersionMismatch,
            other => ErrorKind::Other(other),
        }
    }

    /// A short lowercase name for logs and messages.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::ParseError => "parse error",
            ErrorKind::InvalidRequest => "invalid request",
            ErrorKind::MethodNotFound => "method not found",
            ErrorKind::InvalidArguments => "invalid arguments",
            ErrorKind::Internal => "internal error",
            ErrorKind::Failed => "failed",
            ErrorKind::Denied => "denied",
            ErrorKind::TimedOut => "timed out",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Busy => "busy",
            ErrorKind::FrameTooLarge => "frame too large",
            ErrorKind::VersionMismatch => "protocol version mismatch",
            ErrorKind::Other(_) => "error",
        }
    }
}

/// The JSON-RPC 2.0 error object, as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// See [`ErrorKind::code`].
    pub code: i64,
    /// One human-readable sentence.
    pub message: String,
    /// Structured detail (for `Denied`: `{method, capability, known}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// The typed error of every handler on either side of the pipe: a tool, a stage or output
/// handler in a plugin, a reverse-call handler in the kernel. It converts to and from the wire's
/// [`ErrorObject`] without loss.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {message}", kind.name())]
pub struct HandlerError {
    /// What kind of failure; decides the wire code.
    pub kind: ErrorKind,
    /// The sentence a user or the model reads.
    pub message: String,
    /// Optional structured detail.
    pub data: Option<Value>,
}

impl HandlerError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> HandlerError {
        HandlerError {
            kind,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with structured detail attached.
    pub fn with_data(mut self, data: Value) -> HandlerError {
        self.data = Some(data);
        self
    }

    /// The arguments do not fit the tool or method.
    pub fn invalid_arguments(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorKind::InvalidArguments, message)
    }

    /// The operation was attempted and failed.
    pub fn failed(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorKind::Failed, message)
    }

    /// The service behind it is not there right now.
    pub fn unavailable(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorKind::Unavailable, message)
    }

    /// The caller cancelled.
    pub fn cancelled(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorKind::Cancelled, message)
    }

    /// The deadline passed.
    pub fn timed_out(message: impl Into<String>) -> HandlerError {
        HandlerError::new(ErrorKind::TimedOut, message)
    }

    /// No such method.
    pub fn method_not_found(method: &str) -> HandlerError {
        HandlerError::new(
            ErrorKind::MethodNotFound,
            format!("unknown method {method}"),
        )
    }

    /// The wire form.
    pub fn to_object(&self) -> ErrorObject {
        ErrorObject {
            code: self.kind.code(),
            message: self.message.clone(),
            data: self.data.clone(),
        }
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(o: ErrorObject) -> HandlerError {
        HandlerError {
            kind: ErrorKind::from_code(o.code),
            message: o.message,
            data: o.data,
        }
    }
}

impl From<HandlerError> for ErrorObject {
    fn from(e: HandlerError) -> ErrorObject {
        ErrorObject {
            code: e.kind.code(),
            message: e.message,
            data: e.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_code() {
        let kinds = [
            ErrorKind::ParseError,
            ErrorKind::InvalidRequest,
            ErrorKind::MethodNotFound,
            ErrorKind::InvalidArguments,
            ErrorKind::Internal,
            ErrorKind::Failed,
            ErrorKind::Denied,
            ErrorKind::TimedOut,
            ErrorKind::Cancelled,
            ErrorKind::Unavailable,
            ErrorKind::Busy,
            ErrorKind::FrameTooLarge,
            ErrorKind::VersionMismatch,
            ErrorKind::Other(-1),
        ];
        let mut codes = std::collections::HashSet::new();
        for kind in kinds {
            assert_eq!(ErrorKind::from_code(kind.code()), kind);
            assert!(codes.insert(kind.code()), "{kind:?} shares its code");
        }
        assert_eq!(ErrorKind::InvalidArguments.code(), -32602);
    }

    #[test]
    fn handler_error_survives_the_wire() {
        let e = HandlerError::new(ErrorKind::Denied, "no").with_data(serde_json::json!({"a": 1}));
        let wire = serde_json::to_string(&e.to_object()).expect("serialises");
        assert_eq!(wire, r#"{"code":-32001,"message":"no","data":{"a":1}}"#);
        let back: ErrorObject = serde_json::from_str(&wire).expect("parses");
        assert_eq!(HandlerError::from(back), e);
    }
}
