//! The client against real MCP servers: the npm ones `make setup` installs under `tests/mcp/`,
//! and a scripted one for the failures real servers do not show on demand.

mod everything;
mod failures;
mod filesystem;
mod http;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use hearth_mcp::{McpServerConfig, McpServers};
use hearth_plugin_host::RestartPolicy;
use hearth_plugin_host::supervisor::{StopTimeouts, Supervisor};
use hearth_stages::{CallContext, Caller, Cancel, ToolRegistry, Trust};

/// Every test body runs under this watchdog.
pub const LIMIT: Duration = Duration::from_secs(90);

/// `tests/mcp/` of the repository.
pub fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// The entry script of an installed npm server; fails with the fix when it is not installed.
pub fn npm_server(package: &str) -> String {
    let entry = servers_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        entry.exists(),
        "{} is missing: run `make setup` to install the test MCP servers",
        entry.display()
    );
    entry.to_string_lossy().into_owned()
}

/// A stdio entry for the scripted server in `mode`.
pub fn scripted(name: &str, mode: &str) -> McpServerConfig {
    let script = servers_dir().join("scripted-server.mjs");
    McpServerConfig::stdio(name, "node", &[&script.to_string_lossy(), mode])
}

/// The daemon's pieces: a registry and a supervisor with restarts 10× faster than the real one.
pub struct Rig {
    pub tools: Arc<ToolRegistry>,
    pub supervisor: Arc<Supervisor>,
    pub servers: McpServers,
}

/// A supervisor with restarts 10× faster than the daemon's and short stop timeouts.
pub fn fast_supervisor() -> Arc<Supervisor> {
    Arc::new(Supervisor::new(
        RestartPolicy::scaled(10),
        Arc::new(|_: &str, _: &serde_json::Value| {}),
        StopTimeouts {
            graceful: Duration::from_millis(300),
            term: Duration::from_millis(500),
        },
    ))
}

impl Rig {
    pub fn start() -> Rig {
        let tools = Arc::new(ToolRegistry::new());
        let supervisor = fast_supervisor();
        let servers = McpServers::new(Arc::clone(&supervisor), Arc::clone(&tools));
        Rig {
            tools,
            supervisor,
            servers,
        }
    }

    /// Starts `cfg` and waits until its tools are registered.
    pub fn up(&self, cfg: McpServerConfig) -> hearth_mcp::ServerReport {
        let name = cfg.name.clone();
        self.servers.start(cfg).expect("a valid entry");
        let report = self
            .servers
            .wait_connected(&name, Duration::from_secs(30))
            .expect("started");
        assert!(report.connected, "{name} did not connect: {report:?}");
        report
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.servers.stop_all();
    }
}

/// A call context with `flag` as its stop, `within` to finish.
pub fn ctx(flag: &Arc<AtomicBool>, within: Duration) -> CallContext {
    CallContext::new(
        1,
        Caller::new("test", Trust::Local),
        Cancel::flag(Arc::clone(flag)),
        Instant::now() + within,
    )
}

/// A call context that is never stopped.
pub fn plain() -> CallContext {
    ctx(&Arc::new(AtomicBool::new(false)), Duration::from_secs(30))
}

/// Polls `cond` every 20 ms for at most `limit`.
pub fn eventually(limit: Duration, cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}
