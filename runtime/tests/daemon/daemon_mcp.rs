//! An MCP server under a real `hearthd`: started from `[[mcp]]`, its tools offered to the model
//! (less the ones `[tools]` disables), a call made through it, and `hearth mcp list` showing it.

use crate::harness::{Daemon, offered, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn scripted_server() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/scripted-server.mjs")
}

fn connected(daemon: &Daemon) -> Option<Value> {
    let out = daemon.run(&["mcp", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    v["daemon"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == "pg" && s["connected"] == true)
        .cloned()
}

#[test]
fn mcp_tools_reach_the_model_less_the_disabled_and_a_call_goes_through() {
    within(Duration::from_secs(90), || {
        let llm = LlmServer::start();
        llm.push(Script::Tools(vec![("pg_t2".into(), json!({"q": "hi"}))]));
        llm.push(Script::text("done"));
        let toml = format!(
            "{}[tools]\ndisabled = [\"pg_t4\"]\n[[mcp]]\nname = \"pg\"\ncommand = \"node\"\nargs = [\"{}\", \"paged\"]\n",
            source("llm", &llm.base_url, 0),
            scripted_server().display()
        );
        let daemon = Daemon::start(&toml);
        let deadline = Instant::now() + Duration::from_secs(30);
        let server = loop {
            if let Some(s) = connected(&daemon) {
                break s;
            }
            assert!(Instant::now() < deadline, "the mcp server never connected");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(
            server["tools"].as_array().map(Vec::len),
            Some(5),
            "{server}"
        );
        assert_eq!(server["process"]["state"], "running", "{server}");

        let out = daemon.run(&["send", "use the tool"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("done"), "{}", stdout(&out));

        let seen = llm.wait_requests(2, Duration::from_secs(10));
        let offered: Vec<&str> = seen[0].body["tools"]
            .as_array()
            .expect("tools offered")
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        for name in ["pg_t1", "pg_t2", "pg_t3", "pg_t5"] {
            assert!(offered.contains(&name), "{name} not offered: {offered:?}");
        }
        assert!(
            !offered.contains(&"pg_t4"),
            "a disabled tool was offered: {offered:?}"
        );
        let messages = seen[1].body["messages"].as_array().expect("messages");
        let result = messages
            .iter()
            .find(|m| m["role"] == "tool")
            .expect("the tool result goes back to the model");
        assert!(
            result["content"]
                .as_str()
                .is_some_and(|c| c.contains("\\\"q\\\":\\\"hi\\\"") || c.contains("\"q\":\"hi\"")),
            "{result}"
        );
    });
}

#[test]
fn hearth_mcp_add_and_remove_take_effect_on_a_running_daemon() {
    within(Duration::from_secs(120), || {
        let llm = LlmServer::start();
        llm.push(Script::text("with"));
        llm.push(Script::text("without"));
        let daemon = Daemon::start(&source("llm", &llm.base_url, 0));
        assert!(connected(&daemon).is_none());
        let server = scripted_server().display().to_string();
        // The store is the daemon's: the command line names its data dir.
        let dir = daemon.dir.display().to_string();
        let out = daemon.run(&[
            "--data-dir",
            &dir,
            "mcp",
            "add",
            "pg",
            "--",
            "node",
            &server,
            "paged",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("synced") && stdout(&out).contains("\"started\":[\"pg\"]"),
            "{}",
            stdout(&out)
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while connected(&daemon).is_none() {
            assert!(
                Instant::now() < deadline,
                "the added server never connected"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = daemon.run(&["send", "tools please"]);
        assert!(out.status.success(), "{}", stderr(&out));

        let out = daemon.run(&["--data-dir", &dir, "mcp", "remove", "pg"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("\"stopped\":[\"pg\"]"),
            "{}",
            stdout(&out)
        );
        assert!(
            connected(&daemon).is_none(),
            "the removed server still runs"
        );
        let out = daemon.run(&["send", "tools again"]);
        assert!(out.status.success(), "{}", stderr(&out));

        let seen = llm.wait_requests(2, Duration::from_secs(10));
        assert!(
            offered(&seen[0]).iter().any(|n| n == "pg_t1"),
            "{:?}",
            offered(&seen[0])
        );
        assert!(
            !offered(&seen[1]).iter().any(|n| n.starts_with("pg_")),
            "{:?}",
            offered(&seen[1])
        );
    });
}
