//! The user's zone: without `agent.utc_offset_secs` a daemon reckons in the system's zone
//! (here `TZ`, as a systemd unit or the owner's login sets it), the setting wins over it, and
//! an unreadable zone is UTC with the reason shown. The `system_time` tool and `hearth status`
//! show which offset the daemon took.

use crate::harness::{Daemon, source, stdout, tool_turn, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::{Value, json};
use std::time::Duration;

/// What `system_time` and `hearth status` report from a daemon started with `TZ=tz` and
/// `toml`: the tool's offset, and the status's `zone`.
fn zone_seen(tz: &str, toml: &str) -> (Value, Value) {
    let server = LlmServer::start();
    let dir = Daemon::fresh_dir();
    let mut cmd = Daemon::command(
        &dir,
        &format!(
            "memory_model = false\n{}{toml}",
            source("remote", &server.base_url, 0)
        ),
    );
    cmd.env("TZ", tz);
    let daemon = Daemon::adopt(cmd.spawn().expect("hearthd starts"), dir);
    let results = tool_turn(
        &daemon,
        &server,
        "what time is it?",
        vec![("system_time", json!({}))],
    );
    let result: Value = serde_json::from_str(&results[0]).expect("the tool answers JSON");
    let status: Value =
        serde_json::from_str(&stdout(&daemon.run(&["status"]))).expect("status JSON");
    (result["utc_offset_secs"].clone(), status["zone"].clone())
}

#[test]
fn without_a_configured_offset_the_systems_zone_is_the_users() {
    within(Duration::from_secs(60), || {
        let (tool, status) = zone_seen("JST-9", "");
        assert_eq!(tool, json!(32_400));
        assert_eq!(status, json!({"utc_offset_secs": 32_400, "from": "system"}));
    });
}

#[test]
fn a_configured_offset_wins_over_the_systems_zone() {
    within(Duration::from_secs(60), || {
        let (tool, status) = zone_seen("JST-9", "\n[agent]\nutc_offset_secs = -3600\n");
        assert_eq!(tool, json!(-3_600));
        assert_eq!(status["from"], "configured");
    });
}

#[test]
fn an_unreadable_zone_is_utc_and_status_says_why() {
    within(Duration::from_secs(60), || {
        let (tool, status) = zone_seen("Nowhere/Atlantis", "");
        assert_eq!(tool, json!(0));
        assert_eq!(status["from"], "utc", "{status}");
        let why = status["why"].as_str().unwrap_or_default();
        assert!(why.contains("Nowhere/Atlantis"), "{status}");
    });
}
