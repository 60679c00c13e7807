//! The MCP client over one [`Connection`]: the `initialize` handshake, paginated lists and
//! tool calls.

use std::collections::HashSet;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::McpError;
use crate::calls::Watch;
use crate::connection::Connection;
use crate::protocol::{self, methods};

/// How long the handshake and a list page may take when the entry sets no limit.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);

/// A list that pages on past this many pages is cut off (a server that loops its cursor).
const MAX_PAGES: usize = 1000;

/// One tool as the server declares it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteTool {
    /// The server's own name for it.
    pub name: String,
    /// What the model reads.
    #[serde(default)]
    pub description: String,
    /// JSON schema of the arguments.
    #[serde(default)]
    pub input_schema: Value,
    /// `readOnlyHint`, `destructiveHint`, `openWorldHint`, …
    #[serde(default)]
    pub annotations: Value,
}

/// What `initialize` settled.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerInfo {
    /// The negotiated protocol revision.
    pub protocol_version: String,
    /// `serverInfo` (name, version).
    pub info: Value,
    /// The server's capabilities (`tools`, `resources`, `prompts`, `logging`, …).
    pub capabilities: Value,
    /// The server's usage notes, if any.
    pub instructions: Option<String>,
}

/// An initialised connection.
pub struct McpClient {
    conn: Connection,
    info: ServerInfo,
    /// For the handshake and each list page.
    limit: Duration,
}

impl McpClient {
    /// Runs the handshake: `initialize` with Hearth's newest revision, the server's choice
    /// accepted when Hearth speaks it (otherwise refused with both lists named), then
    /// `notifications/initialized`.
    /// `limit` bounds the handshake and each later list page.
    pub fn initialize(conn: Connection, limit: Duration) -> Result<McpClient, McpError> {
        let result = conn.request(
            methods::INITIALIZE,
            protocol::initialize_params(),
            &Watch::within(limit),
        )?;
        let protocol_error = |reason: String| McpError::Protocol {
            server: conn.server().to_owned(),
            method: methods::INITIALIZE.to_owned(),
            reason,
        };
        let offered = result["protocolVersion"]
            .as_str()
            .ok_or_else(|| protocol_error("no protocolVersion".into()))?;
        let version =
            protocol::negotiate(offered).map_err(|source| McpError::UnsupportedVersion {
                server: conn.server().to_owned(),
                source,
            })?;
        conn.notify(methods::INITIALIZED, Value::Null)?;
        let info = ServerInfo {
            protocol_version: version.to_owned(),
            info: result["serverInfo"].clone(),
            capabilities: result["capabilities"].clone(),
            instructions: result["instructions"].as_str().map(str::to_owned),
        };
        Ok(McpClient { conn, info, limit })
    }

    /// What the handshake settled.
    pub fn info(&self) -> &ServerInfo {
        &self.info
    }

    /// The connection.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Every tool, following `nextCursor` to the last page.
    pub fn list_tools(&self) -> Result<Vec<RemoteTool>, McpError> {
        self.list_all(methods::TOOLS_LIST, "tools")?
            .into_iter()
            .map(|t| {
                serde_json::from_value(t).map_err(|e| McpError::Protocol {
                    server: self.conn.server().to_owned(),
                    method: methods::TOOLS_LIST.to_owned(),
                    reason: format!("a tool entry is malformed: {e}"),
                })
            })
            .collect()
    }

    /// Every resource, when the server declares resources (otherwise none).
    pub fn list_resources(&self) -> Result<Vec<Value>, McpError> {
        if self.info.capabilities.get("resources").is_none() {
            return Ok(Vec::new());
        }
        self.list_all(methods::RESOURCES_LIST, "resources")
    }

    /// Every prompt, when the server declares prompts (otherwise none).
    pub fn list_prompts(&self) -> Result<Vec<Value>, McpError> {
        if self.info.capabilities.get("prompts").is_none() {
            return Ok(Vec::new());
        }
        self.list_all(methods::PROMPTS_LIST, "prompts")
    }

    /// Calls tool `name` (the server's name for it) under `watch`; the raw `CallToolResult`.
    pub fn call_tool(
        &self,
        name: &str,
        arguments: &Value,
        watch: &Watch,
    ) -> Result<Value, McpError> {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments.clone()
        };
        self.conn.request(
            methods::TOOLS_CALL,
            json!({"name": name, "arguments": arguments}),
            watch,
        )
    }

    fn list_all(&self, method: &str, field: &str) -> Result<Vec<Value>, McpError> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = HashSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self
                .conn
                .request(method, params, &Watch::within(self.limit))?;
            match page[field].as_array() {
                Some(items) => all.extend(items.iter().cloned()),
                None => {
                    return Err(McpError::Protocol {
                        server: self.conn.server().to_owned(),
                        method: method.to_owned(),
                        reason: format!("the page has no `{field}` list"),
                    });
                }
            }
            match page["nextCursor"].as_str() {
                Some(next) if seen.insert(next.to_owned()) => cursor = Some(next.to_owned()),
                Some(next) => {
                    tracing::warn!(server = %self.conn.server(), "{method}: cursor {next:?} came twice; stopping");
                    return Ok(all);
                }
                None => return Ok(all),
            }
        }
        tracing::warn!(server = %self.conn.server(), "{method}: more than {MAX_PAGES} pages; stopping");
        Ok(all)
    }
}
