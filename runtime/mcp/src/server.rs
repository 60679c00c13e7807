//! One configured server in the daemon: its connection (a supervised child or an HTTP session),
//! its tools in the registry, and their refresh when the server says its list changed.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use hearth_plugin_host::supervisor::{SpawnError, Supervised};
use hearth_stages::{
    CallContext, HandlerError, ToolDef, ToolHandler, ToolOwner, ToolRegistry, ToolSource,
};
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use serde_json::Value;

use crate::McpError;
use crate::calls::{Calls, NotificationSink, Watch};
use crate::client::{HANDSHAKE_TIMEOUT, McpClient};
use crate::config::{Endpoint, McpServerConfig};
use crate::connection::Connection;
use crate::http::{HttpTransport, SESSION_GONE};
use crate::protocol::methods;
use crate::stdio::StdioTransport;
use crate::tools::{DEFAULT_CALL_TIMEOUT, definition, into_result};

/// The supervisor's name of server `name`.
pub fn supervised_name(name: &str) -> String {
    format!("mcp:{name}")
}

/// What a connected server offers, for `hearth mcp list|test` and status.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerReport {
    /// The configured name.
    pub name: String,
    /// Whether a connection is up.
    pub connected: bool,
    /// The negotiated protocol revision.
    pub protocol_version: Option<String>,
    /// `serverInfo` as the server sent it.
    pub server_info: Value,
    /// The registry names of its tools.
    pub tools: Vec<String>,
    /// Tools the server offers that could not be registered, with the reason.
    pub skipped: Vec<String>,
    /// How many resources and prompts it lists.
    pub resources: usize,
    /// See `resources`.
    pub prompts: usize,
    /// The last connection error.
    pub last_error: Option<String>,
}

/// The state shared by the server's supervisor hooks, its tools and its notification sink.
pub(crate) struct Shared {
    config: McpServerConfig,
    /// The supervisor's name for it: `mcp:<name>`, apart from the plugins' names.
    supervised: String,
    owner: ToolOwner,
    tools: Arc<ToolRegistry>,
    client: RwLock<Option<Arc<McpClient>>>,
    report: Mutex<ServerReport>,
    refreshing: AtomicBool,
    /// Set once the server is removed: no reconnecting after that.
    retired: AtomicBool,
    /// Serialises connecting and refreshing, so two refreshes never interleave their writes.
    registering: Mutex<()>,
    me: Weak<Shared>,
}

/// One configured MCP server.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

impl McpServer {
    /// A server whose tools go into `tools`. Nothing starts yet.
    pub fn new(config: McpServerConfig, tools: Arc<ToolRegistry>) -> Result<McpServer, McpError> {
        config.endpoint()?;
        let owner = ToolOwner::new(ToolSource::Mcp, &config.name);
        let shared = Arc::new_cyclic(|me| Shared {
            report: Mutex::new(ServerReport {
                name: config.name.clone(),
                ..ServerReport::default()
            }),
            supervised: supervised_name(&config.name),
            config,
            owner,
            tools,
            client: RwLock::new(None),
            refreshing: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            registering: Mutex::new(()),
            me: me.clone(),
        });
        Ok(McpServer { shared })
    }

    /// The configured name.
    pub fn name(&self) -> &str {
        self.shared.name()
    }

    /// The entry it was made from.
    pub fn config(&self) -> &McpServerConfig {
        &self.shared.config
    }

    /// Whether it is a stdio server (run under the supervisor) rather than an HTTP one.
    pub fn is_stdio(&self) -> bool {
        matches!(self.shared.config.endpoint(), Ok(Endpoint::Stdio { .. }))
    }

    /// What it offers now.
    pub fn report(&self) -> ServerReport {
        self.shared.report.lock().clone()
    }

    /// The live client, if connected.
    pub fn client(&self) -> Option<Arc<McpClient>> {
        self.shared.client()
    }

    /// The supervisor's view of a stdio server.
    pub fn supervised(&self) -> Arc<dyn Supervised> {
        Arc::new(SupervisedServer(Arc::clone(&self.shared)))
    }

    /// Connects an HTTP server (initialize, tools registered). A stdio server is connected by
    /// the supervisor instead.
    pub fn connect_http(&self) -> Result<(), McpError> {
        self.shared.connect_http()
    }

    /// Drops the connection and the server's tools.
    pub fn disconnect(&self, why: &str) {
        self.shared.detach(why);
    }

    /// Disconnects for good: an HTTP server is not connected again after this.
    pub fn retire(&self) {
        // SYNC: pairs with the load in `is_retired`.
        self.shared.retired.store(true, Ordering::Release);
        self.disconnect("removed");
    }

    /// Whether [`Self::retire`] was called.
    pub fn is_retired(&self) -> bool {
        // SYNC: pairs with the store in `retire`.
        self.shared.retired.load(Ordering::Acquire)
    }

    /// The command that starts a stdio server, pipes set up for [`Self::attach`].
    pub fn command(&self) -> Result<Command, McpError> {
        SupervisedServer(Arc::clone(&self.shared))
            .command()
            .map_err(|e| McpError::Config {
                name: self.name().to_owned(),
                reason: e.to_string(),
            })
    }

    /// Brings up a stdio server spawned from [`Self::command`] outside the supervisor (the
    /// supervisor does the same through [`Self::supervised`]).
    pub fn attach(&self, child: &mut Child) -> Result<(), McpError> {
        self.shared.attach_child(child)
    }

    /// Starts the server once outside any supervisor, connects, reports and stops it: what
    /// `hearth mcp test` shows.
    pub fn probe(&self) -> Result<ServerReport, McpError> {
        if !self.is_stdio() {
            self.connect_http()?;
            let report = self.report();
            self.disconnect("probe done");
            return Ok(report);
        }
        let mut child = self.command()?.spawn().map_err(|e| McpError::Connect {
            server: self.name().to_owned(),
            reason: format!("could not start it: {e}"),
        })?;
        let attached = self.attach(&mut child);
        let report = self.report();
        self.disconnect("probe done");
        let _ = child.kill();
        let _ = child.wait();
        attached.map(|()| report)
    }
}

/// Calls one remote tool on whatever connection the server has now.
pub(crate) struct McpTool {
    pub(crate) server: Weak<Shared>,
    pub(crate) remote: String,
}

impl ToolHandler for McpTool {
    fn call(&self, call: &CallContext, args: &Value) -> Result<Value, HandlerError> {
        let shared = self
            .server
            .upgrade()
            .ok_or_else(|| HandlerError::Unavailable("the mcp server was removed".into()))?;
        let first = self.call_once(&shared, call, args);
        match first {
            // An HTTP server that restarted forgot the session: initialize again, once.
            Err(McpError::Remote {
                code: SESSION_GONE, ..
            }) if shared.is_http() => {
                tracing::info!(server = %shared.name(), "the session is gone; connecting again");
                shared
                    .reconnect_http()
                    .map_err(|e| HandlerError::Unavailable(e.to_string()))?;
                into_result(self.call_once(&shared, call, args))
            }
            other => into_result(other),
        }
    }
}

impl McpTool {
    fn call_once(
        &self,
        shared: &Shared,
        call: &CallContext,
        args: &Value,
    ) -> Result<Value, McpError> {
        let client = shared.client().ok_or_else(|| McpError::Connect {
            server: shared.name().to_owned(),
            reason: "not connected".into(),
        })?;
        let limit = shared.call_timeout();
        let cancelled = || call.is_cancelled();
        let progress = |p: &Value| {
            tracing::debug!(server = %shared.name(), tool = %self.remote,
                progress = %p["progress"], total = %p["total"], "tool progress");
        };
        let watch = Watch {
            cancelled: &cancelled,
            deadline: call.deadline().min(Instant::now() + limit),
            progress: Some(&progress),
        };
        client.call_tool(&self.remote, args, &watch)
    }
}

impl Shared {
    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn client(&self) -> Option<Arc<McpClient>> {
        self.client.read().clone()
    }

    pub(crate) fn is_http(&self) -> bool {
        matches!(self.config.endpoint(), Ok(Endpoint::Http { .. }))
    }

    /// Drops the lost session and runs the handshake again (not after the server is removed).
    pub(crate) fn reconnect_http(&self) -> Result<(), McpError> {
        // SYNC: pairs with the store in `McpServer::retire`.
        if self.retired.load(Ordering::Acquire) {
            return Err(McpError::Connect {
                server: self.name().to_owned(),
                reason: "the server was removed".into(),
            });
        }
        if let Some(old) = self.client.write().take() {
            old.connection().close();
        }
        self.connect_http()
    }

    pub(crate) fn call_timeout(&self) -> Duration {
        self.config
            .timeout_secs
            .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_secs)
    }

    fn sink(&self) -> NotificationSink {
        let me = self.me.clone();
        Arc::new(move |method: &str, _params: &Value| {
            if method == methods::TOOLS_LIST_CHANGED
                && let Some(me) = me.upgrade()
            {
                Shared::refresh_later(&me);
            }
        })
    }

    /// Takes over a spawned child's pipes and brings the server up.
    fn attach_child(&self, child: &mut Child) -> Result<(), McpError> {
        let missing = || McpError::Connect {
            server: self.name().to_owned(),
            reason: "the child has no stdin/stdout pipe".into(),
        };
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let calls = Calls::new(self.name(), self.sink());
        let transport = StdioTransport::start(&calls, stdin, stdout, child.stderr.take())?;
        self.bring_up(Connection::new(calls, Box::new(transport)))
    }

    fn connect_http(&self) -> Result<(), McpError> {
        let Ok(Endpoint::Http { url }) = self.config.endpoint() else {
            return Err(McpError::Config {
                name: self.name().to_owned(),
                reason: "not an HTTP server".into(),
            });
        };
        let calls = Calls::new(self.name(), self.sink());
        let transport = HttpTransport::new(&calls, url, &self.config.headers);
        let handle = transport.clone();
        let conn = Connection::new(calls, Box::new(transport));
        let up = self.bring_up_with(conn, |version| handle.set_protocol_version(version));
        if let Err(e) = &up {
            self.report.lock().last_error = Some(e.to_string());
        }
        up
    }

    fn bring_up(&self, conn: Connection) -> Result<(), McpError> {
        self.bring_up_with(conn, |_| {})
    }

    fn bring_up_with(
        &self,
        conn: Connection,
        negotiated: impl FnOnce(&str),
    ) -> Result<(), McpError> {
        let limit = self
            .config
            .timeout_secs
            .map_or(HANDSHAKE_TIMEOUT, Duration::from_secs);
        let client = Arc::new(McpClient::initialize(conn, limit)?);
        negotiated(&client.info().protocol_version);
        // Cheap extras: counted once per connection, never fatal.
        let resources = client.list_resources().map_or(0, |r| r.len());
        let prompts = client.list_prompts().map_or(0, |p| p.len());
        *self.client.write() = Some(Arc::clone(&client));
        self.register_tools(&client)?;
        // Connected once the tools are in: whoever waits for it can call them.
        let mut report = self.report.lock();
        report.connected = true;
        report.protocol_version = Some(client.info().protocol_version.clone());
        report.server_info = client.info().info.clone();
        report.resources = resources;
        report.prompts = prompts;
        report.last_error = None;
        Ok(())
    }

    /// Replaces the server's tools in the registry with what it lists now, in one step.
    fn register_tools(&self, client: &McpClient) -> Result<(), McpError> {
        let listed = client.list_tools()?;
        let _serial = self.registering.lock();
        let mut skipped = Vec::new();
        let mut batch: Vec<(ToolDef, String, Arc<dyn ToolHandler>)> = Vec::new();
        for tool in &listed {
            let Some((def, capability)) = definition(self.name(), tool) else {
                skipped.push(format!(
                    "{}: the prefixed name does not fit 64 characters",
                    tool.name
                ));
                continue;
            };
            let handler = McpTool {
                server: self.me.clone(),
                remote: tool.name.clone(),
            };
            batch.push((def, capability.to_owned(), Arc::new(handler)));
        }
        let wanted: Vec<String> = batch.iter().map(|(d, ..)| d.name.clone()).collect();
        let refused = self.tools.replace_owned(&self.owner, batch);
        for e in &refused {
            tracing::warn!(server = %self.name(), "tool not registered: {e}");
            skipped.push(e.to_string());
        }
        let names: Vec<String> = wanted
            .into_iter()
            .filter(|n| self.tools.get(n).is_some_and(|t| t.owner == self.owner))
            .collect();
        tracing::info!(server = %self.name(), tools = names.len(), "mcp tools registered");
        let mut report = self.report.lock();
        report.tools = names;
        report.skipped = skipped;
        Ok(())
    }

    /// A list change is read on a thread of its own: the notification arrives on the
    /// connection's reader, which must not wait for its own answer.
    fn refresh_later(me: &Arc<Shared>) {
        if me.refreshing.swap(true, Ordering::AcqRel) {
            // SYNC: pairs with the store below; one refresh at a time, a change during it is
            // picked up because the flag clears before the list is read.
            return;
        }
        let me = Arc::clone(me);
        let _ = std::thread::Builder::new()
            .name(format!("mcp-{}-refresh", me.name()))
            .spawn(move || {
                // SYNC: pairs with the swap above.
                me.refreshing.store(false, Ordering::Release);
                if let Some(client) = me.client()
                    && let Err(e) = me.register_tools(&client)
                {
                    tracing::warn!(server = %me.name(), "could not refresh the tool list: {e}");
                }
            });
    }

    fn detach(&self, why: &str) {
        let client = self.client.write().take();
        let _serial = self.registering.lock();
        self.tools.unregister_owner(&self.owner);
        if let Some(client) = client {
            client.connection().close();
        }
        let mut report = self.report.lock();
        report.connected = false;
        report.tools.clear();
        report.last_error = Some(why.to_owned());
    }
}

/// The supervisor's hooks for a stdio server.
struct SupervisedServer(Arc<Shared>);

impl Supervised for SupervisedServer {
    fn name(&self) -> &str {
        &self.0.supervised
    }

    fn command(&self) -> Result<Command, SpawnError> {
        let cfg = &self.0.config;
        let program = cfg
            .command
            .as_deref()
            .ok_or_else(|| SpawnError::NoCommand {
                what: format!("mcp server {}", cfg.name),
            })?;
        let mut cmd = Command::new(program);
        cmd.args(&cfg.args)
            .envs(&cfg.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Ok(cmd)
    }

    fn attach(&self, child: &mut Child) -> Result<(), SpawnError> {
        self.0.attach_child(child).map_err(|e| {
            self.0.report.lock().last_error = Some(e.to_string());
            SpawnError::attach(e)
        })
    }

    fn detach(&self, why: &str) {
        self.0.detach(why);
    }

    fn request_stop(&self, timeout: Duration) {
        // Closing stdin is how a stdio server is asked to exit; the supervisor signals after.
        if let Some(client) = self.0.client() {
            client.connection().close();
        }
        let _ = timeout;
    }
}
