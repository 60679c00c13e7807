//! Every configured server of the daemon: started (stdio ones under the supervisor, HTTP ones
//! on a thread of their own so a slow endpoint does not hold up the daemon), listed, stopped.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_plugin_host::supervisor::Supervisor;
use hearth_stages::ToolRegistry;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::{McpError, McpServer, McpServerConfig, ServerReport, supervised_name};

/// The daemon's MCP servers.
pub struct McpServers {
    supervisor: Arc<Supervisor>,
    tools: Arc<ToolRegistry>,
    servers: Mutex<BTreeMap<String, McpServer>>,
}

impl McpServers {
    /// Servers run by `supervisor`, their tools in `tools`.
    pub fn new(supervisor: Arc<Supervisor>, tools: Arc<ToolRegistry>) -> McpServers {
        McpServers {
            supervisor,
            tools,
            servers: Mutex::new(BTreeMap::new()),
        }
    }

    /// Starts every entry; a bad entry is logged and skipped, the others start.
    pub fn start_all(&self, configs: &[McpServerConfig]) -> Vec<McpError> {
        configs
            .iter()
            .filter(|c| !c.disabled)
            .filter_map(|c| self.start(c.clone()).err())
            .inspect(|e| tracing::error!("mcp server not started: {e}"))
            .collect()
    }

    /// Starts one server (replacing a stopped one of the same name).
    pub fn start(&self, config: McpServerConfig) -> Result<(), McpError> {
        let server = McpServer::new(config, Arc::clone(&self.tools))?;
        let name = server.name().to_owned();
        if let Some(old) = self.servers.lock().insert(name, server.clone()) {
            self.shut(&old);
        }
        if server.is_stdio() {
            self.supervisor.start(server.supervised());
        } else {
            let name = server.name().to_owned();
            std::thread::Builder::new()
                .name(format!("mcp-{name}-connect"))
                .spawn(move || connect_until_up(&server))
                .map_err(|e| McpError::Connect {
                    server: name,
                    reason: format!("no thread: {e}"),
                })?;
        }
        Ok(())
    }

    /// Stops and forgets one server; false when there is none of that name.
    pub fn remove(&self, name: &str) -> bool {
        let Some(server) = self.servers.lock().remove(name) else {
            return false;
        };
        self.shut(&server);
        true
    }

    /// Makes the running set what `configs` say, without a restart: a server no longer there
    /// (or disabled) is stopped, a new or changed one started, an unchanged one left running
    /// with its connection. Answers `{started, stopped, unchanged, failed}` by name.
    pub fn sync(&self, configs: &[McpServerConfig]) -> Value {
        let wanted: Vec<&McpServerConfig> = configs.iter().filter(|c| !c.disabled).collect();
        let running: Vec<String> = self.servers.lock().keys().cloned().collect();
        let stopped: Vec<String> = running
            .into_iter()
            .filter(|name| !wanted.iter().any(|c| c.name == *name))
            .filter(|name| self.remove(name))
            .collect();
        let (mut started, mut unchanged, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        for config in wanted {
            if self.get(&config.name).is_some_and(|s| s.config() == config) {
                unchanged.push(config.name.clone());
                continue;
            }
            match self.start(config.clone()) {
                Ok(()) => started.push(config.name.clone()),
                Err(e) => {
                    tracing::error!("mcp server not started: {e}");
                    failed.push(json!({"name": config.name, "error": e.to_string()}));
                }
            }
        }
        json!({"started": started, "stopped": stopped, "unchanged": unchanged, "failed": failed})
    }

    /// Stops every server.
    pub fn stop_all(&self) {
        let all: Vec<McpServer> = std::mem::take(&mut *self.servers.lock())
            .into_values()
            .collect();
        for server in &all {
            self.shut(server);
        }
    }

    fn shut(&self, server: &McpServer) {
        if server.is_stdio() {
            self.supervisor.forget(&supervised_name(server.name()));
        }
        server.retire();
    }

    /// One server.
    pub fn get(&self, name: &str) -> Option<McpServer> {
        self.servers.lock().get(name).cloned()
    }

    /// Waits until `name` is connected, at most `timeout`; its last report.
    pub fn wait_connected(&self, name: &str, timeout: Duration) -> Option<ServerReport> {
        let deadline = Instant::now() + timeout;
        loop {
            let report = self.get(name)?.report();
            if report.connected || Instant::now() >= deadline {
                return Some(report);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every server's report with its process status, for `hearth mcp list`.
    pub fn list(&self) -> Value {
        let servers = self.servers.lock();
        let rows: Vec<Value> = servers
            .values()
            .map(|s| {
                let mut row = json!(s.report());
                row["transport"] = json!(if s.is_stdio() { "stdio" } else { "http" });
                if let Some(status) = self.supervisor.status(&supervised_name(s.name())) {
                    row["process"] = json!(status);
                }
                row
            })
            .collect();
        Value::Array(rows)
    }
}

/// An HTTP server may come up after the daemon: try again after 1 s, 2 s, 4 s … 60 s until it
/// answers or is removed.
fn connect_until_up(server: &McpServer) {
    let mut delay = Duration::from_secs(1);
    loop {
        match server.connect_http() {
            Ok(()) => return,
            Err(e) => tracing::warn!("{e}; trying again in {delay:?}"),
        }
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if server.is_retired() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        delay = (delay * 2).min(Duration::from_secs(60));
    }
}
