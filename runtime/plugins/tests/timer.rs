//! The bundled `timer` plugin under the host: a due timer becomes an L3 interrupt, and pending
//! timers survive a restart of the host.

mod support;

use std::time::{Duration, Instant};

use hearth_plugin_host::session::Timeouts;
use hearth_plugin_host::{PluginState, RestartPolicy};
use hearth_rpc::Priority;
use serde_json::json;
use support::{CallTool, Fixture, LONG, sdk_binary, watchdog};

#[test]
fn a_due_timer_interrupts_at_l3_and_pending_timers_survive_a_restart() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let host = fx.start_one(
            "timer",
            &sdk_binary("hearth-timer"),
            r#","capabilities":["io"]"#,
        );
        let tools = &fx.tables.tools;
        let bad = tools
            .call_tool("timer_set", &json!({"text": "x", "in_seconds": -1}))
            .expect_err("negative");
        assert!(bad.contains("in_seconds"), "{bad}");
        tools
            .call_tool("timer_set", &json!({"text": "tea", "in_seconds": 0.2}))
            .expect("set");
        let later = tools
            .call_tool(
                "timer_set",
                &json!({"text": "call mum", "in_seconds": 3600}),
            )
            .expect("set");
        let deadline = Instant::now() + Duration::from_secs(10);
        while fx.seen.injected.lock().unwrap().is_empty() {
            assert!(Instant::now() < deadline, "the due timer never fired");
            std::thread::sleep(Duration::from_millis(20));
        }
        let fired = fx.seen.injected.lock().unwrap().clone();
        assert_eq!(
            fired,
            vec![(
                "timer".into(),
                "Reminder: tea".into(),
                hearth_plugin_host::Injection {
                    interrupt: true,
                    priority: Some(Priority::L3),
                    no_memory: false,
                    media: Vec::new(),
                }
            )]
        );
        host.shutdown();

        let host = fx.host(RestartPolicy::default(), Timeouts::default());
        host.start_all().expect("order");
        host.wait_for("timer", LONG, |s| s.state == PluginState::Running);
        let listed = fx
            .tables
            .tools
            .call_tool("timer_list", &json!({}))
            .expect("list");
        let timers = listed["timers"].as_array().cloned().unwrap_or_default();
        assert_eq!(timers.len(), 1, "{listed}");
        assert_eq!(timers[0]["id"], later["id"]);
        assert_eq!(timers[0]["text"], "call mum");
        let cancelled = fx
            .tables
            .tools
            .call_tool("timer_cancel", &json!({"id": later["id"]}))
            .expect("cancel");
        assert_eq!(cancelled["cancelled"], true);
        host.shutdown();
    });
}
