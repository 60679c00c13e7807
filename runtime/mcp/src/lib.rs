//! Hearth's MCP client: tools of Model Context Protocol servers in the one tool registry.
//!
//! - **Transports**: stdio servers are child processes run by the daemon's one supervisor
//!   (`hearth-plugin-host`), with the same crash policy as plugins; Streamable HTTP servers are
//!   reached by POST with JSON or event-stream answers and an `Mcp-Session-Id` session.
//! - **Wire**: MCP's stdio wire is newline-delimited JSON-RPC 2.0, the same as Hearth's plugin
//!   control plane, so `hearth-rpc`'s frames and messages carry it. Its blocking `Peer` is not
//!   used: MCP cancels with `notifications/cancelled` (not `$/cancel`), routes progress by token
//!   and must share one table of calls with the HTTP transport, which has no stream of its own.
//! - **No async runtime**: the kernel is threads and channels; the maintained Rust MCP SDKs are
//!   built on tokio, so this crate speaks the protocol itself (initialize with version
//!   negotiation, paginated lists, `tools/list_changed`, calls with progress and cancellation).
//! - **Tools**: `<server>_<tool>`, owned by `mcp:<server>`, marked `mcp.read` (read-only hint)
//!   or `mcp.write`; results map text to text, images and audio to media blocks, structured
//!   content alongside.
//!
//! ```no_run
//! use std::sync::Arc;
//! use hearth_mcp::{McpServer, McpServerConfig};
//! use hearth_stages::ToolRegistry;
//!
//! let tools = Arc::new(ToolRegistry::new());
//! let cfg = McpServerConfig::stdio("fs", "mcp-server-filesystem", &["/tmp"]);
//! let report = McpServer::new(cfg, tools)?.probe()?;
//! println!("{} offers {:?}", report.name, report.tools);
//! # Ok::<(), hearth_mcp::McpError>(())
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod calls;
pub mod client;
pub mod config;
mod connection;
pub mod content;
mod error;
mod http;
pub mod protocol;
pub mod server;
mod servers;
mod sse;
mod stdio;
mod store;
pub mod tools;

pub use calls::{NotificationSink, Watch};
pub use client::{McpClient, RemoteTool, ServerInfo};
pub use config::{McpServerConfig, NameProblem, validate_server_name};
pub use connection::Connection;
pub use error::McpError;
pub use protocol::UnsupportedVersion;
pub use server::{McpServer, ServerReport, supervised_name};
pub use servers::McpServers;
pub use store::{McpStore, STORE_FILE};
