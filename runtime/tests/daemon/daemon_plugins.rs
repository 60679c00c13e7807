//! Plugins under a real `hearthd`: started after the socket is served, managed by `hearth
//! plugin …`, and gone when the daemon is SIGKILLed.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A binary of the SDK crate, next to `hearthd` in the target dir.
pub(crate) fn sdk_binary(relative: &str) -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_hearthd"));
    let path = bin.parent().expect("target dir").join(relative);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build -p hearth-plugin --bins --examples` and `cargo build -p hearth-plugin-timer` first",
        path.display()
    );
    path
}

pub(crate) fn plugin_dir(root: &Path, name: &str, entry: &Path) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("plugin dir");
    let manifest = format!(
        r#"{{"name":"{name}","version":"1.0","entry":"{}"}}"#,
        entry.display()
    );
    std::fs::write(dir.join("plugin.json"), manifest).expect("manifest");
    dir
}

fn list(daemon: &Daemon) -> Vec<Value> {
    let out = daemon.run(&["plugin", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    v["plugins"].as_array().cloned().unwrap_or_default()
}

fn state_of(daemon: &Daemon, name: &str) -> Option<Value> {
    list(daemon).into_iter().find(|p| p["name"] == name)
}

pub(crate) fn wait_state(daemon: &Daemon, name: &str, state: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(p) = state_of(daemon, name).filter(|p| p["state"] == state) {
            return p;
        }
        assert!(Instant::now() < deadline, "{name} never reached {state}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn the_socket_is_served_while_plugins_start_and_sigkill_leaves_no_plugin_behind() {
    within(Duration::from_secs(90), || {
        let conformance = sdk_binary("hearth-plugin-conformance");
        let daemon = Daemon::start_with("", |dir| {
            let plugins = dir.join("plugins");
            plugin_dir(&plugins, "conformance", &conformance);
            // Never answers the handshake: still starting for 10 s, yet the CLI is served.
            let silent = plugins.join("silent");
            std::fs::create_dir_all(&silent).expect("dir");
            let script = silent.join("run.sh");
            std::fs::write(&script, "#!/bin/sh\nexec sleep 60\n").expect("script");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            plugin_dir(&plugins, "silent", &script);
        });
        let running = wait_state(&daemon, "conformance", "running");
        let silent = state_of(&daemon, "silent").expect("listed");
        assert_eq!(silent["state"], "starting", "{silent}");
        let status = daemon.run(&["status"]);
        assert!(
            stdout(&status).contains("\"conformance\""),
            "{}",
            stdout(&status)
        );

        let pids: Vec<u64> = [&running, &silent]
            .iter()
            .map(|p| p["pid"].as_u64().expect("pid"))
            .collect();
        assert!(pids.iter().all(|p| alive(*p)));
        let dir = daemon.dir.clone();
        daemon.kill9();
        let deadline = Instant::now() + Duration::from_secs(5);
        while pids.iter().any(|p| alive(*p)) {
            assert!(
                Instant::now() < deadline,
                "a plugin outlived the SIGKILLed daemon"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_dir_all(dir);
    });
}

#[test]
fn a_plugin_processes_stage_handler_rewrites_a_turns_reply() {
    within(Duration::from_secs(90), || {
        let llm = LlmServer::start();
        llm.push(Script::text("stage:upper the kettle is on"));
        llm.push(Script::text("left alone"));
        let conformance = sdk_binary("hearth-plugin-conformance");
        let daemon = Daemon::start_with(&source("llm", &llm.base_url, 0), |dir| {
            plugin_dir(&dir.join("plugins"), "conformance", &conformance);
        });
        wait_state(&daemon, "conformance", "running");
        // The conformance plugin's before_output handler acts on answers `stage:<command> …`;
        // the daemon offers it the data plane, so the call goes over the stage-context area.
        let out = daemon.run(&["send", "is the kettle on?"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("[rewritten] STAGE:UPPER THE KETTLE IS ON"),
            "the reply went through the plugin's handler: {}",
            stdout(&out)
        );
        let out = daemon.run(&["send", "anything else"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("left alone"), "{}", stdout(&out));
    });
}

#[test]
fn plugin_commands_install_disable_enable_and_remove() {
    within(Duration::from_secs(90), || {
        let echo = sdk_binary("examples/echo");
        let daemon = Daemon::start("");
        let src = daemon.dir.join("src");
        let bad = plugin_dir(&src, "bad", Path::new("/nonexistent/echo"));
        let out = daemon.run(&["plugin", "install", bad.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(1));
        let e = stderr(&out);
        assert!(e.contains("bad/plugin.json") && e.contains("fix:"), "{e}");

        let good = plugin_dir(&src, "echo", &echo);
        let out = daemon.run(&["plugin", "install", good.to_str().expect("utf-8")]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(daemon.dir.join("plugins/echo/plugin.json").exists());
        wait_state(&daemon, "echo", "running");
        let again = daemon.run(&["plugin", "install", good.to_str().expect("utf-8")]);
        assert!(
            stderr(&again).contains("installed already"),
            "{}",
            stderr(&again)
        );

        assert!(daemon.run(&["plugin", "disable", "echo"]).status.success());
        wait_state(&daemon, "echo", "disabled");
        let state = std::fs::read_to_string(daemon.dir.join("plugins/state.json")).expect("state");
        assert!(state.contains("echo"), "{state}");
        assert!(daemon.run(&["plugin", "enable", "echo"]).status.success());
        wait_state(&daemon, "echo", "running");
        let info = daemon.run(&["plugin", "info", "echo"]);
        assert!(stdout(&info).contains("\"entry\""), "{}", stdout(&info));

        assert!(daemon.run(&["plugin", "remove", "echo"]).status.success());
        assert!(state_of(&daemon, "echo").is_none());
        assert!(!daemon.dir.join("plugins/echo").exists());
        let missing = daemon.run(&["plugin", "reload", "echo"]);
        assert!(
            stderr(&missing).contains("no plugin named \"echo\""),
            "{}",
            stderr(&missing)
        );
    });
}
