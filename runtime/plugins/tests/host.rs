//! The plugin host against real child processes over real pipes.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_plugin_host::session::Timeouts;
use hearth_plugin_host::{PluginState, PluginStatus, RestartPolicy};
use serde_json::json;
use support::{
    CallTool, Fixture, LONG, alive, children_running, scripted_start, sdk_binary, watchdog,
};

fn running(s: &PluginStatus) -> bool {
    s.state == PluginState::Running
}

#[test]
fn a_crash_loop_stops_after_the_fourth_crash_while_other_plugins_keep_answering() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        // Starts cleanly, then dies; a grandchild keeps its stdout open, so only waiting for
        // the process (not end of file) notices the crash.
        fx.install_script(
            "crashy",
            &scripted_start("crashy", "sleep 2 &\nsleep 0.05\nexit 7"),
            "",
        );
        fx.install("echo", &sdk_binary("examples/echo"), "");
        let host = fx.host(RestartPolicy::scaled(100), Timeouts::default());
        host.start_all().expect("order");
        host.wait_for("echo", LONG, running).expect("echo slot");

        let deadline = Instant::now() + LONG;
        let mut answered = 0;
        while !matches!(
            host.status_of("crashy").map(|s| s.state),
            Some(PluginState::GaveUp { .. })
        ) {
            assert!(Instant::now() < deadline, "crashy never gave up");
            let got = fx.tables.tools.call_tool("echo", &json!({"text": "hi"}));
            assert_eq!(got.expect("echo answers")["text"], "hi");
            answered += 1;
        }
        assert!(answered > 0);
        let status = host.status_of("crashy").expect("status");
        assert_eq!(status.state, PluginState::GaveUp { crashes: 4 });
        assert_eq!(
            status.restarts, 3,
            "restarted after crashes 1, 2 and 3 only"
        );
        assert!(
            status
                .last_error
                .as_deref()
                .unwrap_or("")
                .contains("status 7"),
            "{status:?}"
        );
        assert_eq!(fx.seen.count("plugin_crashed"), 4);
        assert_eq!(fx.seen.count("plugin_gave_up"), 1);
        let listed = host.list();
        let crashy = listed["plugins"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["name"] == "crashy"))
            .cloned()
            .expect("listed");
        assert_eq!(crashy["state"], "gave_up");

        // A manual reload resets the count: four more crashes before it gives up again.
        host.reload("crashy").expect("reload");
        host.wait_for("crashy", LONG, |s| {
            matches!(s.state, PluginState::GaveUp { .. })
        });
        assert_eq!(fx.seen.count("plugin_crashed"), 8);
        assert_eq!(fx.seen.count("plugin_gave_up"), 2);
        host.shutdown();
    });
}

#[test]
fn a_plugin_sigkilled_mid_call_fails_the_call_clearly_and_restarts() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        fx.install("conformance", &sdk_binary("hearth-plugin-conformance"), "");
        let host = fx.host(RestartPolicy::default(), Timeouts::default());
        host.start_all().expect("order");
        let first = host.wait_for("conformance", LONG, running).expect("slot");
        let pid = first.pid.expect("pid");
        assert!(fx.tables.tools.contains("wait_cancel"));
        assert!(fx.tables.outputs.caps_of("conformance-out").is_some());

        let tools = Arc::clone(&fx.tables.tools);
        let call = std::thread::spawn(move || {
            let started = Instant::now();
            (
                tools.call_tool("wait_cancel", &json!({})),
                started.elapsed(),
            )
        });
        std::thread::sleep(Duration::from_millis(300));
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("kill");
        let (result, took) = call.join().expect("call thread");
        let e = result.expect_err("the call must fail");
        assert!(
            e.contains("exited during the call to tool wait_cancel") && e.contains("SIGKILL"),
            "{e}"
        );
        assert!(took < Duration::from_secs(5), "the call hung for {took:?}");

        // Detached at once, before the 1 s restart.
        let waiting = host
            .wait_for("conformance", LONG, |s| {
                matches!(s.state, PluginState::Restarting { .. })
            })
            .expect("slot");
        assert_eq!(waiting.state, PluginState::Restarting { in_ms: 1000 });
        assert!(!fx.tables.tools.contains("wait_cancel"));
        assert!(fx.tables.outputs.caps_of("conformance-out").is_none());
        let e = fx
            .tables
            .tools
            .call_tool("echo", &json!({}))
            .expect_err("gone");
        assert!(e.contains("not found"), "{e}");

        let again = host.wait_for("conformance", LONG, running).expect("slot");
        assert_eq!(again.state, PluginState::Running);
        assert_ne!(again.pid, Some(pid));
        assert_eq!((again.crashes, again.restarts), (1, 1));
        let got = fx
            .tables
            .tools
            .call_tool("echo", &json!({"x": 1}))
            .expect("answers again");
        assert_eq!(got["args"], json!({"x": 1}));
        assert_eq!(fx.seen.count("plugin_crashed"), 1);
        host.shutdown();
        assert!(!alive(again.pid.expect("pid")), "shutdown stops the child");
    });
}

#[test]
fn a_plugin_that_never_answers_the_handshake_fails_clearly_and_is_stopped() {
    watchdog(Duration::from_secs(30), || {
        let fx = Fixture::new();
        fx.install_script("silent", "exec sleep 31", "");
        let timeouts = Timeouts {
            handshake: Duration::from_millis(300),
            ..Timeouts::default()
        };
        let host = fx.host(RestartPolicy::scaled(100), timeouts);
        host.start_all().expect("order");
        let s = host
            .wait_for("silent", LONG, |s| s.state == PluginState::Failed)
            .expect("slot");
        assert_eq!(s.state, PluginState::Failed);
        let why = s.last_error.unwrap_or_default();
        assert!(
            why.contains("handshake with silent failed") && why.contains("no handshake answer"),
            "{why}"
        );
        assert!(
            children_running(&["sleep", "31"]).is_empty(),
            "the child was not stopped"
        );
        assert_eq!(fx.seen.count("plugin_failed"), 1);
        assert_eq!(
            fx.seen.count("plugin_crashed"),
            0,
            "a failed start is not restarted"
        );
        host.shutdown();
    });
}

#[test]
fn a_reverse_call_the_manifest_does_not_grant_is_denied_by_name() {
    watchdog(Duration::from_secs(30), || {
        let fx = Fixture::new();
        let host = fx.start_one(
            "conformance",
            &sdk_binary("hearth-plugin-conformance"),
            r#","capabilities":["memory"]"#,
        );
        let e = fx
            .tables
            .tools
            .call_tool("inject", &json!({}))
            .expect_err("denied");
        assert!(
            e.contains("denied") && e.contains("io.injectInterrupt needs capability \"io\""),
            "{e}"
        );
        assert!(
            fx.seen.injected.lock().unwrap().is_empty(),
            "nothing was injected"
        );
        // The connection goes on.
        fx.tables
            .tools
            .call_tool("echo", &json!({}))
            .expect("still serving");
        host.shutdown();
    });
}

#[test]
fn a_granted_interrupt_reaches_the_kernel_clamped_to_l3() {
    watchdog(Duration::from_secs(30), || {
        let fx = Fixture::new();
        let host = fx.start_one(
            "conformance",
            &sdk_binary("hearth-plugin-conformance"),
            r#","capabilities":["io"]"#,
        );
        fx.tables
            .tools
            .call_tool("inject", &json!({"priority": "L4"}))
            .expect("injected");
        let got = fx.seen.injected.lock().unwrap().clone();
        assert_eq!(
            got,
            vec![(
                "conformance".to_owned(),
                "wake up".to_owned(),
                hearth_plugin_host::Injection {
                    interrupt: true,
                    priority: Some(hearth_rpc::Priority::L3),
                    no_memory: false,
                    media: Vec::new(),
                }
            )]
        );
        host.shutdown();
    });
}

#[test]
fn broken_manifests_are_listed_with_file_and_fix_and_the_rest_start() {
    watchdog(Duration::from_secs(30), || {
        let fx = Fixture::new();
        fx.install("echo", &sdk_binary("examples/echo"), "");
        fx.install("ghost", std::path::Path::new("/nonexistent/bin"), "");
        fx.install_script("needy", "exit 0", r#","needs":["plugin:absent"]"#);
        let host = fx.host(RestartPolicy::default(), Timeouts::default());
        let listed = host.list();
        let broken = listed["not_loaded"].as_array().cloned().unwrap_or_default();
        assert_eq!(broken.len(), 1, "{listed}");
        let msg = broken[0].as_str().unwrap_or_default();
        assert!(
            msg.contains("ghost/plugin.json")
                && msg.contains("cannot be found")
                && msg.contains("fix:"),
            "{msg}"
        );
        // A need nobody provides is an error at load, and nothing starts.
        let e = host.start_all().expect_err("missing need").to_string();
        assert!(e.contains("needy needs plugin absent"), "{e}");
        host.disable("needy").expect("disable");
        assert_eq!(
            host.status_of("needy").map(|s| s.state),
            Some(PluginState::Disabled)
        );
        host.start_all().expect("order without needy");
        host.wait_for("echo", LONG, running).expect("echo runs");
        host.shutdown();
    });
}

#[test]
fn start_stop_churn_with_crashes_leaves_no_child_and_never_hangs() {
    watchdog(Duration::from_secs(90), || {
        let fx = Fixture::new();
        fx.install("echo", &sdk_binary("examples/echo"), "");
        fx.install_script("crashy", &scripted_start("crashy", "exit 9"), "");
        fx.install_script("silent", "exec sleep 32", "");
        let host = fx.host(RestartPolicy::scaled(1000), Timeouts::default());
        host.start_all().expect("order");
        host.wait_for("echo", LONG, running).expect("slot");
        let hosts: Vec<_> = (0..3).map(|_| Arc::clone(&host)).collect();
        let churn = Instant::now();
        std::thread::scope(|s| {
            for (i, h) in hosts.iter().enumerate() {
                let name = ["echo", "crashy", "silent"][i];
                s.spawn(move || {
                    for round in 0..8 {
                        if round % 2 == 0 {
                            h.reload(name).expect("reload");
                        } else {
                            h.disable(name).expect("disable");
                            h.enable(name).expect("enable");
                        }
                    }
                });
            }
        });
        // A stop of a child that is still starting signals it at once, never waits out its
        // handshake (10 s).
        assert!(
            churn.elapsed() < Duration::from_secs(8),
            "churn took {:?}",
            churn.elapsed()
        );
        host.wait_for("echo", LONG, running).expect("slot");
        let got = fx.tables.tools.call_tool("echo", &json!({"text": "still"}));
        assert_eq!(got.expect("echo answers")["text"], "still");
        let started = Instant::now();
        host.shutdown();
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "shutdown took {:?}",
            started.elapsed()
        );
        for name in ["echo", "crashy", "silent"] {
            let s = host.status_of(name).expect("status");
            assert!(s.pid.is_none(), "{s:?}");
        }
        assert!(
            children_running(&["sleep", "32"]).is_empty(),
            "a child survived the shutdown"
        );
    });
}

#[test]
fn a_reload_during_a_stream_of_tool_calls_loses_no_reply() {
    watchdog(Duration::from_secs(90), || {
        let fx = Fixture::new();
        let host = fx.start_one("conformance", &sdk_binary("hearth-plugin-conformance"), "");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let callers: Vec<_> = (0..3)
            .map(|c| {
                let (tools, stop) = (Arc::clone(&fx.tables.tools), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut answered = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        let n = format!("{c}-{answered}");
                        let got = tools.call_tool("echo", &json!({"n": n}));
                        let got = got.unwrap_or_else(|e| panic!("call {n} lost: {e}"));
                        assert_eq!(got["args"]["n"], n.as_str(), "a reply for another call");
                        answered += 1;
                    }
                    answered
                })
            })
            .collect();
        let mut pids = vec![host.status_of("conformance").and_then(|s| s.pid)];
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(150));
            host.reload("conformance").expect("reload");
            let s = host.wait_for("conformance", LONG, running).expect("slot");
            assert_eq!(s.state, PluginState::Running, "{s:?}");
            pids.push(s.pid);
        }
        std::thread::sleep(Duration::from_millis(150));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let answered: u64 = callers.into_iter().map(|c| c.join().expect("caller")).sum();
        pids.dedup();
        assert_eq!(pids.len(), 4, "every reload swapped the process: {pids:?}");
        assert!(answered > 100, "the calls kept flowing ({answered})");
        assert!(fx.tables.tools.get("echo").is_some());
        host.shutdown();
    });
}
