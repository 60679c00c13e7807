//! What real servers do not show on demand, from the scripted server: a crash mid-call and the
//! restart, garbage on stdout, a handshake that never completes, paging, and a list change.

use std::time::Duration;

use hearth_mcp::supervised_name;
use hearth_plugin_host::PluginState;
use hearth_stages::HandlerError;
use hearth_testkit::within;
use serde_json::json;

use crate::{LIMIT, Rig, eventually, plain, scripted};

#[test]
fn a_server_that_crashes_mid_call_fails_the_call_and_is_restarted() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.up(scripted("sc", "crash"));
        let died = rig.tools.execute(&plain(), "sc_die", &json!({}));
        assert!(
            matches!(&died, Err(HandlerError::Unavailable(m)) if m.contains("closed")),
            "{died:?}"
        );
        let sup = supervised_name("sc");
        let back = rig.supervisor.wait_for(&sup, Duration::from_secs(10), |s| {
            s.restarts >= 1 && s.state == PluginState::Running
        });
        let back = back.expect("supervised");
        assert!(back.restarts >= 1 && back.crashes >= 1, "{back:?}");
        assert!(
            eventually(Duration::from_secs(10), || rig.tools.contains("sc_echo")),
            "the tools come back with the restart"
        );
        let echo = rig.tools.execute(&plain(), "sc_echo", &json!({"x": 1}));
        assert_eq!(echo, Ok(json!("{\"x\":1}")));
    });
}

#[test]
fn garbage_lines_are_skipped_and_counted_and_a_junk_answer_times_out() {
    within(LIMIT, || {
        let rig = Rig::start();
        let mut cfg = scripted("junk", "garbage");
        cfg.timeout_secs = Some(2);
        rig.up(cfg);
        let echo = rig
            .tools
            .execute(&plain(), "junk_echo", &json!({"a": true}));
        assert_eq!(echo, Ok(json!("{\"a\":true}")));
        let noise = rig.tools.execute(&plain(), "junk_noise", &json!({}));
        assert_eq!(noise, Err(HandlerError::TimedOut));
        let client = rig
            .servers
            .get("junk")
            .and_then(|s| s.client())
            .expect("connected");
        assert!(
            client.connection().bad_frames() >= 4,
            "{}",
            client.connection().bad_frames()
        );
        let echo = rig.tools.execute(&plain(), "junk_echo", &json!({"b": 2}));
        assert_eq!(
            echo,
            Ok(json!("{\"b\":2}")),
            "the connection survives the junk"
        );
    });
}

#[test]
fn a_handshake_that_never_completes_fails_the_start_with_the_reason() {
    within(LIMIT, || {
        let rig = Rig::start();
        let mut cfg = scripted("mute", "silent");
        cfg.timeout_secs = Some(1);
        rig.servers.start(cfg).expect("a valid entry");
        let status = rig
            .supervisor
            .wait_for(&supervised_name("mute"), Duration::from_secs(10), |s| {
                s.state == PluginState::Failed
            })
            .expect("supervised");
        assert_eq!(status.state, PluginState::Failed);
        let why = status.last_error.unwrap_or_default();
        assert!(why.contains("did not answer initialize"), "{why}");
        assert!(rig.tools.is_empty());
    });
}

#[test]
fn every_page_of_a_paginated_list_is_registered() {
    within(LIMIT, || {
        let rig = Rig::start();
        let report = rig.up(scripted("pg", "paged"));
        assert_eq!(report.tools, ["pg_t1", "pg_t2", "pg_t3", "pg_t4", "pg_t5"]);
    });
}

#[test]
fn a_list_change_registers_the_new_tool() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.up(scripted("chg", "changing"));
        assert!(!rig.tools.contains("chg_grown"));
        let grew = rig.tools.execute(&plain(), "chg_grow", &json!({}));
        assert_eq!(grew, Ok(json!("grew")));
        assert!(
            eventually(Duration::from_secs(5), || rig.tools.contains("chg_grown")),
            "{:?}",
            rig.tools.entries()
        );
        assert!(rig.tools.contains("chg_echo"), "the old tools stay");
    });
}

#[test]
fn a_collision_with_another_owner_is_reported_and_the_rest_registered() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.tools
            .register(
                hearth_stages::ToolDef {
                    name: "pg_t3".into(),
                    ..Default::default()
                },
                hearth_stages::tool_fn(|_| Ok(json!("plugin"))),
            )
            .expect("a plugin's tool");
        let report = rig.up(scripted("pg", "paged"));
        assert_eq!(report.tools, ["pg_t1", "pg_t2", "pg_t4", "pg_t5"]);
        assert!(
            report
                .skipped
                .iter()
                .any(|s| s.contains("plugin pg") && s.contains("mcp server pg")),
            "{:?}",
            report.skipped
        );
        assert_eq!(
            rig.tools.execute(&plain(), "pg_t3", &json!({})),
            Ok(json!("plugin"))
        );
    });
}

#[test]
fn a_stopped_call_is_withdrawn_with_notifications_cancelled() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.up(scripted("sl", "slow"));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let call = crate::ctx(&stop, Duration::from_secs(30));
        let tools = std::sync::Arc::clone(&rig.tools);
        let waiting = std::thread::spawn(move || tools.execute(&call, "sl_wait", &json!({})));
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            waiting.join().expect("the call"),
            Err(HandlerError::Cancelled)
        );
        let seen = rig
            .tools
            .execute(&plain(), "sl_cancelled", &json!({}))
            .expect("the list");
        let seen: serde_json::Value =
            serde_json::from_str(seen.as_str().expect("text")).expect("json");
        let first = &seen[0];
        assert!(first["requestId"].is_u64(), "{seen}");
        assert!(
            first["reason"]
                .as_str()
                .is_some_and(|r| r.contains("cancelled")),
            "{seen}"
        );
    });
}
