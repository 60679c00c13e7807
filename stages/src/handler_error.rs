//! The error every plugin-facing handler returns.

/// Why a tool, stage or output-channel handler did not do its job.
///
/// The kind tells the kernel what to do (a `Denied` is not retried, an `Unavailable` may be, a
/// `Cancelled` is not an error the model should see as the tool's fault); the message is for the
/// model and the log. `Display` is what both see: `"<kind>: <message>"`, except for
/// [`HandlerError::Failed`], which shows its message alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// The arguments do not fit the handler's schema or rules.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The caller may not do this (trust, policy, a plugin's veto).
    #[error("denied: {0}")]
    Denied(String),
    /// The call's deadline passed.
    #[error("timed out")]
    TimedOut,
    /// The call was cancelled (a stop) before it finished.
    #[error("cancelled")]
    Cancelled,
    /// Something the handler needs is not there (a device offline, a tool not registered).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// Anything else, with a message for the model.
    #[error("{0}")]
    Failed(String),
}

impl HandlerError {
    /// The stable snake_case name of the kind, for the plugin protocol and the journal.
    pub const fn kind(&self) -> &'static str {
        match self {
            HandlerError::InvalidArguments(_) => "invalid_arguments",
            HandlerError::Denied(_) => "denied",
            HandlerError::TimedOut => "timed_out",
            HandlerError::Cancelled => "cancelled",
            HandlerError::Unavailable(_) => "unavailable",
            HandlerError::Failed(_) => "failed",
        }
    }

    /// The same kind with `context` put in front of the message (`"<context>: <message>"`), so a
    /// caller can say which tool or channel failed without losing why. `TimedOut` and `Cancelled`
    /// carry no message and are returned as they are.
    pub fn context(self, context: &str) -> HandlerError {
        let prefix = |m: String| format!("{context}: {m}");
        match self {
            HandlerError::InvalidArguments(m) => HandlerError::InvalidArguments(prefix(m)),
            HandlerError::Denied(m) => HandlerError::Denied(prefix(m)),
            HandlerError::Unavailable(m) => HandlerError::Unavailable(prefix(m)),
            HandlerError::Failed(m) => HandlerError::Failed(prefix(m)),
            e @ (HandlerError::TimedOut | HandlerError::Cancelled) => e,
        }
    }
}

/// A bare message is a plain failure, so `Err("no network".into())` and `?` on `String` errors work.
impl From<String> for HandlerError {
    fn from(message: String) -> Self {
        HandlerError::Failed(message)
    }
}

impl From<&str> for HandlerError {
    fn from(message: &str) -> Self {
        HandlerError::Failed(message.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_text_name_and_context_rule() {
        let cases = [
            (
                HandlerError::InvalidArguments("city missing".into()),
                "invalid arguments: city missing",
                "invalid_arguments",
                "invalid arguments: weather_now: city missing",
            ),
            (
                HandlerError::Denied("not yours".into()),
                "denied: not yours",
                "denied",
                "denied: weather_now: not yours",
            ),
            (
                HandlerError::TimedOut,
                "timed out",
                "timed_out",
                "timed out",
            ),
            (
                HandlerError::Cancelled,
                "cancelled",
                "cancelled",
                "cancelled",
            ),
            (
                HandlerError::Unavailable("offline".into()),
                "unavailable: offline",
                "unavailable",
                "unavailable: weather_now: offline",
            ),
            (
                HandlerError::Failed("no network".into()),
                "no network",
                "failed",
                "weather_now: no network",
            ),
        ];
        for (err, text, kind, with_context) in cases {
            assert_eq!(err.to_string(), text);
            assert_eq!(err.kind(), kind);
            let wrapped = err.clone().context("weather_now");
            assert_eq!(wrapped.kind(), kind, "context keeps the kind");
            assert_eq!(wrapped.to_string(), with_context);
        }
        assert_eq!(
            HandlerError::from("x".to_owned()),
            HandlerError::Failed("x".into())
        );
        assert_eq!(HandlerError::from("y"), HandlerError::Failed("y".into()));
    }
}
