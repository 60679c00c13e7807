//! The SDK and the control plane with real child processes over real pipes.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use hearth_rpc::{ErrorKind, Grants, RpcError, methods};
use serde_json::json;
use support::{CALL, HostConfig, TestHost, example, remote, watchdog};

const LIMIT: Duration = Duration::from_secs(60);

fn conformance(config: HostConfig) -> TestHost {
    let program = std::path::PathBuf::from(env!("CARGO_BIN_EXE_hearth-plugin-conformance"));
    let host = TestHost::spawn(&program, config);
    host.boot("conformance");
    host
}

#[test]
fn echo_example_handshakes_starts_answers_and_stops() {
    watchdog(LIMIT, || {
        let mut host = TestHost::spawn(&example("echo"), HostConfig::default());
        let hello = host.boot("echo");
        assert_eq!(hello.protocol, hearth_rpc::PROTOCOL_VERSION);
        assert_eq!(hello.pid, host.child.id());
        assert!(
            hello.sdk_version.starts_with("hearth-plugin "),
            "{}",
            hello.sdk_version
        );
        let tools = host.registered(methods::TOOL_REGISTER);
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0]["name"], "echo");
        assert_eq!(tools[0]["def"]["parameters"]["required"], json!(["text"]));

        let got = host.tool("echo", json!({"text": "hi"})).expect("echo");
        assert_eq!(got, json!({"text": "hi", "task": "task-1"}));
        let bad = remote(host.tool("echo", json!({"text": 5})));
        assert_eq!(bad.kind, ErrorKind::InvalidArguments);
        let missing = remote(host.tool("nope", json!({})));
        assert_eq!(missing.kind, ErrorKind::InvalidArguments);
        assert!(missing.message.contains("\"nope\""), "{}", missing.message);

        host.peer
            .call(methods::PLUGIN_STOP, json!({}), CALL)
            .expect("stop");
        let status = host
            .wait_exit(Duration::from_secs(5))
            .expect("exits after stop");
        assert!(status.success(), "{status}");
        assert!(host.stderr().contains("echo: stopped"), "{}", host.stderr());
    });
}

#[test]
fn lifecycle_order_is_enforced() {
    watchdog(LIMIT, || {
        let host = TestHost::spawn(&example("echo"), HostConfig::default());
        let early = remote(host.peer.call(methods::PLUGIN_START, json!({}), CALL));
        assert_eq!(early.kind, ErrorKind::InvalidRequest);
        host.handshake("echo", &[1]).expect("handshake");
        let again = host.handshake("echo", &[1]).expect_err("second handshake");
        assert!(again.to_string().contains("not allowed now"), "{again}");
        let tool = remote(host.tool("echo", json!({"text": "x"})));
        assert_eq!(tool.kind, ErrorKind::Unavailable);
    });
}

#[test]
fn version_mismatch_is_a_clear_error_and_the_plugin_exits() {
    watchdog(LIMIT, || {
        let mut host = TestHost::spawn(&example("echo"), HostConfig::default());
        let err = host
            .handshake("echo", &[99])
            .expect_err("no common version");
        let RpcError::Handshake { plugin, reason } = &err else {
            panic!("expected a handshake error, got {err:?}");
        };
        assert_eq!(plugin, "echo");
        assert!(
            reason.contains("[99]") && reason.contains("speaks [1]"),
            "{reason}"
        );
        let status = host
            .wait_exit(Duration::from_secs(5))
            .expect("plugin exits");
        assert!(!status.success());
        assert!(host.stderr().contains("[99]"), "{}", host.stderr());
    });
}

#[test]
fn handshake_with_a_misnamed_plugin_fails() {
    watchdog(LIMIT, || {
        let host = TestHost::spawn(&example("echo"), HostConfig::default());
        let err = host.handshake("weather", &[1]).expect_err("name differs");
        assert!(err.to_string().contains("\"echo\""), "{err}");
    });
}

#[test]
fn a_silent_child_times_out_the_handshake() {
    watchdog(LIMIT, || {
        let host = TestHost::spawn_command(Command::new("sleep").arg("30"), HostConfig::default());
        let offer = hearth_rpc::HandshakeParams {
            protocol_versions: vec![1],
            kernel_version: "test".into(),
            plugin_name: "sleepy".into(),
            data_plane: None,
        };
        let started = Instant::now();
        let err = hearth_rpc::handshake(&host.peer, &offer, Duration::from_millis(300))
            .expect_err("no answer");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            err.to_string().contains("no handshake answer within"),
            "{err}"
        );
    });
}

#[test]
fn bad_frames_from_the_kernel_are_answered_and_skipped() {
    watchdog(LIMIT, || {
        let mut preamble = b"not json\n{\"id\":1,\n\xff\xfe\n[1,2]\n".to_vec();
        preamble.extend(vec![b'x'; (1 << 20) + 10]);
        preamble.push(b'\n');
        let host = conformance(HostConfig {
            preamble,
            ..HostConfig::default()
        });
        // Mid-session too: garbage between two good calls.
        host.tool("echo", json!({"n": 1})).expect("before");
        host.stdin
            .raw(b"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"a\"}\n");
        let stats = host.tool("stats", json!({})).expect("stats");
        assert_eq!(stats["bad_frames"], 5, "{stats}");
        assert_eq!(stats["oversize_frames"], 1, "{stats}");
        // Every bad frame was answered with an id-less error, and nothing else broke.
        assert_eq!(host.peer.stats().peer_errors, 6);
        assert_eq!(
            host.tool("echo", json!({"n": 2})).expect("after")["args"]["n"],
            2
        );
    });
}

#[test]
fn bad_frames_from_the_plugin_are_skipped_by_the_host() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig {
            args: vec!["--garbage-first".into()],
            ..HostConfig::default()
        });
        let stats = host.peer.stats();
        assert_eq!(
            (stats.bad_frames, stats.oversize_frames),
            (4, 1),
            "{stats:?}"
        );
        let plugin = host.tool("stats", json!({})).expect("stats");
        assert_eq!(plugin["peer_errors"], 5, "{plugin}");
        assert!(host.tool("echo", json!({})).is_ok());
    });
}

#[test]
fn unknown_response_ids_are_dropped_and_counted() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig::default());
        host.stdin
            .raw(b"{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":1}\n{\"id\":5,\"error\":{\"code\":-32000,\"message\":\"late\"}}\n");
        let stats = host.tool("stats", json!({})).expect("stats");
        assert_eq!(stats["unknown_responses"], 2, "{stats}");
        assert_eq!(stats["bad_frames"], 0, "{stats}");
    });
}

#[test]
fn a_panicking_handler_is_isolated() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig::default());
        for _ in 0..3 {
            let e = remote(host.tool("panic", json!({})));
            assert_eq!(e.kind, ErrorKind::Internal);
            assert!(
                e.message.contains("panicked while handling tool.invoke")
                    && e.message.contains("asked to panic"),
                "{}",
                e.message
            );
        }
        assert_eq!(host.tool("stats", json!({})).expect("alive")["panics"], 3);
    });
}

#[test]
fn reverse_calls_carry_the_call_context() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig::default());
        let got = host.tool("recall", json!({"text": "tea"})).expect("recall");
        assert_eq!(got["docs"][0]["text"], "about \"tea\"");
        assert_eq!(got["greeting"], "hello \"greeting\"");
        let queries = host.registered(methods::DOC_QUERY);
        assert_eq!(queries[0]["ctx"]["task_id"], "task-1");
        assert_eq!(queries[0]["top_k"], 3);
    });
}

#[test]
fn a_reverse_call_flood_is_bounded_and_every_call_answered() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig {
            max_in_flight: 4,
            recall_delay: Duration::from_millis(50),
            ..HostConfig::default()
        });
        let n = 64;
        let got = host.tool("flood", json!({"n": n})).expect("flood");
        let (ok, busy) = (got["ok"].as_u64().unwrap(), got["busy"].as_u64().unwrap());
        assert_eq!(got["other"], 0, "{got}");
        assert_eq!(ok + busy, n);
        assert!(ok >= 4 && busy > 0, "{got}");
        assert_eq!(host.peer.stats().busy_rejections, busy);
        let max = host
            .seen
            .max_running
            .load(std::sync::atomic::Ordering::SeqCst);
        assert!(max <= 4, "{max} reverse calls ran at once");
        assert!(host.tool("echo", json!({})).is_ok());
    });
}

#[test]
fn a_method_the_manifest_does_not_grant_is_denied_by_name() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig {
            grants: Grants::from_manifest(&["memory", "doc_memory"]).expect("known"),
            ..HostConfig::default()
        });
        let e = remote(host.tool("inject", json!({})));
        assert_eq!(e.kind, ErrorKind::Denied);
        assert!(
            e.message.contains("io.injectInterrupt") && e.message.contains("\"io\""),
            "{}",
            e.message
        );
        assert_eq!(e.data.as_ref().expect("data")["capability"], "io");
        let publish = remote(host.tool(
            "call",
            json!({"method": "events.publish", "params": {"type": "system"}}),
        ));
        assert_eq!(publish.kind, ErrorKind::Denied);
        assert!(
            publish.message.contains("never offered"),
            "{}",
            publish.message
        );
        let unknown = remote(host.tool("call", json!({"method": "supervisor.kill"})));
        assert_eq!(unknown.kind, ErrorKind::MethodNotFound);
        // Granted methods still work, and nothing denied reached the host's handlers.
        assert!(host.tool("recall", json!({"text": "x"})).is_ok());
        assert!(host.registered(methods::IO_INJECT_INTERRUPT).is_empty());
    });
}

#[test]
fn an_external_l4_interrupt_is_clamped_to_l3() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig::default());
        host.tool("inject", json!({"priority": "L4"}))
            .expect("inject");
        let calls = host.registered(methods::IO_INJECT_INTERRUPT);
        assert_eq!(calls[0]["options"]["priority"], "L3");
    });
}

#[test]
fn cancel_reaches_a_running_tool() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig::default());
        let params = json!({"name": "wait_cancel", "args": {}, "ctx": {"cancellable": true}});
        let call = host
            .peer
            .start_call(methods::TOOL_INVOKE, params)
            .expect("sent");
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        assert!(matches!(call.cancel(), RpcError::Cancelled { .. }));
        loop {
            let stats = host.tool("stats", json!({})).expect("stats");
            if stats["cancelled"] == 1 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "tool never saw the cancel"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // Its late answer is dropped by the host, not misdelivered.
        let until = Instant::now() + Duration::from_secs(5);
        while host.peer.stats().unknown_responses == 0 {
            assert!(Instant::now() < until, "late answer never arrived");
            std::thread::sleep(Duration::from_millis(5));
        }
    });
}

#[test]
fn stage_and_output_handlers_are_invoked() {
    watchdog(LIMIT, || {
        let host = conformance(HostConfig::default());
        let stages = host.registered(methods::STAGE_REGISTER);
        assert_eq!(
            stages[0],
            json!({"stage": "pre_action", "scope": "global", "priority": 5})
        );
        let params = json!({
            "stage": "pre_action",
            "context": {"system_prompt": "be kind"},
            "ctx": {"task_id": "t9"},
        });
        let got = host
            .peer
            .call(methods::STAGE_INVOKE, params, CALL)
            .expect("stage");
        assert_eq!(got["context"]["system_prompt"], "be kind [conformance:t9]");
        // The area form names a stage of a segment this process never got.
        let params = json!({"stage": "before_output", "seq": 3, "ctx": {}});
        let err = remote(host.peer.call(methods::STAGE_INVOKE, params, CALL));
        assert_eq!(err.kind, ErrorKind::InvalidRequest, "{err:?}");
        assert!(err.message.contains("no data plane"), "{}", err.message);
        let outputs = host.registered(methods::OUTPUT_REGISTER);
        assert_eq!(outputs[0]["caps"], json!(["text"]));
        let params = json!({"channel": "conformance-out", "args": {"text": "héllo"}});
        let got = host
            .peer
            .call(methods::OUTPUT_INVOKE, params, CALL)
            .expect("output");
        assert_eq!(got["result"], json!({"delivered": true, "chars": 5}));
    });
}

#[test]
fn stop_handlers_run_newest_first_then_the_plugin_stops() {
    watchdog(LIMIT, || {
        let mut host = conformance(HostConfig::default());
        host.peer
            .call(methods::PLUGIN_STOP, json!({}), CALL)
            .expect("stop");
        let status = host.wait_exit(Duration::from_secs(5)).expect("exits");
        assert!(status.success());
        assert!(host.peer.wait_closed(Duration::from_secs(5)));
        let logs = host.seen.logs.lock().unwrap().clone();
        assert_eq!(
            logs,
            [
                "stop handler 3",
                "stop handler 2",
                "stop handler 1",
                "plugin stop"
            ]
        );
    });
}

#[test]
fn a_plugin_that_dies_mid_call_fails_the_call_as_closed() {
    watchdog(LIMIT, || {
        let mut host = conformance(HostConfig::default());
        let err = host.tool("crash", json!({})).expect_err("no answer");
        assert!(matches!(err, RpcError::Closed { .. }), "{err:?}");
        assert_eq!(
            host.wait_exit(Duration::from_secs(5))
                .and_then(|s| s.code()),
            Some(3)
        );
        assert!(host.peer.is_closed());
        assert!(matches!(
            host.tool("echo", json!({})),
            Err(RpcError::Closed { .. })
        ));
    });
}

#[test]
fn closing_the_kernel_end_stops_the_plugin() {
    watchdog(LIMIT, || {
        let mut host = conformance(HostConfig::default());
        host.stdin.close();
        let status = host.wait_exit(Duration::from_secs(5));
        assert!(status.is_some_and(|s| s.success()), "{status:?}");
        let logs = host.seen.logs.lock().unwrap().clone();
        assert_eq!(logs.len(), 4, "stop handlers and stop ran: {logs:?}");
    });
}

fn python_plugin(config: HostConfig) -> TestHost {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/echo_plugin.py");
    TestHost::spawn_command(Command::new("python3").arg(script), config)
}

#[test]
fn a_python_plugin_written_from_the_protocol_document_works() {
    watchdog(LIMIT, || {
        let mut preamble = b"this line is not JSON\n".to_vec();
        preamble.extend(vec![b'y'; (1 << 20) + 1]);
        preamble.push(b'\n');
        let mut host = python_plugin(HostConfig {
            grants: Grants::from_manifest(&["memory"]).expect("known"),
            preamble,
            ..HostConfig::default()
        });
        let hello = host.boot("py-echo");
        assert_eq!(hello.pid, host.child.id());
        assert_eq!(hello.sdk_version, "python-stdlib 1");
        let stats = host.peer.stats();
        assert_eq!(stats.peer_errors, 2, "both bad frames answered: {stats:?}");
        assert_eq!(
            host.registered(methods::TOOL_REGISTER)[0]["name"],
            "py_echo"
        );

        let got = host
            .tool("py_echo", json!({"text": "hi"}))
            .expect("tool call");
        assert_eq!(
            got,
            json!({"text": "hi", "greeting": "hello \"greeting\"", "task": "task-1"})
        );
        assert_eq!(
            host.registered(methods::SETTINGS_GET)[0]["ctx"]["task_id"],
            "task-1"
        );
        let bad = remote(host.tool("py_echo", json!({"text": 1})));
        assert_eq!(bad.kind, ErrorKind::InvalidArguments);

        host.peer
            .call(methods::PLUGIN_STOP, json!({}), CALL)
            .expect("stop");
        let status = host.wait_exit(Duration::from_secs(5)).expect("exits");
        assert!(status.success(), "{status}");
        assert_eq!(
            host.seen.logs.lock().unwrap().as_slice(),
            ["py-echo: stopping"]
        );
    });
}

#[test]
fn a_python_plugin_refuses_an_unknown_protocol_version() {
    watchdog(LIMIT, || {
        let mut host = python_plugin(HostConfig::default());
        let err = host.handshake("py-echo", &[7]).expect_err("mismatch");
        assert!(err.to_string().contains("speaks [1]"), "{err}");
        let status = host.wait_exit(Duration::from_secs(5)).expect("exits");
        assert!(!status.success());
    });
}
