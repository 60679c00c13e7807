//! The MCP methods Hearth uses and the version negotiation of `initialize`.

use serde_json::{Value, json};

/// The revision Hearth asks for first.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every revision Hearth speaks, newest first. The wire of each is the same JSON-RPC; what
/// differs (structured content, titles, resource links) is optional on read.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Method names.
pub mod methods {
    /// The first request.
    pub const INITIALIZE: &str = "initialize";
    /// Sent once `initialize` has been answered.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// A page of tools.
    pub const TOOLS_LIST: &str = "tools/list";
    /// One tool call.
    pub const TOOLS_CALL: &str = "tools/call";
    /// The server's tool list changed.
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// A page of resources.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// A page of prompts.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// Progress of a request that carried a progress token.
    pub const PROGRESS: &str = "notifications/progress";
    /// Either side stops a request of its own.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// A log line from the server.
    pub const MESSAGE: &str = "notifications/message";
    /// Liveness probe, either direction.
    pub const PING: &str = "ping";
}

/// The `initialize` request's params. Hearth declares no client capabilities: it offers no
/// roots, sampling or elicitation, so a server does not send those requests.
pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "hearth", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// The server answered `initialize` with a revision Hearth does not speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the server speaks protocol {offered:?}; Hearth speaks {}", supported.join(", "))]
pub struct UnsupportedVersion {
    /// The server's revision.
    pub offered: String,
    /// Every revision Hearth speaks ([`SUPPORTED_PROTOCOL_VERSIONS`]).
    pub supported: &'static [&'static str],
}

/// The revision to use given the server's answer: its own choice when Hearth speaks it.
pub fn negotiate(server_version: &str) -> Result<&'static str, UnsupportedVersion> {
    SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .copied()
        .find(|v| *v == server_version)
        .ok_or_else(|| UnsupportedVersion {
            offered: server_version.to_owned(),
            supported: SUPPORTED_PROTOCOL_VERSIONS,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_revision_is_kept_an_unknown_one_refused() {
        assert_eq!(negotiate("2025-06-18"), Ok("2025-06-18"));
        assert_eq!(
            negotiate(LATEST_PROTOCOL_VERSION),
            Ok(LATEST_PROTOCOL_VERSION)
        );
        let err = negotiate("1999-01-01").unwrap_err();
        assert_eq!(err.offered, "1999-01-01");
        assert_eq!(err.supported, SUPPORTED_PROTOCOL_VERSIONS);
        let text = err.to_string();
        assert!(
            text.contains("1999-01-01") && text.contains("2024-11-05"),
            "{text}"
        );
        assert_eq!(
            initialize_params()["protocolVersion"],
            LATEST_PROTOCOL_VERSION
        );
    }
}
