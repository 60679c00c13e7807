//! One error type for everything the HTTP layer can report, with the mapping from `ureq` and
//! `std::io` errors done here so no `ureq` type leaks into a public signature.

use std::io;

/// Why an HTTP call or a streamed body did not produce what was asked for.
///
/// A non-2xx status is not an error of the client: it comes back as a normal
/// [`HttpResponse`](super::HttpResponse); [`HttpError::Status`] exists for callers that turn one
/// into an error with [`HttpResponse::error_for_status`](super::HttpResponse::error_for_status).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The call's cancel token fired. Never retried.
    #[error("cancelled")]
    Cancelled,
    /// No connection could be made: name lookup failed, refused, unreachable, connect timeout.
    #[error("connect failed: {0}")]
    Connect(String),
    /// The TLS handshake or record layer failed.
    #[error("tls: {0}")]
    Tls(String),
    /// A deadline other than the connect timeout passed (e.g. the 180 s non-streaming limit).
    #[error("timed out ({0})")]
    Timeout(String),
    /// The connection broke or the transport failed after it was made.
    #[error("i/o: {0}")]
    Io(String),
    /// The server's answer is not valid HTTP/1.1.
    #[error("protocol: {0}")]
    Protocol(String),
    /// The URL cannot be requested (bad syntax, unknown scheme).
    #[error("invalid url: {0}")]
    InvalidUrl(String),
    /// A header name or value, or the request as a whole, is malformed.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The server answered with a non-success status (`"api error N: <body>"`).
    #[error("api error {status}: {body}")]
    Status {
        /// The status code.
        status: u16,
        /// The response body.
        body: String,
    },
    /// A body read in one piece was longer than the caller's cap.
    #[error("response body larger than {limit} bytes")]
    TooLarge {
        /// The caller's cap in bytes.
        limit: usize,
    },
    /// A streamed line was longer than the limit; it is an error, never truncated.
    #[error("line {line} longer than {limit} bytes")]
    LineTooLong {
        /// The line number, from 1.
        line: u64,
        /// The limit in bytes.
        limit: usize,
    },
    /// Bytes that should be text are not UTF-8.
    #[error("invalid utf-8 {0}")]
    InvalidUtf8(String),
    /// A line that should hold one JSON value does not.
    #[error("invalid json on line {line}: {message}")]
    Json {
        /// The line number, from 1.
        line: u64,
        /// The parser's message.
        message: String,
    },
}

impl HttpError {
    /// Recovers an [`HttpError`] carried inside an `io::Error` (the body readers report through
    /// `std::io::Read`), or classifies a plain one.
    pub fn from_io(err: io::Error) -> Self {
        if err.get_ref().is_some_and(|inner| inner.is::<HttpError>()) {
            let inner = err.into_inner().expect("checked by get_ref above");
            return *inner.downcast::<HttpError>().expect("checked by is above");
        }
        if err.get_ref().is_some_and(|inner| inner.is::<ureq::Error>()) {
            let inner = err.into_inner().expect("checked by get_ref above");
            return from_ureq(
                *inner
                    .downcast::<ureq::Error>()
                    .expect("checked by is above"),
            );
        }
        match err.kind() {
            io::ErrorKind::TimedOut => HttpError::Timeout("reading the response".to_owned()),
            _ => HttpError::Io(err.to_string()),
        }
    }

    /// Wraps this error so it survives a trip through `std::io::Read`; see [`Self::from_io`].
    pub fn into_io(self) -> io::Error {
        // Never `Interrupted`: std's readers retry that kind, and a cancelled read would spin.
        let kind = match self {
            HttpError::Timeout(_) => io::ErrorKind::TimedOut,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, self)
    }
}

/// Set by our connector so a failed connect is told apart from a failure later in the call.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct ConnectFailure(pub(super) String);

/// Set by our TLS layer: rustls's own errors reach us as opaque I/O errors otherwise.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct TlsFailure(pub(super) String);

/// The error our connection layer hands `ureq` when the call's token fired mid-step.
pub(super) fn cancelled_ureq() -> ureq::Error {
    ureq::Error::Other(Box::new(HttpError::Cancelled))
}

pub(super) fn from_ureq(err: ureq::Error) -> HttpError {
    use ureq::Error as U;
    match err {
        U::Timeout(which @ (ureq::Timeout::Connect | ureq::Timeout::Resolve)) => {
            HttpError::Connect(format!("timed out ({which})"))
        }
        U::Timeout(which) => HttpError::Timeout(which.to_string()),
        U::HostNotFound => HttpError::Connect("host not found".to_owned()),
        U::ConnectionFailed => HttpError::Connect("connection failed".to_owned()),
        U::Io(io) => HttpError::from_io(io),
        U::Other(inner) => match inner.downcast::<ConnectFailure>() {
            Ok(failure) => HttpError::Connect(failure.0),
            Err(inner) => match inner.downcast::<TlsFailure>() {
                Ok(failure) => HttpError::Tls(failure.0),
                Err(inner) => match inner.downcast::<HttpError>() {
                    Ok(http) => *http,
                    Err(inner) => HttpError::Io(inner.to_string()),
                },
            },
        },
        U::BadUri(msg) => HttpError::InvalidUrl(msg),
        U::Http(e) => HttpError::InvalidRequest(e.to_string()),
        U::Protocol(e) => HttpError::Protocol(e.to_string()),
        U::LargeResponseHeader(..) => HttpError::Protocol(err.to_string()),
        U::BodyExceedsLimit(limit) => HttpError::TooLarge {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        },
        U::Tls(msg) => HttpError::Tls(msg.to_owned()),
        U::Rustls(e) => HttpError::Tls(e.to_string()),
        U::Pem(e) => HttpError::Tls(e.to_string()),
        other => HttpError::Io(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_error_survives_a_trip_through_io() {
        for err in [
            HttpError::Cancelled,
            HttpError::LineTooLong { line: 3, limit: 10 },
            HttpError::Timeout("x".into()),
        ] {
            assert_eq!(HttpError::from_io(err.clone().into_io()), err);
        }
    }

    #[test]
    fn wrapped_ureq_errors_are_classified() {
        let io = ureq::Error::Timeout(ureq::Timeout::Global).into_io();
        assert_eq!(HttpError::from_io(io), HttpError::Timeout("global".into()));
        let connect = ureq::Error::Other(Box::new(ConnectFailure("refused".into())));
        assert_eq!(from_ureq(connect), HttpError::Connect("refused".into()));
    }
}
