//! The user's zone: without `agent.utc_offset_secs` a daemon reckons in the system's zone
//! (here `TZ`, as a systemd unit or the owner's login sets it), and the setting wins over it.
//! The `system_time` tool shows which offset the daemon took.

use crate::harness::{Daemon, source, tool_turn, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::{Value, json};
use std::time::Duration;

/// The offset `system_time` reports from a daemon started with `TZ=tz` and `toml`.
fn offset_seen(tz: &str, toml: &str) -> Value {
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
    result["utc_offset_secs"].clone()
}

#[test]
fn without_a_configured_offset_the_systems_zone_is_the_users() {
    within(Duration::from_secs(60), || {
        assert_eq!(offset_seen("JST-9", ""), json!(32_400));
    });
}

#[test]
fn a_configured_offset_wins_over_the_systems_zone() {
    within(Duration::from_secs(60), || {
        assert_eq!(
            offset_seen("JST-9", "\n[agent]\nutc_offset_secs = -3600\n"),
            json!(-3_600)
        );
    });
}
