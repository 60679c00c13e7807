//! Choosing the LLM source (SPEC §7.3's current source): a plugin asks which source the next
//! answer comes from and switches it mid-turn (`llm.currentSource`, `llm.setSource`); the
//! switch is the `core.agent.source` setting, so the next answer — and the first after a
//! restart — comes from the chosen source, a name no source has is refused, and resetting it
//! goes back to priority order.

use crate::daemon_plugins::{plugin_dir, sdk_binary, wait_state};
use crate::harness::{Daemon, source, stderr, stdout, tool_results, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::time::Duration;

fn send(daemon: &Daemon, text: &str) {
    let out = daemon.run(&["send", text]);
    assert!(out.status.success(), "{text}: {}", stderr(&out));
}

fn current(daemon: &Daemon) -> String {
    let list: Vec<Value> =
        serde_json::from_str(&stdout(&daemon.run(&["source", "list"]))).expect("JSON");
    let current: Vec<&Value> = list.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1, "one current source: {list:?}");
    current[0]["name"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_plugin_switches_the_source_and_the_choice_outlives_a_restart() {
    within(Duration::from_secs(120), || {
        let local = LlmServer::start();
        let cloud = LlmServer::start();
        let conformance = sdk_binary("hearth-plugin-conformance");
        let toml = format!(
            "{}{}",
            source("local", &local.base_url, 5),
            source("cloud", &cloud.base_url, 0)
        );
        let mut daemon = Daemon::start_with(&toml, |dir| {
            plugin_dir(&dir.join("plugins"), "conformance", &conformance);
        });
        wait_state(&daemon, "conformance", "running");
        assert_eq!(current(&daemon), "local", "by priority");

        let call = |method: &str, params: Value| {
            (
                "call".to_owned(),
                json!({"method": method, "params": params}),
            )
        };
        local.push(Script::Tools(vec![
            call("llm.currentSource", json!({})),
            call("llm.setSource", json!({"source": "nowhere"})),
            call("llm.setSource", json!({"source": "cloud"})),
        ]));
        cloud.push(Script::text("Switched."));
        send(&daemon, "use the cloud model please");
        let results = tool_results(&cloud);
        assert_eq!(results[0], json!({"source": "local"}));
        let refused = results[1].as_str().unwrap_or_default();
        assert!(
            refused.contains("nowhere") && refused.contains("cloud"),
            "an unknown name is refused, naming the sources: {}",
            results[1]
        );
        assert_eq!(results[2], json!({"source": "cloud"}));
        assert_eq!(current(&daemon), "cloud");

        let before = local.seen().len();
        send(&daemon, "and now?");
        assert_eq!(local.seen().len(), before, "the chosen source answers");
        let out = daemon.run(&["settings", "set", "core.agent.source", "nowhere"]);
        assert!(!out.status.success(), "{}", stdout(&out));
        assert!(stderr(&out).contains("nowhere"), "{}", stderr(&out));

        let dir = daemon.dir.clone();
        daemon.terminate(Duration::from_secs(10));
        let daemon = Daemon::restart(&dir, &toml);
        assert_eq!(current(&daemon), "cloud", "kept across a restart");
        let asked = cloud.seen().len();
        send(&daemon, "still there?");
        assert_eq!(cloud.seen().len(), asked + 1);

        let reset = daemon.run(&["settings", "reset", "core.agent.source"]);
        assert!(reset.status.success(), "{}", stderr(&reset));
        assert_eq!(current(&daemon), "local", "back to priority order");
    });
}
