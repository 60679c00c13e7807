//! Hostile or broken adapters give clear errors and never take the daemon down.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::LlmServer;
use std::path::Path;
use std::time::Duration;

const LOOP: &str =
    "return { name = 'loop', transform_request = function(raw) while true do end end }";
const BLOAT: &str = "return { name = 'bloat', transform_request = function(raw) local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1024) end return raw end }";
const BROKEN: &str = "return { name = 'broken', transform_request = function(raw) return raw end";

fn hostile(dir: &Path) {
    let adapters = dir.join("adapters");
    std::fs::create_dir_all(&adapters).expect("adapters dir");
    std::fs::write(adapters.join("loop.lua"), LOOP).expect("write");
    std::fs::write(adapters.join("bloat.lua"), BLOAT).expect("write");
    std::fs::write(adapters.join("broken.lua"), BROKEN).expect("write");
}

fn hostile_source(name: &str, base: &str) -> String {
    format!(
        "[[sources]]\nname = \"{name}\"\nbase_url = \"{base}\"\nmodel = \"m\"\nadapter = \"{name}\"\npriority = 10\n"
    )
}

#[test]
fn hostile_adapters_fail_clearly_and_the_daemon_keeps_serving() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let toml = format!(
            "{}{}{}",
            hostile_source("loop", &server.base_url),
            hostile_source("bloat", &server.base_url),
            source("good", &server.base_url, 0)
        );
        let daemon = Daemon::start_with(&toml, hostile);
        let looped = daemon.run(&["source", "test", "loop"]);
        assert_eq!(looped.status.code(), Some(1));
        assert!(stderr(&looped).contains("loop"), "{}", stderr(&looped));
        assert!(
            stderr(&looped).to_lowercase().contains("budget")
                || stderr(&looped).contains("instruction"),
            "{}",
            stderr(&looped)
        );
        let bloated = daemon.run(&["source", "test", "bloat"]);
        assert_eq!(bloated.status.code(), Some(1));
        assert!(
            stderr(&bloated).to_lowercase().contains("memory"),
            "{}",
            stderr(&bloated)
        );
        let broken = daemon.run(&[
            "source",
            "add",
            "broken",
            "--base-url",
            &server.base_url,
            "--model",
            "m",
            "--adapter",
            "broken",
        ]);
        assert_eq!(broken.status.code(), Some(1));
        assert!(
            stderr(&broken).contains("broken.lua"),
            "{}",
            stderr(&broken)
        );
        // The good source still answers (the hostile ones fail fast and fall back).
        let ok = daemon.run(&["send", "are you alive?"]);
        assert!(ok.status.success(), "{}", stderr(&ok));
        assert!(stdout(&ok).contains("default answer"));
    });
}

#[test]
fn sources_added_at_run_time_persist_across_restarts() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start("");
        let none = daemon.run(&["send", "hello"]);
        assert_eq!(none.status.code(), Some(1));
        assert!(
            stderr(&none).contains("hearth source add") || stderr(&none).contains("no LLM source"),
            "{}",
            stderr(&none)
        );
        let added = daemon.run(&[
            "source",
            "add",
            "mine",
            "--base-url",
            &server.base_url,
            "--model",
            "test-model",
            "--api-key",
            "k-123",
        ]);
        assert!(added.status.success(), "{}", stderr(&added));
        assert!(stdout(&daemon.run(&["send", "hello again"])).contains("default answer"));
        let seen = server.seen();
        let auth = seen[0]
            .headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.clone());
        assert_eq!(auth.as_deref(), Some("Bearer k-123"));
        let store = std::fs::read_to_string(daemon.dir.join("sources.json")).expect("persisted");
        assert!(store.contains("\"mine\""));
        let list = stdout(&daemon.run(&["source", "list"]));
        assert!(!list.contains("k-123"), "keys are never shown: {list}");
        let removed = daemon.run(&["source", "remove", "mine"]);
        assert!(removed.status.success());
        assert!(
            !std::fs::read_to_string(daemon.dir.join("sources.json"))
                .expect("store")
                .contains("mine")
        );
    });
}
