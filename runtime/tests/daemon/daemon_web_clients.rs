//! The web channel driven by real clients: the official `openai` Python package against
//! `/v1`, and the page in Debian's headless Chromium through playwright-core. Both are
//! installed by `make setup` (scripts/setup-web-tests.sh).

use crate::daemon_web::{
    Http, KEY, PASSWORD, config, free_port, preset, start, web_binary_is_built,
};
use crate::harness::{Daemon, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn web_tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/web")
}

fn needs(path: &Path, what: &str) {
    assert!(
        path.exists(),
        "{} is missing: run `make setup` (scripts/setup-web-tests.sh installs {what})",
        path.display()
    );
}

/// Runs `cmd` and parses the one JSON line it prints.
fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.output().expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn the_official_openai_package_gets_whole_and_streamed_answers() {
    within(Duration::from_secs(120), || {
        let python = web_tests_dir().join("venv/bin/python");
        needs(&python, "the openai package");
        let server = LlmServer::start();
        server.push(Script::text("a whole answer"));
        server.push(Script::text("a streamed answer in pieces"));
        let (_daemon, http) = start(&server);
        let seen = json_of(
            Command::new(&python)
                .arg(web_tests_dir().join("openai_client.py"))
                .arg(format!("http://127.0.0.1:{}/v1", http.port))
                .arg(KEY),
        );
        assert_eq!(seen["whole"], "a whole answer", "{seen}");
        assert_eq!(seen["finish"], "stop");
        assert_eq!(seen["streamed"], "a streamed answer in pieces");
        assert!(
            seen["pieces"].as_u64().unwrap() >= 5,
            "streamed in pieces: {seen}"
        );
        assert_eq!(seen["models"], json!(["hearth"]));
        assert_eq!(seen["wrong_key"], 401);
        assert_eq!(seen["wrong_key_code"], "invalid_api_key");
    });
}

#[test]
fn the_page_in_headless_chromium_streams_stops_reloads_searches_and_manages_plugins() {
    within(Duration::from_secs(180), || {
        let dir = web_tests_dir();
        needs(&dir.join("node_modules/playwright-core"), "playwright-core");
        needs(Path::new("/usr/bin/chromium"), "Debian's chromium");
        web_binary_is_built();
        let timer = Path::new(env!("CARGO_BIN_EXE_hearthd"))
            .parent()
            .expect("target dir")
            .join("hearth-timer");
        needs(
            &timer,
            "nothing: build it with `cargo build -p hearth-plugin-timer`",
        );
        let server = LlmServer::start();
        server.push(Script::Tools(vec![(
            "doc_commit".into(),
            json!({"content": "the blue teapot is in the attic", "summary": "teapot"}),
        )]));
        server.push(Script::text("noted"));
        server.push(Script::text("in the attic"));
        server.push(Script::Text {
            pieces: ["alpha ", "beta ", "gamma ", "delta"]
                .map(String::from)
                .to_vec(),
            delay: Duration::from_millis(150),
        });
        let gate_tx = crate::daemon_web::gated(&server, &["never ", "ends ", "here"], 1);
        let port = free_port();
        let daemon = Daemon::start_with(&config(&server), |d| {
            preset(d, &format!("127.0.0.1:{port}"), Some(PASSWORD));
            let t = d.join("plugins/timer");
            std::fs::create_dir_all(&t).expect("dir");
            let manifest = json!({"name": "timer", "version": "0.1.0", "entry": timer,
                "capabilities": ["io"]});
            std::fs::write(t.join("plugin.json"), manifest.to_string()).expect("manifest");
        });
        let http = Http { port };
        http.wait_up();
        let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/web-screenshots");
        std::fs::create_dir_all(&shots).expect("shots dir");
        let seen = json_of(
            Command::new("node")
                .arg(dir.join("page.mjs"))
                .arg(format!("http://127.0.0.1:{port}/"))
                .arg(PASSWORD)
                .arg(&shots)
                .arg(&server.base_url)
                .current_dir(&dir),
        );
        drop(gate_tx);
        let growth: Vec<String> = serde_json::from_value(seen["growth"].clone()).expect("growth");
        assert_eq!(
            growth.last().map(String::as_str),
            Some("alpha beta gamma delta"),
            "{seen}"
        );
        assert!(
            growth
                .iter()
                .any(|g| g.starts_with("alpha") && g.len() < "alpha beta gamma delta".len()),
            "the answer grew token by token: {growth:?}"
        );
        let stopped = seen["stopped_text"].as_str().unwrap();
        assert!(
            stopped.contains("stopped") && !stopped.contains("here"),
            "{stopped}"
        );
        let history: Vec<String> = serde_json::from_value(seen["history"].clone()).expect("h");
        assert!(history.iter().any(|m| m == "count slowly"), "{history:?}");
        assert!(
            history.iter().any(|m| m == "alpha beta gamma delta"),
            "{history:?}"
        );
        // The tool call and its result, both visible in the answer's bubble.
        let tool_line = seen["tool_line"].as_str().unwrap();
        let (call, result) = tool_line.split_once(" → ").expect("call → result");
        assert!(
            call.contains("doc_commit") && call.contains("blue teapot"),
            "{seen}"
        );
        assert!(!result.trim().is_empty(), "{seen}");
        let rows = seen["memory_rows"].to_string();
        assert!(rows.contains("teapot"), "{seen}");
        // The turns about the teapot are still in the working window: listed as said recently.
        let recent = seen["recent_rows"].to_string();
        assert!(
            recent.contains("teapot") && recent.contains("said recently"),
            "{seen}"
        );
        assert!(
            seen["confirm"].as_str().unwrap().contains("Forget memory"),
            "{seen}"
        );
        assert_eq!(seen["memory_after"], 0, "forgotten: {seen}");
        // The turn that asked about the teapot shows the note it was given, and why.
        assert_eq!(seen["recalled_id"], seen["memory_id"], "{seen}");
        let recalled = seen["recalled_rows"].to_string();
        assert!(
            recalled.contains("teapot")
                && recalled.contains("score")
                && recalled.contains("keywords"),
            "{seen}"
        );
        assert!(
            seen["recalled_turn"]
                .as_str()
                .unwrap()
                .contains("where is the blue teapot?"),
            "{seen}"
        );
        let id: i64 = seen["memory_id"].as_str().unwrap().parse().expect("id");
        let audit = std::fs::read_to_string(daemon.dir.join("audit.jsonl")).expect("audit log");
        let record: Value = serde_json::from_str(audit.lines().last().unwrap()).expect("json");
        assert_eq!(
            (record["op"].as_str(), record["id"].as_i64()),
            (Some("forget"), Some(id))
        );
        assert_eq!(record["by"], "web");
        assert!(
            seen["disabled"].as_str().unwrap().contains("disabled"),
            "{seen}"
        );
        assert!(
            !seen["enabled"].as_str().unwrap().contains("disabled"),
            "{seen}"
        );
        // A source added from the page: listed, tested against the stub with the key it was
        // given, removed after a confirmation; the key never came back to the browser.
        assert!(
            seen["source_row"].as_str().unwrap().contains("spare-model"),
            "{seen}"
        );
        // Its priority (the form's default, 10: above the stub's 0) and so its place in the
        // fallback order, first, are shown.
        assert!(
            seen["source_row"].as_str().unwrap().starts_with("1.")
                && seen["source_row"].as_str().unwrap().contains("priority 10"),
            "{seen}"
        );
        assert_eq!(seen["key_field_after"], "", "{seen}");
        assert!(
            seen["source_confirm"].as_str().unwrap().contains("spare"),
            "{seen}"
        );
        assert_eq!(seen["key_in_responses"], 0, "{seen}");
        assert_eq!(seen["key_in_page"], false, "{seen}");
        let keyed = server.seen().iter().any(|s| {
            s.headers
                .iter()
                .any(|(k, v)| k == "authorization" && v == "Bearer sk-page-secret-0123456789")
        });
        assert!(keyed, "the test reached the stub with the stored key");
        for n in 1..=9 {
            let found = std::fs::read_dir(&shots).expect("shots").any(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{n}-"))
            });
            assert!(found, "screenshot {n} saved");
        }
        eprintln!("page weight on first load: {} bytes", seen["page_bytes"]);
    });
}

#[test]
fn the_pages_interrupt_option_preempts_a_long_answer_and_both_are_shown_in_chromium() {
    within(Duration::from_secs(120), || {
        let dir = web_tests_dir();
        needs(&dir.join("node_modules/playwright-core"), "playwright-core");
        needs(Path::new("/usr/bin/chromium"), "Debian's chromium");
        let server = LlmServer::start();
        server.push(Script::Text {
            pieces: (0..60).map(|i| format!("w{i} ")).collect(),
            delay: Duration::from_millis(40),
        });
        server.push(Script::text("Urgent handled."));
        server.push(Script::text("The long answer, resumed."));
        let (daemon, http) = start(&server);
        let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/web-screenshots");
        std::fs::create_dir_all(&shots).expect("shots dir");
        let seen = json_of(
            Command::new("node")
                .arg(dir.join("interrupt.mjs"))
                .arg(format!("http://127.0.0.1:{}/", http.port))
                .arg(PASSWORD)
                .arg(&shots)
                .current_dir(&dir),
        );
        assert_eq!(seen["urgent"], "Urgent handled.", "{seen}");
        assert_eq!(seen["long"], "The long answer, resumed.", "{seen}");
        // The order is the kernel's: the interrupt ran while the long answer was suspended,
        // then the long one again (on the page both end within milliseconds, in either order).
        let asked = server.seen();
        assert_eq!(asked.len(), 3, "long, interrupt, long again");
        assert!(
            asked[1].body["messages"].to_string().contains("oven timer"),
            "{:?}",
            asked[1].body
        );
        assert!(
            asked[2].body["messages"]
                .to_string()
                .contains("tell me something long"),
            "{:?}",
            asked[2].body
        );
        let status: Value =
            serde_json::from_slice(&daemon.run(&["status"]).stdout).expect("status");
        assert_eq!(status["scheduler"]["stats"]["suspended"], 1, "{status}");
        assert_eq!(status["scheduler"]["stats"]["resumed"], 1, "{status}");
        assert!(shots.join("interrupt.png").exists());
    });
}

#[test]
fn the_page_shows_the_resumed_after_a_restart_notice_and_the_whole_answer_in_chromium() {
    use std::io::{BufRead, BufReader, Write};
    within(Duration::from_secs(150), || {
        let dir = web_tests_dir();
        needs(&dir.join("node_modules/playwright-core"), "playwright-core");
        needs(Path::new("/usr/bin/chromium"), "Debian's chromium");
        let server = LlmServer::start();
        let cut = crate::daemon_web::gated(&server, &["once ", "upon ", "a time"], 1);
        let resumed = crate::daemon_web::gated(&server, &["the whole story, ", "told again"], 1);
        let (daemon, http) = start(&server);
        let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/web-screenshots");
        std::fs::create_dir_all(&shots).expect("shots dir");
        let mut node = Command::new("node")
            .arg(dir.join("resume.mjs"))
            .arg(format!("http://127.0.0.1:{}/", http.port))
            .arg(PASSWORD)
            .arg(&shots)
            .current_dir(&dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("node runs");
        let mut to_node = node.stdin.take().expect("stdin");
        let mut from_node = BufReader::new(node.stdout.take().expect("stdout")).lines();
        let mut expect = |what: &str| {
            let line = from_node.next().and_then(Result::ok);
            assert_eq!(line.as_deref(), Some(what), "the page script's progress");
        };
        expect("MID");
        // Killed mid-answer: the input is journaled without a reply, so it runs again.
        let data = daemon.dir.clone();
        daemon.kill9();
        drop(cut);
        let _daemon = Daemon::restart(&data, &config(&server));
        http.wait_up();
        writeln!(to_node, "go").expect("tell node");
        expect("NOTICE");
        drop(resumed);
        writeln!(to_node, "go").expect("tell node");
        let last = from_node.last().and_then(Result::ok).unwrap_or_default();
        assert!(node.wait().expect("node exits").success(), "{last}");
        let seen: Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
        assert!(
            seen["notice"]
                .as_str()
                .unwrap()
                .contains("resumed after a restart"),
            "{seen}"
        );
        assert_eq!(seen["answer"], "the whole story, told again", "{seen}");
        let messages = seen["messages"].to_string();
        assert_eq!(
            messages.matches("tell me the whole story").count(),
            1,
            "the input once, from the journal: {seen}"
        );
        assert_eq!(server.seen().len(), 2, "asked again after the restart");
    });
}
