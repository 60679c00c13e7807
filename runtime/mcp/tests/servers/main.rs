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

use hearth_mcp::{McpClient, McpServerConfig, McpServers, Watch};
use hearth_plugin_host::RestartPolicy;
use hearth_plugin_host::supervisor::{StopTimeouts, Supervisor};
use hearth_stages::{CallContext, Caller, Cancel, HandlerError, ToolRegistry, Trust};
use parking_lot::Mutex;
use serde_json::{Value, json};

/// The server-everything tool that reports progress and takes as long as asked.
pub const LONG_TOOL: &str = "trigger-long-running-operation";

/// Runs the long tool for `duration` seconds in `steps`; the progress values seen.
pub fn progress_of(client: &McpClient, duration: f64, steps: u32) -> Vec<Value> {
    let seen = Mutex::new(Vec::new());
    let progress = |p: &Value| seen.lock().push(p["progress"].clone());
    let watch = Watch {
        cancelled: &|| false,
        deadline: Instant::now() + Duration::from_secs(20),
        progress: Some(&progress),
    };
    let result = client
        .call_tool(
            LONG_TOOL,
            &json!({"duration": duration, "steps": steps}),
            &watch,
        )
        .expect("completes");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("completed")),
        "{result}"
    );
    seen.into_inner()
}

/// Starts a 30 s call of the long tool registered as `<prefix>_…`, stops it after `after`;
/// its outcome and how long it took.
pub fn stopped_long_call(
    tools: &Arc<ToolRegistry>,
    prefix: &str,
    after: Duration,
) -> (Result<Value, HandlerError>, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let call = ctx(&stop, Duration::from_secs(60));
    let tools = Arc::clone(tools);
    let name = format!("{prefix}_{LONG_TOOL}");
    let started = Instant::now();
    let long = std::thread::spawn(move || {
        tools.execute(&call, &name, &json!({"duration": 30, "steps": 30}))
    });
    std::thread::sleep(after);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let outcome = long.join().expect("the call thread");
    (outcome, started.elapsed())
}

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
