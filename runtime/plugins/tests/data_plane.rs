//! The data plane against real plugin processes: the one memfd segment at fd 3, a doorbell per
//! child at fd 4, the event ring read from a plugin, large tool payloads through the exchange
//! arena, forged arena references, and stage-context fields written by two plugins at once.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hearth_ipc::{EventKind, Publisher, RingConfig, SegmentConfig, StageField, encode_envelope};
use hearth_plugin_host::{DataPlane, PluginHost, PluginState, PluginStatus};
use serde_json::{Value, json};
use support::{CallTool, Fixture, LONG, scripted_start, sdk_binary, watchdog};

fn running(s: &PluginStatus) -> bool {
    s.state == PluginState::Running
}

fn plane(config: SegmentConfig) -> (Arc<DataPlane>, Publisher) {
    let plane = DataPlane::create(config).expect("segment");
    let publisher = plane.take_publisher().expect("the publisher, once");
    assert!(plane.take_publisher().is_none());
    (plane, publisher)
}

fn conformance() -> std::path::PathBuf {
    sdk_binary("hearth-plugin-conformance")
}

/// The conformance plugin started on `plane`, once it runs.
fn conformance_on(fx: &Fixture, plane: &Arc<DataPlane>) -> (Arc<PluginHost>, PluginStatus) {
    fx.install("conformance", &conformance(), "");
    let host = fx.host_on(plane);
    host.start_all().expect("order");
    let status = host.wait_for("conformance", LONG, running).expect("slot");
    assert_eq!(status.state, PluginState::Running, "{status:?}");
    (host, status)
}

fn publish(publisher: &mut Publisher, kind: EventKind, tag: u64, payload: Value) {
    let bytes = encode_envelope(kind, "agent", &payload, 0);
    publisher
        .publish_tagged(kind, tag, &bytes)
        .expect("fits the ring");
}

#[test]
fn a_plugin_follows_a_streamed_answer_from_the_ring_sleeping_on_its_doorbell() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (plane, mut publisher) = plane(SegmentConfig::default());
        let (host, _) = conformance_on(&fx, &plane);
        assert_eq!(plane.doorbells(), 1, "one doorbell per live child");

        let seen = fx
            .tables
            .tools
            .call_tool("plane", &json!({}))
            .expect("plane");
        assert_eq!(seen["kernel_pid"], std::process::id());
        assert_eq!(seen["offer"]["segment_fd"], 3);
        assert_eq!(seen["offer"]["doorbell_fd"], 4);

        let opened = fx.tables.tools.call_tool("stream_open", &json!({"tag": 7}));
        assert_eq!(opened.expect("open")["doorbell"], true);
        // The plugin is asleep on fd 4 when the answer starts streaming.
        let tools = Arc::clone(&fx.tables.tools);
        let follower = std::thread::spawn(move || {
            tools.call_tool("stream_follow", &json!({"timeout_ms": 20_000}))
        });
        std::thread::sleep(Duration::from_millis(200));
        publish(&mut publisher, EventKind::Stage, 7, json!({"phase": "llm"}));
        for (tag, content) in [
            (7, "Hel"),
            (8, "NOT MINE"),
            (7, "lo, "),
            (0, "untagged"),
            (7, "world"),
        ] {
            publish(
                &mut publisher,
                EventKind::ContentDelta,
                tag,
                json!({"content": content}),
            );
        }
        publish(
            &mut publisher,
            EventKind::AgentOutput,
            7,
            json!({"text": "Hello, world"}),
        );
        let got = follower.join().expect("follower").expect("followed");
        assert_eq!(got["text"], "Hello, world", "{got}");
        assert_eq!(
            got["deltas"], 3,
            "other tags and kinds are filtered out: {got}"
        );
        assert_eq!(got["lagged"], 0);
        assert!(publisher.wake_syscalls() >= 1, "the doorbell was rung");

        host.shutdown();
        assert_eq!(
            plane.doorbells(),
            0,
            "the exited child's doorbell is dropped"
        );
    });
}

#[test]
fn a_reader_that_falls_behind_is_told_how_much_it_lost() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let config = SegmentConfig {
            ring: RingConfig::new(64, 16 * 1024),
            ..SegmentConfig::default()
        };
        let (plane, mut publisher) = plane(config);
        let (host, _) = conformance_on(&fx, &plane);
        fx.tables
            .tools
            .call_tool("stream_open", &json!({}))
            .expect("open");
        // 200 events into a 64-slot ring while the plugin is not reading.
        for i in 0..200 {
            publish(
                &mut publisher,
                EventKind::ContentDelta,
                0,
                json!({"content": format!("{} ", i)}),
            );
        }
        publish(&mut publisher, EventKind::AgentOutput, 0, json!({}));
        let got = fx
            .tables
            .tools
            .call_tool("stream_follow", &json!({"timeout_ms": 5_000}))
            .expect("followed");
        let lagged = got["lagged"].as_u64().expect("lagged");
        let deltas = got["deltas"].as_u64().expect("deltas");
        assert!(lagged >= 137, "at most 63 of 201 can still be there: {got}");
        assert_eq!(
            lagged + deltas,
            200,
            "every event is read or counted lost: {got}"
        );
        assert!(
            got["text"].as_str().unwrap_or("").ends_with("199 "),
            "{got}"
        );
        host.shutdown();
    });
}

#[test]
fn a_one_mib_tool_result_goes_through_the_arena_and_large_arguments_too() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (plane, _publisher) = plane(SegmentConfig::default());
        let all_free = plane.free_blocks();
        let (host, _) = conformance_on(&fx, &plane);
        let tools = &fx.tables.tools;

        let big = tools
            .call_tool("big", &json!({"bytes": 1 << 20}))
            .expect("a 1 MiB result");
        let text = big["text"].as_str().expect("text");
        assert_eq!(text.len(), 1 << 20, "nothing truncated");
        assert!(text.bytes().all(|b| b == b'x'));

        // Large arguments go in a call frame; a result that fits its room is answered there.
        let args = "a".repeat(300 * 1024);
        let got = tools
            .call_tool("measure", &json!({"text": args, "reply": 300 * 1024}))
            .expect("frame");
        assert_eq!(got["len"], 300 * 1024);
        assert_eq!(got["reply"].as_str().map(str::len), Some(300 * 1024));
        // One too large for the frame gets a block of its own.
        let got = tools
            .call_tool("measure", &json!({"text": args, "reply": 3 << 20}))
            .expect("expansion");
        assert_eq!(got["reply"].as_str().map(str::len), Some(3 << 20));
        // Small calls stay on the pipe.
        let got = tools
            .call_tool("measure", &json!({"text": "hi", "reply": 2}))
            .expect("inline");
        assert_eq!(got, json!({"len": 2, "reply": "yy"}));
        assert_eq!(
            plane.free_blocks(),
            all_free,
            "every frame and block was freed"
        );

        // More than the whole arena: an explicit error, never a truncated result.
        let err = tools
            .call_tool("big", &json!({"bytes": 9 << 20}))
            .expect_err("does not fit");
        assert!(err.contains("arena"), "{err}");
        assert!(
            tools.call_tool("echo", &json!({})).is_ok(),
            "the plugin goes on"
        );
        host.shutdown();
        assert_eq!(plane.free_blocks(), all_free);
    });
}

#[test]
fn without_the_data_plane_a_one_mib_result_is_refused_not_truncated() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let host = fx.start_one("conformance", &conformance(), "");
        let err = fx
            .tables
            .tools
            .call_tool("big", &json!({"bytes": 1 << 20}))
            .expect_err("over the frame limit");
        assert!(err.contains("frame") || err.contains("large"), "{err}");
        assert!(fx.tables.tools.call_tool("echo", &json!({})).is_ok());
        host.shutdown();
    });
}

/// A plugin written without the SDK that answers every `forge` call with the reference in its
/// arguments, as if it had written a result there.
fn forger() -> String {
    let register = r#"{"jsonrpc":"2.0","id":1,"method":"tool.register","params":{"name":"forge","def":{"description":"answers with a forged reference"}}}"#;
    let body = format!(
        "read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"protocol\":1,\"sdk_version\":\"sh\",\"plugin_name\":\"forger\",\"pid\":'$$'}}}}'\n\
         read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{}}}}'\n\
         read l; echo '{register}'; read l; echo '{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{}}}}'\n\
         while read l; do\n\
           id=$(echo \"$l\" | sed -n 's/.*\"id\":\\([0-9][0-9]*\\),\"method\".*/\\1/p')\n\
           r=$(echo \"$l\" | sed -n 's/.*\"args\":{{\"ref\":\\({{[^}}]*}}\\)}}.*/\\1/p')\n\
           echo '{{\"jsonrpc\":\"2.0\",\"id\":'$id',\"result\":{{\"result\":null,\"result_ref\":'$r'}}}}'\n\
         done\n"
    );
    let _ = scripted_start;
    body
}

#[test]
fn forged_arena_references_are_refused_and_nothing_else_breaks() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (plane, _publisher) = plane(SegmentConfig::default());
        let all_free = plane.free_blocks();
        fx.install_script("forger", &forger(), "");
        let host = fx.host_on(&plane);
        host.start_all().expect("order");
        let s = host.wait_for("forger", LONG, running).expect("slot");
        assert_eq!(s.state, PluginState::Running, "{s:?}");
        let segment_len = plane.len() as u64;
        // A block issued to the kernel itself: its place is real, but it is not the plugin's.
        let mine = plane.alloc_for_kernel(64).expect("kernel block");
        let block = u64::from(hearth_ipc::ArenaConfig::default().block_len);
        let at = u64::from(mine.offset);
        let generation = mine.generation;
        for (forged, why) in [
            (
                json!({"offset": 0, "len": 64, "generation": 1}),
                "before the arena's blocks",
            ),
            (
                json!({"offset": at + 512 * block, "len": 64, "generation": 1}),
                "past the arena",
            ),
            (
                json!({"offset": segment_len + 4096, "len": 64, "generation": 1}),
                "out of bounds",
            ),
            (
                json!({"offset": 4_000_000_000u64, "len": 64, "generation": 1}),
                "out of bounds",
            ),
            (
                json!({"offset": at + 8, "len": 64, "generation": generation}),
                "not at a block start",
            ),
            (
                json!({"offset": at, "len": 64, "generation": generation + 1}),
                "stale",
            ),
            (
                json!({"offset": at + 10 * block, "len": 64, "generation": 1}),
                "stale",
            ),
            (
                json!({"offset": at, "len": 64, "generation": generation}),
                "held by owner 0",
            ),
            (
                json!({"offset": at, "len": 1 << 30, "generation": generation}),
                "held by owner 0",
            ),
        ] {
            let err = fx
                .tables
                .tools
                .call_tool("forge", &json!({"ref": forged}))
                .expect_err("refused");
            assert!(err.contains("refused its arena reference"), "{err}");
            assert!(err.contains(why), "{why}: {err}");
        }
        assert_eq!(
            plane.free_blocks(),
            all_free - 1,
            "nothing freed by a forged ref"
        );
        assert_eq!(
            host.status_of("forger").map(|s| s.state),
            Some(PluginState::Running),
            "a refused reference fails the call, not the plugin"
        );
        host.shutdown();
    });
}

#[test]
fn two_plugins_writing_different_stage_context_fields_in_one_stage_lose_neither() {
    watchdog(Duration::from_secs(90), || {
        let fx = Fixture::new();
        let (plane, _publisher) = plane(SegmentConfig::default());
        fx.install("conformance", &conformance(), "");
        let dir = fx.plugins_dir().join("conformance-b");
        std::fs::create_dir_all(&dir).expect("dir");
        let link = dir.join("conformance-b");
        std::os::unix::fs::symlink(conformance(), &link).expect("symlink");
        fx.install("conformance-b", &link, "");
        let host = fx.host_on(&plane);
        host.start_all().expect("order");
        for name in ["conformance", "conformance-b"] {
            let s = host.wait_for(name, LONG, running).expect("slot");
            assert_eq!(s.state, PluginState::Running, "{s:?}");
        }
        let tools = &fx.tables.tools;
        for round in 0..100 {
            plane.with_context(|c| c.begin_stage());
            let (a, b) = std::thread::scope(|s| {
                let a = s.spawn(|| {
                    tools.call_tool(
                        "set_field",
                        &json!({"field": "FinalText", "text": format!("final {round}")}),
                    )
                });
                let b = s.spawn(|| {
                    tools.call_tool(
                        "b_set_field",
                        &json!({"field": "Memory", "text": format!("memory {round}")}),
                    )
                });
                (a.join().expect("a"), b.join().expect("b"))
            });
            a.expect("plugin a wrote");
            b.expect("plugin b wrote");
            plane.with_context(|c| {
                let dirty = c.take_dirty();
                assert!(
                    dirty.contains(StageField::FinalText) && dirty.contains(StageField::Memory)
                );
                let mut buf = Vec::new();
                assert!(c.read(StageField::FinalText, &mut buf).expect("read"));
                assert_eq!(buf, format!("final {round}").as_bytes());
                assert!(c.read(StageField::Memory, &mut buf).expect("read"));
                assert_eq!(buf, format!("memory {round}").as_bytes());
            });
        }
        host.shutdown();
    });
}

#[test]
fn blocks_a_crashed_plugin_held_are_reclaimed_and_its_doorbell_dropped() {
    watchdog(Duration::from_secs(60), || {
        let fx = Fixture::new();
        let (plane, _publisher) = plane(SegmentConfig::default());
        let all_free = plane.free_blocks();
        let (host, first) = conformance_on(&fx, &plane);
        let tools = &fx.tables.tools;
        for _ in 0..3 {
            let block = tools
                .call_tool(
                    "call",
                    &json!({"method": "arena.alloc", "params": {"size": 100_000}}),
                )
                .expect("alloc");
            assert!(block["ref"]["offset"].as_u64().is_some(), "{block}");
        }
        assert!(plane.free_blocks() < all_free);
        // Its own block back by reference works; someone else's (the kernel's) is refused.
        let block = tools
            .call_tool(
                "call",
                &json!({"method": "arena.alloc", "params": {"size": 64}}),
            )
            .expect("alloc");
        tools
            .call_tool(
                "call",
                &json!({"method": "arena.free", "params": {"ref": block["ref"]}}),
            )
            .expect("free");
        let kernel = plane.alloc_for_kernel(64).expect("kernel block");
        let err = tools
            .call_tool(
                "call",
                &json!({"method": "arena.free", "params": {"ref": kernel}}),
            )
            .expect_err("not its block");
        assert!(err.contains("held by owner 0"), "{err}");
        plane
            .free_for_kernel(&kernel)
            .expect("kernel frees its own");

        let _ = tools.call_tool("crash", &json!({}));
        let again = host
            .wait_for("conformance", LONG, |s| running(s) && s.pid != first.pid)
            .expect("restarted");
        assert_eq!(again.state, PluginState::Running, "{again:?}");
        assert_eq!(
            plane.free_blocks(),
            all_free,
            "the dead process's blocks are free again"
        );
        assert_eq!(plane.doorbells(), 1, "the new process's doorbell only");
        host.shutdown();
    });
}
