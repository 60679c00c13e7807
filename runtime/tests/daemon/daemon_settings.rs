//! `hearth settings` against a real daemon and its real `settings.db`: precedence (default <
//! hearth.toml < user), typed and validated values, unknown keys, live application, the one
//! owner of the file, and the values surviving a restart.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

const FILE: &str = "[agent]\nmax_tool_turns = 4\n";

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}{}", stdout(out), stderr(out));
    stdout(out)
}

fn refused(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(out), stderr(out));
    stderr(out)
}

/// The names of the tools the model was offered in request `i`.
fn offered(server: &LlmServer, i: usize) -> Vec<String> {
    server.seen()[i].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// `hearth settings` with no daemon reachable: on the file in `dir`.
fn offline(dir: &Path, args: &[&str]) -> Output {
    let d = dir.display().to_string();
    let mut full = vec!["--data-dir", &d, "settings", "--config"];
    let config = dir.join("hearth.toml").display().to_string();
    full.push(&config);
    full.extend_from_slice(args);
    std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(&full)
        .env("HEARTH_SOCKET", dir.join("nobody-here.sock"))
        .env_remove("HEARTH_API_KEY")
        .output()
        .expect("hearth runs")
}

#[test]
fn settings_layer_over_the_file_are_checked_applied_and_kept() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let toml = format!("{FILE}{}", source("remote", &server.base_url, 0));
        let mut daemon = Daemon::start(&toml);

        let list = ok(&daemon.run(&["settings", "list", "core.", "--origin"]));
        assert!(
            list.contains("core.agent.max_tool_turns = 4  [file]"),
            "{list}"
        );
        assert!(
            list.contains("core.probe_loopback = false  [file]"),
            "{list}"
        );
        assert!(
            list.contains("core.agent.max_context_size = 30  [default]"),
            "{list}"
        );

        // A user value wins over the file, and says the file's value it hides.
        let set = ok(&daemon.run(&["settings", "set", "core.agent.max_tool_turns", "6"]));
        assert!(set.contains("takes effect when hearthd restarts"), "{set}");
        let got = ok(&daemon.run(&["settings", "get", "core.agent.max_tool_turns", "--origin"]));
        assert!(
            got.contains("core.agent.max_tool_turns = 6  [user] (hearth.toml says 4)"),
            "{got}"
        );
        assert!(
            got.contains("Model calls at most"),
            "description shown: {got}"
        );

        // Refused: wrong type, a value the configuration rejects, an unknown key; nothing lost.
        let err = refused(&daemon.run(&["settings", "set", "core.agent.max_tool_turns", "many"]));
        assert!(err.contains("an integer"), "{err}");
        let err = refused(&daemon.run(&["settings", "set", "core.agent.max_tool_turns", "-1"]));
        assert!(err.contains("core.agent.max_tool_turns"), "{err}");
        let err = refused(&daemon.run(&["settings", "set", "core.agent.language", "klingon"]));
        assert!(err.contains("klingon"), "{err}");
        let err = refused(&daemon.run(&["settings", "set", "core.nothing", "1"]));
        assert!(
            err.contains("unknown settings key") && err.contains("core.nothing"),
            "{err}"
        );
        assert_eq!(
            ok(&daemon.run(&["settings", "get", "core.agent.max_tool_turns"])).trim(),
            "6"
        );
        assert_eq!(
            ok(&daemon.run(&["settings", "get", "core.agent.language"])).trim(),
            "auto"
        );

        // Live: the tool policy reaches the very next turn.
        server.push(Script::text("one"));
        ok(&daemon.run(&["send", "hi"]));
        assert!(offered(&server, 0).contains(&"system_time".to_owned()));
        let set = ok(&daemon.run(&[
            "settings",
            "set",
            "core.tools.disabled",
            r#"["system_time"]"#,
        ]));
        assert!(set.contains("applied now"), "{set}");
        server.push(Script::text("two"));
        ok(&daemon.run(&["send", "hi again"]));
        assert!(
            !offered(&server, 1).contains(&"system_time".to_owned()),
            "{:?}",
            offered(&server, 1)
        );

        // The daemon owns the file: the CLI on the file itself is refused while it runs.
        let err = refused(&offline(&daemon.dir, &["get", "core.agent.max_tool_turns"]));
        assert!(err.contains("held by another process"), "{err}");

        // Stopped: the CLI reads and writes the file itself, with the same checks.
        let (_, clean) = daemon.terminate(Duration::from_secs(30));
        assert!(clean);
        let dir = daemon.dir.clone();
        let got = ok(&offline(
            &dir,
            &["get", "core.agent.max_tool_turns", "--origin"],
        ));
        assert!(got.contains("= 6  [user] (hearth.toml says 4)"), "{got}");
        refused(&offline(
            &dir,
            &["set", "core.agent.max_tool_turns", "many"],
        ));
        let reset = ok(&offline(&dir, &["reset", "core.agent.max_tool_turns"]));
        assert!(
            reset.contains("core.agent.max_tool_turns = 4  [file]"),
            "{reset}"
        );
        std::mem::forget(daemon);

        // Restarted on the same data dir: the user's tool policy is still in force.
        let daemon = Daemon::restart(&dir, &toml);
        server.push(Script::text("three"));
        ok(&daemon.run(&["send", "and now?"]));
        assert!(!offered(&server, 2).contains(&"system_time".to_owned()));
        let list = ok(&daemon.run(&["settings", "list", "core.tools", "--origin"]));
        assert!(
            list.contains(r#"core.tools.disabled = ["system_time"]  [user]"#),
            "{list}"
        );
    });
}

/// The files plugin, installed in `dir/plugins/files` with the bundled manifest.
fn install_files_plugin(dir: &Path) -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_hearthd"))
        .parent()
        .expect("target dir")
        .join("hearth-files");
    assert!(
        bin.exists(),
        "{} is missing: cargo build -p hearth-plugin-files",
        bin.display()
    );
    let plugin = dir.join("plugins/files");
    std::fs::create_dir_all(&plugin).expect("plugin dir");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/plugins/files/plugin.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(manifest).expect("manifest")).expect("json");
    m["entry"] = bin.display().to_string().into();
    std::fs::write(plugin.join("plugin.json"), m.to_string()).expect("write");
    plugin
}

fn files_pid(daemon: &Daemon) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(&ok(&daemon.run(&["plugin", "list"]))).ok()?;
    let p = v["plugins"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == "files")?
        .clone();
    (p["state"] == "running")
        .then(|| p["pid"].as_u64())
        .flatten()
}

fn wait_pid(daemon: &Daemon, not: Option<u64>) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(pid) = files_pid(daemon).filter(|p| Some(*p) != not) {
            return pid;
        }
        assert!(Instant::now() < deadline, "files never ran (again)");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_plugin_key_from_its_manifest_is_typed_and_a_change_reloads_the_plugin() {
    within(Duration::from_secs(90), || {
        let roots = tempfile::tempdir().expect("roots");
        let first = roots.path().display().to_string();
        let toml = format!("[plugin.files]\nroots = [\"{first}\"]\n");
        let daemon = Daemon::start_with(&toml, |dir| {
            install_files_plugin(dir);
        });
        let before = wait_pid(&daemon, None);
        let list = ok(&daemon.run(&["settings", "list", "plugin.files", "--origin"]));
        assert!(
            list.contains(&format!("plugin.files.roots = [\"{first}\"]  [file]")),
            "{list}"
        );
        assert!(
            list.contains("plugin.files.max_read_bytes = null  [default]"),
            "{list}"
        );
        let err = refused(&daemon.run(&["settings", "set", "plugin.files.max_read_bytes", "lots"]));
        assert!(err.contains("an integer"), "{err}");
        let err = refused(&daemon.run(&["settings", "set", "plugin.files.nothing", "1"]));
        assert!(err.contains("unknown settings key"), "{err}");
        let second = roots.path().join("notes");
        std::fs::create_dir_all(&second).expect("notes");
        let value = format!("[\"{}\"]", second.display());
        let set = ok(&daemon.run(&["settings", "set", "plugin.files.roots", &value]));
        assert!(set.contains("applied: plugin files reloaded"), "{set}");
        let after = wait_pid(&daemon, Some(before));
        assert_ne!(before, after, "a new process reads the new roots");
    });
}

/// The web page and other programs speak JSON on the socket: typed `value`s, behind the same
/// key as every control request.
#[test]
fn json_requests_are_typed_and_gated_by_the_socket_key() {
    use crate::raw::Raw;
    use serde_json::json;
    within(Duration::from_secs(60), || {
        let daemon = Daemon::start("api_key = \"sesame\"\n");
        let err = refused(&daemon.run(&["settings", "get", "core.agent.language"]));
        assert!(err.contains("unauthorized"), "{err}");
        let mut raw = Raw::connect(&daemon.socket);
        raw.send(r#"{"op":"settings_list","prefix":"core."}"#);
        assert_eq!(raw.line()["error"], "unauthorized");

        let mut raw = Raw::connect(&daemon.socket);
        raw.send(r#"{"op":"auth","key":"sesame"}"#);
        assert_eq!(raw.line()["type"], "response");
        raw.send(r#"{"op":"settings_set","key":"core.agent.max_context_size","value":"40"}"#);
        let refused = raw.line();
        assert!(
            refused["error"]
                .as_str()
                .is_some_and(|e| e.contains("an integer")),
            "a JSON string is not an integer: {refused}"
        );
        raw.send(r#"{"op":"settings_set","key":"core.agent.max_context_size","value":40}"#);
        let set = raw.line();
        assert_eq!(set["type"], "settings", "{set}");
        assert_eq!(set["settings"]["setting"]["value"], json!(40));
        assert_eq!(set["settings"]["setting"]["origin"], "user");
        assert_eq!(set["settings"]["setting"]["def"]["applies"], "restart");
        raw.send(r#"{"op":"settings_reset","key":"core.agent.max_context_size"}"#);
        let reset = raw.line();
        assert_eq!(reset["settings"]["setting"]["origin"], "default", "{reset}");
        assert_eq!(reset["settings"]["setting"]["value"], json!(30));

        let out = daemon
            .cli()
            .args(["settings", "get", "core.agent.max_context_size"])
            .env("HEARTH_API_KEY", "sesame")
            .output()
            .expect("hearth runs");
        assert_eq!(ok(&out).trim(), "30");
    });
}
