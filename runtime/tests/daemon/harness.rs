//! A `hearthd` child process with its own data dir, and the `hearth` CLI run against it.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

use hearth_testkit::llm_server::{LlmServer, Script};
pub use hearth_testkit::within;

pub struct Daemon {
    child: Child,
    pub dir: PathBuf,
    pub socket: PathBuf,
}

/// A source entry for hearth.toml.
pub fn source(name: &str, base_url: &str, priority: i32) -> String {
    format!(
        "[[sources]]\nname = \"{name}\"\nbase_url = \"{base_url}\"\nmodel = \"test-model\"\nadapter = \"openai\"\npriority = {priority}\n"
    )
}

impl Daemon {
    /// Starts hearthd with `toml` appended to a config that turns off every automatic source.
    pub fn start(toml: &str) -> Self {
        Self::start_with(toml, |_| {})
    }

    /// Starts hearthd again on an existing data dir (after `kill9`).
    pub fn restart(dir: &Path, toml: &str) -> Self {
        Self::launch(dir.to_path_buf(), toml)
    }

    /// Writes the config (top-level keys first, then the test's own text, then — unless the test
    /// configures it — the embedded model switched off: TOML tables must follow the top-level
    /// keys) and returns the command that starts hearthd on `dir`.
    pub fn command(dir: &Path, toml: &str) -> Command {
        let config = dir.join("hearth.toml");
        // The bundled web plugin would listen on 8080 in every test's daemon.
        let bundled = if toml.contains("bundled_plugins") {
            ""
        } else {
            "bundled_plugins = false\n"
        };
        let base = format!(
            "data_dir = \"{}\"\nprobe_loopback = false\n{bundled}",
            dir.display()
        );
        let embedded = if toml.contains("[embedded]") {
            ""
        } else {
            "\n[embedded]\nenabled = false\n"
        };
        std::fs::write(&config, format!("{base}{toml}{embedded}")).expect("config");
        // HEARTHD runs the tests against another build (a release daemon for the figures).
        let bin = std::env::var_os("HEARTHD").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_hearthd")),
            PathBuf::from,
        );
        let mut cmd = Command::new(bin);
        cmd.arg("--config")
            .arg(&config)
            .env(
                "HEARTH_LOG",
                std::env::var("HEARTH_TEST_LOG").unwrap_or_else(|_| "warn".into()),
            )
            // Days are the user's zone's, the system's by default: the tests reckon in UTC
            // wherever they run, unless one sets its own.
            .env("TZ", "UTC")
            .env_remove("HEARTH_DATA_DIR")
            .env_remove("HEARTH_SOCKET")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        cmd
    }

    fn launch(dir: PathBuf, toml: &str) -> Self {
        let child = Self::command(&dir, toml).spawn().expect("hearthd starts");
        Self::adopt(child, dir)
    }

    /// Waits until `child` (a hearthd on `dir`) serves its socket.
    pub fn adopt(child: Child, dir: PathBuf) -> Self {
        let socket = dir.join("hearth.sock");
        let mut daemon = Self { child, dir, socket };
        daemon.wait_ready(Duration::from_secs(60));
        daemon
    }

    /// A fresh, empty data dir for a test.
    pub fn fresh_dir() -> PathBuf {
        hearth_testkit::fresh_dir("e2e")
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits (at most `limit`) for the exit; returns how long it took and
    /// whether the exit was clean. The data dir stays until the value is dropped.
    pub fn terminate(&mut self, limit: Duration) -> (Duration, bool) {
        let sent = Instant::now();
        signal(self.child.id(), "TERM");
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return (sent.elapsed(), status.success());
            }
            assert!(
                sent.elapsed() < limit,
                "hearthd did not exit within {limit:?} of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// SIGKILL: no shutdown, no flush; the data dir stays for a restart.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Keep the directory: the caller restarts on it.
        self.dir = PathBuf::new();
        std::mem::forget(self);
    }

    /// Like `start`, letting the test prepare the data dir (custom adapters) first.
    pub fn start_with(toml: &str, prepare: impl FnOnce(&Path)) -> Self {
        let dir = Self::fresh_dir();
        prepare(&dir);
        Self::launch(dir, toml)
    }

    fn wait_ready(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while UnixStream::connect(&self.socket).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("hearthd exited before it was ready: {status}");
            }
            assert!(Instant::now() < deadline, "hearthd did not open its socket");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn cli(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hearth"));
        cmd.env("HEARTH_SOCKET", &self.socket)
            .env_remove("HEARTH_API_KEY");
        cmd
    }

    /// Runs `hearth <args>` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cli()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("hearth runs")
    }

    /// Starts `hearth <args>` with its stdout piped, for streaming checks.
    pub fn spawn(&self, args: &[&str]) -> (Child, ChildStdout) {
        let mut child = self
            .cli()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("hearth runs");
        let out = child.stdout.take().expect("stdout");
        (child, out)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.dir.as_os_str().is_empty() {
            return;
        }
        if let Ok(Some(_)) = self.child.try_wait() {
            let _ = std::fs::remove_dir_all(&self.dir);
            return;
        }
        signal(self.child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                let _ = std::fs::remove_dir_all(&self.dir);
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `kill -<name> <pid>`.
pub fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status();
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Reads `out` until `needle` has appeared, returning everything read so far.
pub fn read_until(out: &mut ChildStdout, needle: &str, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "never saw {needle:?}; got {:?}",
            String::from_utf8_lossy(&seen)
        );
        match out.read(&mut byte) {
            Ok(1) => seen.push(byte[0]),
            _ => panic!(
                "stdout closed before {needle:?}; got {:?}",
                String::from_utf8_lossy(&seen)
            ),
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

pub fn read_rest(out: ChildStdout) -> String {
    let mut s = String::new();
    let _ = BufReader::new(out).read_to_string(&mut s);
    s
}

#[allow(dead_code)]
pub fn lines(out: ChildStdout) -> impl Iterator<Item = String> {
    BufReader::new(out).lines().map_while(Result::ok)
}

/// A model server whose first call never finishes (while the returned gate lives), so every
/// later input stays queued behind it.
pub fn held_server() -> (LlmServer, crossbeam_channel::Sender<()>) {
    let server = LlmServer::start();
    let (gate, held) = crossbeam_channel::bounded::<()>(0);
    server.push(Script::Gated {
        pieces: vec!["never ".into(), "finished".into()],
        after: 1,
        gate: held,
    });
    (server, gate)
}

/// The names of the tools request `seen` offered the model.
/// Installs `main` as Lua plugin `name` (its manifest granting `capabilities`) in data dir `dir`.
pub fn install_lua(dir: &Path, name: &str, main: &str, capabilities: &[&str]) {
    let plugin = dir.join("plugins").join(name);
    std::fs::create_dir_all(&plugin).expect("plugin dir");
    std::fs::write(plugin.join("main.lua"), main).expect("script");
    let manifest = serde_json::json!({
        "name": name, "version": "1.0", "entry": "main.lua", "capabilities": capabilities,
    });
    std::fs::write(plugin.join("plugin.json"), manifest.to_string()).expect("manifest");
}

/// The messages of a request the model was sent.
pub fn messages(seen: &hearth_testkit::llm_server::Seen) -> Vec<serde_json::Value> {
    seen.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

pub fn offered(seen: &hearth_testkit::llm_server::Seen) -> Vec<String> {
    seen.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// One turn in which the model calls `calls` and then answers "Done."; returns the tool
/// messages it was fed back, in order.
pub fn tool_turn(
    daemon: &Daemon,
    server: &LlmServer,
    text: &str,
    calls: Vec<(&str, serde_json::Value)>,
) -> Vec<String> {
    server.push(Script::Tools(
        calls.into_iter().map(|(n, a)| (n.to_owned(), a)).collect(),
    ));
    server.push(Script::text("Done."));
    let out = daemon.run(&["send", text]);
    assert!(out.status.success(), "{text}: {}", stderr(&out));
    let seen = server.seen();
    seen.last().expect("a request").body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The tool results of the last request `server` was sent, each parsed (JSON, or the text
/// as a string: an error).
pub fn tool_results(server: &LlmServer) -> Vec<serde_json::Value> {
    tool_results_in(server.seen().last().expect("a request"))
}

/// The tool results one given request carried, each parsed as JSON when it is JSON: for a test
/// where a later turn's request may already have arrived.
pub fn tool_results_in(request: &hearth_testkit::llm_server::Seen) -> Vec<serde_json::Value> {
    messages(request)
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let t = m["content"].as_str().unwrap_or_default();
            serde_json::from_str(t).unwrap_or_else(|_| serde_json::Value::String(t.to_owned()))
        })
        .collect()
}
