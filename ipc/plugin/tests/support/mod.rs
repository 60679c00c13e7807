//! A small kernel-side host for the process tests: spawns a plugin process, speaks the control
//! plane to it with `hearth-rpc`, gates its reverse calls like the kernel, records what it did.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_rpc::{
    ConnectionConfig, Grants, HandlerError, HandshakeParams, HandshakeResult, Incoming, Peer,
    RpcError, Service, Trust, WireContext, clamp_inject_params, connect, gate, methods,
};
use serde_json::{Value, json};

#[path = "../../../rpc/tests/support/watchdog.rs"]
mod shared_watchdog;

pub use shared_watchdog::watchdog;

pub const CALL: Duration = Duration::from_secs(10);

/// A built example binary of this crate. Cargo builds examples for `cargo test -p hearth-plugin`
/// but not when a `--test` filter is given, so a binary older than its source is refused.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join("examples").join(name);
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
    let modified = |p: &PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    assert!(
        path.exists() && modified(&path) >= modified(&source),
        "{} is missing or older than its source: `cargo build -p hearth-plugin --examples`",
        path.display()
    );
    path
}

/// What the host's reverse-call service does and saw.
#[derive(Default)]
pub struct Recorder {
    pub calls: Mutex<Vec<(String, Value)>>,
    pub logs: Mutex<Vec<String>>,
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
}

struct HostService {
    grants: Grants,
    recall_delay: Duration,
    seen: Arc<Recorder>,
}

impl Service for HostService {
    fn call(&self, req: Incoming) -> Result<Value, HandlerError> {
        gate(&req.method, &self.grants)?;
        let mut params = req.params;
        clamp_inject_params(&req.method, &mut params, Trust::External);
        self.seen
            .calls
            .lock()
            .unwrap()
            .push((req.method.clone(), params.clone()));
        let now = self.seen.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.seen.max_running.fetch_max(now, Ordering::SeqCst);
        let result = match req.method.as_str() {
            methods::MEMORY_RECALL => {
                std::thread::sleep(self.recall_delay);
                Ok(json!({"entities": [], "relations": []}))
            }
            methods::DOC_QUERY => {
                Ok(json!({"docs": [{"text": format!("about {}", params["text"])}]}))
            }
            methods::SETTINGS_GET => Ok(json!({"value": format!("hello {}", params["key"])})),
            _ => Ok(json!({})),
        };
        self.seen.running.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn notify(&self, _peer: &Peer, method: &str, params: Value) {
        if method == methods::LOG {
            let line = params["message"].as_str().unwrap_or_default().to_owned();
            self.seen.logs.lock().unwrap().push(line);
        }
    }
}

/// Writes through a shared handle, so a test can inject raw bytes between the host's frames or
/// close the pipe while the connection still holds its writer.
#[derive(Clone)]
pub struct SharedStdin(Arc<Mutex<Option<ChildStdin>>>);

impl SharedStdin {
    fn with<T>(&self, f: impl FnOnce(&mut ChildStdin) -> std::io::Result<T>) -> std::io::Result<T> {
        match self.0.lock().unwrap().as_mut() {
            Some(stdin) => f(stdin),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    pub fn raw(&self, bytes: &[u8]) {
        self.with(|s| s.write_all(bytes).and_then(|()| s.flush()))
            .expect("write to plugin");
    }

    /// Closes the plugin's stdin (what a kernel crash looks like from the plugin).
    pub fn close(&self) {
        self.0.lock().unwrap().take();
    }
}

impl Write for SharedStdin {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.with(|s| s.write(buf))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.with(|s| s.flush())
    }
}

/// How to start a host.
pub struct HostConfig {
    pub grants: Grants,
    pub max_in_flight: usize,
    pub recall_delay: Duration,
    pub args: Vec<String>,
    /// Bytes written to the plugin's stdin before the connection starts.
    pub preamble: Vec<u8>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            grants: Grants::unrestricted(),
            max_in_flight: 32,
            recall_delay: Duration::ZERO,
            args: Vec::new(),
            preamble: Vec::new(),
        }
    }
}

pub struct TestHost {
    pub child: Child,
    pub peer: Peer,
    pub stdin: SharedStdin,
    pub seen: Arc<Recorder>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl TestHost {
    pub fn spawn(program: &PathBuf, config: HostConfig) -> TestHost {
        Self::spawn_command(Command::new(program).args(&config.args), config)
    }

    pub fn spawn_command(command: &mut Command, config: HostConfig) -> TestHost {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn plugin");
        let stdin = SharedStdin(Arc::new(Mutex::new(child.stdin.take())));
        let stdout = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        if !config.preamble.is_empty() {
            stdin.raw(&config.preamble);
        }
        let seen = Arc::new(Recorder::default());
        let service = HostService {
            grants: config.grants,
            recall_delay: config.recall_delay,
            seen: Arc::clone(&seen),
        };
        let peer = connect(
            stdout,
            stdin.clone(),
            service,
            ConnectionConfig {
                max_in_flight: config.max_in_flight,
                name: "test-host".into(),
                ..ConnectionConfig::default()
            },
        );
        TestHost {
            child,
            peer,
            stdin,
            seen,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    pub fn handshake(&self, name: &str, versions: &[u32]) -> Result<HandshakeResult, RpcError> {
        let offer = HandshakeParams {
            protocol_versions: versions.to_vec(),
            kernel_version: "test".into(),
            plugin_name: name.into(),
            data_plane: None,
        };
        hearth_rpc::handshake(&self.peer, &offer, CALL)
    }

    /// Handshake, init and start, as the kernel does for a new plugin.
    pub fn boot(&self, name: &str) -> HandshakeResult {
        let hello = self
            .handshake(name, &[hearth_rpc::PROTOCOL_VERSION])
            .expect("handshake");
        self.peer
            .call(
                methods::PLUGIN_INIT,
                json!({"name": name, "config": {}}),
                CALL,
            )
            .expect("init");
        self.peer
            .call(methods::PLUGIN_START, json!({}), CALL)
            .expect("start");
        hello
    }

    pub fn tool(&self, name: &str, args: Value) -> Result<Value, RpcError> {
        let ctx = WireContext {
            task_id: "task-1".into(),
            caller: "test".into(),
            trust: Trust::Kernel,
            timeout_ms: Some(10_000),
            cancellable: true,
            call_id: String::new(),
        };
        let params = json!({"name": name, "args": args, "ctx": ctx});
        self.peer
            .call(methods::TOOL_INVOKE, params, CALL)
            .map(|mut r| r["result"].take())
    }

    pub fn registered(&self, method: &str) -> Vec<Value> {
        let calls = self.seen.calls.lock().unwrap();
        calls
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, p)| p.clone())
            .collect()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the child to exit (and for its stderr to be read to the end); `None` if it is
    /// still running after `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                if let Some(reader) = self.stderr_reader.take() {
                    reader.join().expect("stderr reader");
                }
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        None
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error kind and message of a failed call.
pub fn remote(result: Result<Value, RpcError>) -> HandlerError {
    match result {
        Err(RpcError::Remote { error, .. }) => error,
        other => panic!("expected an error answer, got {other:?}"),
    }
}
