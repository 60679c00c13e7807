//! Real plugin processes for the host tests: the SDK's conformance plugin and echo example, and
//! small shell plugins that speak just enough of the protocol to misbehave on purpose.

#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_plugin_host::session::{Tables, Timeouts};
use hearth_plugin_host::{DataPlane, HostConfig, Injection, KernelPort, PluginHost, RestartPolicy};
use serde_json::Value;

#[path = "../../../../ipc/rpc/tests/support/watchdog.rs"]
mod shared_watchdog;

pub use shared_watchdog::watchdog;

/// A binary of the SDK crate, built by `cargo build -p hearth-plugin --bins --examples`.
pub fn sdk_binary(relative: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join(relative);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p hearth-plugin --bins --examples` , `cargo build -p hearth-plugin-timer` and `cargo build -p hearth-plugin-files` first",
        path.display()
    );
    path
}

/// One injected or submitted input: channel, text, and how it entered.
pub type Injected = (String, String, Injection);

/// What the kernel port saw.
#[derive(Default)]
pub struct Recorder {
    pub events: Mutex<Vec<(String, Value)>>,
    pub injected: Mutex<Vec<Injected>>,
    /// Memory commits: plugin, content, summary.
    pub committed: Mutex<Vec<(String, String, String)>>,
    /// Submitted inputs by request id: the text and how often `io.reply` asked for it.
    pub submitted: Mutex<Vec<(String, u32)>>,
}

impl Recorder {
    pub fn count(&self, kind: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| k == kind)
            .count()
    }
}

pub struct RecordingPort(pub Arc<Recorder>);

impl KernelPort for RecordingPort {
    fn publish(&self, kind: &str, payload: &Value) {
        self.0
            .events
            .lock()
            .unwrap()
            .push((kind.to_owned(), payload.clone()));
    }

    fn inject(
        &self,
        _plugin: &str,
        channel: &str,
        text: &str,
        how: Injection,
    ) -> Result<(), hearth_rpc::HandlerError> {
        self.0
            .injected
            .lock()
            .unwrap()
            .push((channel.to_owned(), text.to_owned(), how));
        Ok(())
    }

    /// Recorded as injected; its reply comes on the second `io.reply` (an error for "fail").
    fn submit(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        how: Injection,
    ) -> Result<Value, hearth_rpc::HandlerError> {
        self.inject(plugin, channel, text, how)?;
        let mut submitted = self.0.submitted.lock().unwrap();
        submitted.push((text.to_owned(), 0));
        Ok(serde_json::json!({"request_id": format!("r{}", submitted.len() - 1), "tag": 7}))
    }

    fn reply(
        &self,
        request_id: &str,
        _timeout: Duration,
    ) -> Result<Value, hearth_rpc::HandlerError> {
        let n: usize = request_id[1..].parse().expect("an id submit gave");
        let mut submitted = self.0.submitted.lock().unwrap();
        let (text, polls) = &mut submitted[n];
        *polls += 1;
        if *polls < 2 {
            return Ok(serde_json::json!({"done": false}));
        }
        let failed = text == "fail";
        Ok(
            serde_json::json!({"done": true, "content": format!("answer to {text}"),
            "error": failed, "skipped": false, "reason": failed.then_some("the model broke")}),
        )
    }

    fn memory_recall(
        &self,
        plugin: &str,
        query: &str,
        top_k: usize,
    ) -> Result<Value, hearth_rpc::HandlerError> {
        Ok(serde_json::json!({"text": format!("{plugin} asked for {top_k} about {query}")}))
    }

    fn memory_commit(
        &self,
        plugin: &str,
        content: &str,
        summary: &str,
    ) -> Result<Value, hearth_rpc::HandlerError> {
        self.0.committed.lock().unwrap().push((
            plugin.to_owned(),
            content.to_owned(),
            summary.to_owned(),
        ));
        Ok(serde_json::json!({"stored": true}))
    }

    fn llm_sources(&self) -> Result<Value, hearth_rpc::HandlerError> {
        Ok(serde_json::json!({"sources": [{"name": "local", "available": true}]}))
    }

    fn llm_complete(
        &self,
        _plugin: &str,
        messages: &[(String, String)],
        _timeout: Duration,
    ) -> Result<Value, hearth_rpc::HandlerError> {
        let (role, content) = messages.last().cloned().unwrap_or_default();
        Ok(serde_json::json!({"text": format!("{role} said {content}")}))
    }
}

/// A data dir with installed plugins, and the host over it.
pub struct Fixture {
    pub data: tempfile::TempDir,
    pub seen: Arc<Recorder>,
    pub tables: Tables,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            data: tempfile::tempdir().expect("tempdir"),
            seen: Arc::default(),
            tables: Tables::default(),
        }
    }

    pub fn plugins_dir(&self) -> PathBuf {
        self.data.path().join("plugins")
    }

    /// Installs a plugin directory `name` whose entry is `entry` (absolute), with `extra`
    /// manifest fields.
    pub fn install(&self, name: &str, entry: &Path, extra: &str) {
        let dir = self.plugins_dir().join(name);
        std::fs::create_dir_all(&dir).expect("plugin dir");
        let manifest = format!(
            r#"{{"name":"{name}","version":"1.0","entry":"{}"{extra}}}"#,
            entry.display()
        );
        std::fs::write(dir.join("plugin.json"), manifest).expect("manifest");
    }

    /// Installs a shell-script plugin `name` with `body` as its program.
    pub fn install_script(&self, name: &str, body: &str, extra: &str) {
        let dir = self.plugins_dir().join(name);
        std::fs::create_dir_all(&dir).expect("plugin dir");
        let entry = dir.join("run.sh");
        std::fs::write(&entry, format!("#!/bin/sh\n{body}")).expect("script");
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        self.install(name, &entry, extra);
    }

    /// Installs one plugin, opens the host with the default rules and waits until it runs.
    pub fn start_one(&self, name: &str, entry: &Path, extra: &str) -> Arc<PluginHost> {
        self.install(name, entry, extra);
        let host = self.host(RestartPolicy::default(), Timeouts::default());
        host.start_all().expect("order");
        let s = host.wait_for(name, LONG, |s| {
            s.state == hearth_plugin_host::PluginState::Running
        });
        assert_eq!(
            s.map(|s| s.state),
            Some(hearth_plugin_host::PluginState::Running)
        );
        host
    }

    pub fn host(&self, policy: RestartPolicy, timeouts: Timeouts) -> Arc<PluginHost> {
        self.host_with(policy, timeouts, None)
    }

    /// The host offering `data` (the shared segment) to every plugin.
    pub fn host_on(&self, data: &Arc<DataPlane>) -> Arc<PluginHost> {
        self.host_with(
            RestartPolicy::default(),
            Timeouts::default(),
            Some(Arc::clone(data)),
        )
    }

    fn host_with(
        &self,
        policy: RestartPolicy,
        timeouts: Timeouts,
        data: Option<Arc<DataPlane>>,
    ) -> Arc<PluginHost> {
        self.host_cfg(|cfg| {
            cfg.policy = policy;
            cfg.timeouts = timeouts;
            cfg.data_plane = data;
        })
    }

    /// The host with the defaults changed by `edit`.
    pub fn host_cfg(&self, edit: impl FnOnce(&mut HostConfig)) -> Arc<PluginHost> {
        let mut cfg = HostConfig::new(self.data.path());
        edit(&mut cfg);
        PluginHost::open(
            cfg,
            self.tables.clone(),
            Arc::new(RecordingPort(Arc::clone(&self.seen))),
        )
        .expect("host opens")
    }
}

/// Answers the handshake, `plugin.init` and `plugin.start` (ids 1, 2, 3, the host's order),
/// then runs `then`.
pub fn scripted_start(name: &str, then: &str) -> String {
    format!(
        "read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"protocol\":1,\"sdk_version\":\"sh\",\"plugin_name\":\"{name}\",\"pid\":'$$'}}}}'\n\
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}'\n\
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}'\n{then}\n"
    )
}

/// Live processes whose parent is `pid` (from `/proc`).
pub fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state, ppid, …
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() != Some(&"Z") && fields.get(1) == Some(&pid.to_string().as_str()) {
            out.push(child);
        }
    }
    out
}

/// Children of this process running `argv` (NUL-separated in `/proc/PID/cmdline`).
pub fn children_running(argv: &[&str]) -> Vec<u32> {
    let want = argv.join("\0") + "\0";
    children_of(std::process::id())
        .into_iter()
        .filter(|c| std::fs::read_to_string(format!("/proc/{c}/cmdline")).is_ok_and(|l| l == want))
        .collect()
}

pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

pub const LONG: Duration = Duration::from_secs(20);

/// Calls a registered tool as the kernel would, with the error as the sentence the model reads.
pub trait CallTool {
    /// `name` with `args`, a kernel call context and a generous deadline.
    fn call_tool(&self, name: &str, args: &serde_json::Value) -> Result<serde_json::Value, String>;
}

impl CallTool for hearth_stages::ToolRegistry {
    fn call_tool(&self, name: &str, args: &serde_json::Value) -> Result<serde_json::Value, String> {
        let ctx = hearth_stages::CallContext::kernel(std::time::Duration::from_secs(60));
        self.execute(&ctx, name, args).map_err(|e| e.to_string())
    }
}
