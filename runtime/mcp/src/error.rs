//! The crate-boundary error type.

use std::time::Duration;

use crate::config::NameProblem;
use crate::protocol::UnsupportedVersion;

/// Everything that can go wrong between Hearth and an MCP server.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A `[[mcp]]` entry that cannot be used as written.
    #[error("mcp server {name:?}: {reason}")]
    Config {
        /// The entry's name (may be empty when that is the problem).
        name: String,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A server name that cannot prefix tool names.
    #[error("mcp server {name:?}: {problem}")]
    InvalidServerName {
        /// The name as written.
        name: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
    /// The server chose a protocol revision Hearth does not speak.
    #[error("mcp server {server} answered initialize with something unexpected: {source}")]
    UnsupportedVersion {
        /// The server's configured name.
        server: String,
        /// The revision it offered and the ones Hearth speaks.
        #[source]
        source: UnsupportedVersion,
    },
    /// The server could not be reached or started.
    #[error("mcp server {server}: {reason}")]
    Connect {
        /// The server's configured name.
        server: String,
        /// The transport's own words.
        reason: String,
    },
    /// The connection ended (the process exited, the stream closed) before the answer came.
    #[error("mcp server {server} closed the connection during {method}")]
    Closed {
        /// The server's configured name.
        server: String,
        /// The request that was waiting.
        method: String,
    },
    /// No answer within the time allowed.
    #[error("mcp server {server} did not answer {method} within {after:?}")]
    TimedOut {
        /// The server's configured name.
        server: String,
        /// The request that was waiting.
        method: String,
        /// The time allowed.
        after: Duration,
    },
    /// The caller stopped the request; the server was told with `notifications/cancelled`.
    #[error("{method} on mcp server {server} was cancelled")]
    Cancelled {
        /// The server's configured name.
        server: String,
        /// The cancelled request.
        method: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("mcp server {server} refused {method}: {message} (code {code})")]
    Remote {
        /// The server's configured name.
        server: String,
        /// The refused request.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The server answered something that is not what the protocol says.
    #[error("mcp server {server} answered {method} with something unexpected: {reason}")]
    Protocol {
        /// The server's configured name.
        server: String,
        /// The request.
        method: String,
        /// What was wrong with the answer.
        reason: String,
    },
}
