//! Plugin stage handlers against real plugin processes, over the shared stage-context area and
//! inline: two plugins on one stage writing different fields lose neither update, a handler
//! rewrites the final text, a plugin that misreports what it wrote gets a clear error and
//! nothing applied, and `stage.lock` / `stage.unlock` keep the original's rules.

mod support;

use std::sync::Arc;
use std::time::Duration;

use hearth_ipc::{SegmentConfig, StageField};
use hearth_plugin_host::{DataPlane, PluginHost, PluginState, PluginStatus};
use hearth_stages::{CallContext, MemoryItem, Stage, StageContext, StageRun};
use serde_json::json;
use support::{CallTool, Fixture, LONG, sdk_binary, watchdog};

fn running(s: &PluginStatus) -> bool {
    s.state == PluginState::Running
}

fn plane() -> Arc<DataPlane> {
    DataPlane::create(SegmentConfig::default()).expect("segment")
}

/// Installs the conformance plugin as `name` (a `conformance-<x>` name registers its data-plane
/// tools prefixed `<x>_`).
fn install(fx: &Fixture, name: &str) {
    let entry = sdk_binary("hearth-plugin-conformance");
    if name == "conformance" {
        fx.install(name, &entry, "");
        return;
    }
    let dir = fx.plugins_dir().join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    let link = dir.join(name);
    std::os::unix::fs::symlink(entry, &link).expect("symlink");
    fx.install(name, &link, "");
}

fn start(host: &Arc<PluginHost>, names: &[&str]) {
    host.start_all().expect("order");
    for name in names {
        let s = host.wait_for(name, LONG, running).expect("slot");
        assert_eq!(s.state, PluginState::Running, "{s:?}");
    }
}

/// The conformance plugins `names` running on a host that offers them a fresh data plane.
fn over_area(names: &[&str]) -> (Fixture, Arc<DataPlane>, Arc<PluginHost>) {
    let fx = Fixture::new();
    let plane = plane();
    for name in names {
        install(&fx, name);
    }
    let host = fx.host_on(&plane);
    start(&host, names);
    (fx, plane, host)
}

fn before_output(fx: &Fixture, raw: &str, final_text: &str) -> (StageContext, StageRun) {
    let mut ctx = StageContext {
        raw_message: raw.into(),
        final_text: final_text.into(),
        ..StageContext::default()
    };
    let call = CallContext::kernel(Duration::from_secs(60));
    let run = fx.tables.stages.run(Stage::BeforeOutput, &call, &mut ctx);
    (ctx, run)
}

fn seq(plane: &DataPlane) -> u64 {
    plane.with_context(|c| c.stage_seq())
}

#[test]
fn two_plugin_processes_on_one_stage_write_different_fields_and_lose_neither() {
    watchdog(Duration::from_secs(240), || {
        let (fx, plane, host) = over_area(&["conformance", "conformance-b"]);
        // The kernel runs one stage's handlers one after another (a, priority 10, then b), so
        // concurrency comes from turns: two run this stage at once, over the one area.
        let rounds = 60;
        std::thread::scope(|s| {
            for turn in 0..2 {
                let fx = &fx;
                s.spawn(move || {
                    for round in 0..rounds {
                        let text = format!("turn {turn} round {round}");
                        let (ctx, run) = before_output(fx, "stage:both", &text);
                        assert!(run.errors.is_empty(), "{:?}", run.errors);
                        assert_eq!(run.ran, ["conformance", "conformance-b"]);
                        // a's FinalText and b's Memory both arrived; b saw a's text, read
                        // from the area.
                        assert_eq!(ctx.final_text, format!("{text} [a]"));
                        assert_eq!(
                            ctx.memory,
                            vec![MemoryItem {
                                role: "b".into(),
                                content: format!("{text} [a]"),
                                score: 1.0,
                            }]
                        );
                    }
                });
            }
        });
        // Handler calls went through the area (one stage load each; a call that found the area
        // busy for a second would have gone inline, with the same result).
        assert!(seq(&plane) > 0 && seq(&plane) <= 2 * 2 * rounds);
        // What the area holds after the last call: the last context b saw, with its own write.
        plane.with_context(|c| {
            let mut buf = Vec::new();
            assert!(c.read(StageField::FinalText, &mut buf).expect("read"));
            assert!(buf.ends_with(b" [a]"), "{}", String::from_utf8_lossy(&buf));
            let memory = c
                .read_json(StageField::Memory, &mut buf)
                .expect("read")
                .expect("b wrote it");
            assert_eq!(memory[0]["role"], "b");
        });
        host.shutdown();
    });
}

#[test]
fn a_plugin_stage_handler_rewrites_the_final_text_over_the_area_and_inline() {
    watchdog(Duration::from_secs(120), || {
        // Over the area.
        let (fx, plane, host) = over_area(&["conformance"]);
        let (ctx, run) = before_output(&fx, "stage:upper", "hello there");
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(ctx.final_text, "[rewritten] HELLO THERE");
        assert_eq!(seq(&plane), 1);
        // Input the handler ignores passes untouched.
        let (ctx, _) = before_output(&fx, "plain words", "as is");
        assert_eq!(ctx.final_text, "as is");

        // A context too large for the area (a 200 KB window against a 64 KiB field) goes
        // inline instead, and arrives whole.
        let mut big = StageContext {
            raw_message: "stage:upper".into(),
            final_text: "big".into(),
            context_msgs: vec![hearth_stages::ContextMsg {
                role: "user".into(),
                content: "w".repeat(200 * 1024),
            }],
            ..StageContext::default()
        };
        let call = CallContext::kernel(Duration::from_secs(60));
        let run = fx.tables.stages.run(Stage::BeforeOutput, &call, &mut big);
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(big.final_text, "[rewritten] BIG");
        assert_eq!(big.context_msgs[0].content.len(), 200 * 1024);
        host.shutdown();

        // Inline: no data plane offered.
        let fx = Fixture::new();
        install(&fx, "conformance");
        let host = fx.host(Default::default(), Default::default());
        start(&host, &["conformance"]);
        let (ctx, run) = before_output(&fx, "stage:upper", "hello there");
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(ctx.final_text, "[rewritten] HELLO THERE");
        host.shutdown();
    });
}

#[test]
fn flags_the_response_and_extra_fields_travel_over_the_area() {
    watchdog(Duration::from_secs(60), || {
        let (fx, plane, host) = over_area(&["conformance"]);
        let mut ctx = StageContext {
            raw_message: "stage:flags".into(),
            final_text: "draft".into(),
            ..StageContext::default()
        };
        ctx.extra.insert("output_channel".into(), json!("cli"));
        // A key the area has no field for stays in the kernel, untouched.
        ctx.extra.insert("trace".into(), json!({"n": 1}));
        let call = CallContext::kernel(Duration::from_secs(60));
        let run = fx.tables.stages.run(Stage::BeforeOutput, &call, &mut ctx);
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert!(run.responded);
        assert_eq!(ctx.response.as_deref(), Some("answered: draft"));
        assert!(ctx.no_memory);
        assert_eq!(ctx.extra["media_type"], "image/png");
        assert_eq!(ctx.extra["output_channel"], "cli");
        assert_eq!(ctx.extra["trace"], json!({"n": 1}));
        assert_eq!(ctx.final_text, "draft");
        assert_eq!(seq(&plane), 1, "the call went over the area");
        host.shutdown();
    });
}

#[test]
fn an_edit_too_large_for_its_field_fails_the_handler_and_applies_nothing() {
    watchdog(Duration::from_secs(60), || {
        let (fx, plane, host) = over_area(&["conformance"]);
        let (ctx, run) = before_output(&fx, "stage:oversize", "kept");
        assert_eq!(ctx.final_text, "kept");
        assert_eq!(run.errors.len(), 1, "{:?}", run.errors);
        let error = &run.errors[0];
        assert!(
            error.contains("FinalText") && error.contains("capacity"),
            "{error}"
        );
        // The plugin goes on serving.
        let (ctx, run) = before_output(&fx, "stage:upper", "next");
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(ctx.final_text, "[rewritten] NEXT");
        assert_eq!(seq(&plane), 2, "both calls went over the area");
        host.shutdown();
    });
}

/// A plugin that says it attached the data plane, registers a `before_output` handler, and
/// answers its stage calls with the given results in turn (waiting for a file `go` in its
/// directory before the last one).
fn liar(answers: &[&str], last: &str) -> String {
    liar_with_pid("'$$'", answers, last)
}

/// [`liar`] whose handshake gives `pid` (shell text) as its pid.
fn liar_with_pid(pid: &str, answers: &[&str], last: &str) -> String {
    let quoted: Vec<String> = answers.iter().map(|a| format!("'{a}'")).collect();
    format!(
        r#"read l; echo '{{"jsonrpc":"2.0","id":1,"result":{{"protocol":1,"sdk_version":"sh","plugin_name":"liar","pid":{pid},"data_plane":true}}}}'
read l; echo '{{"jsonrpc":"2.0","id":2,"result":{{}}}}'
read l; echo '{{"jsonrpc":"2.0","id":1,"method":"stage.register","params":{{"stage":"before_output","scope":"","priority":0}}}}'
read r; echo '{{"jsonrpc":"2.0","id":3,"result":{{}}}}'
answer() {{ id=$(echo "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'); echo '{{"jsonrpc":"2.0","id":'$id',"result":'"$2"'}}'; }}
for a in {}; do read l; answer "$l" "$a"; done
read l; while [ ! -f go ]; do sleep 0.01; done; answer "$l" '{last}'
while read l; do :; done
"#,
        quoted.join(" ")
    )
}

#[test]
fn a_plugin_that_misreports_what_it_wrote_gets_a_clear_error_and_nothing_applied() {
    watchdog(Duration::from_secs(90), || {
        let fx = Fixture::new();
        let plane = plane();
        fx.install_script(
            "liar",
            &liar(
                &[
                    r#"{"dirty_fields":["FinalText"]}"#,
                    r#"{"dirty_fields":[],"seq":999999}"#,
                    r#"{"dirty_fields":["Bogus"]}"#,
                    r#"{"context":{"final_text":"inline?"}}"#,
                ],
                r#"{"dirty_fields":["Memory"]}"#,
            ),
            "",
        );
        let host = fx.host_on(&plane);
        start(&host, &["liar"]);
        for expected in [
            "names FinalText in dirty_fields, but nothing wrote that field",
            "answered for stage 999999, the call was stage 2",
            "dirty_fields names \"Bogus\", which is no field",
            "without dirty_fields",
        ] {
            let (ctx, run) = before_output(&fx, "anything", "untouched");
            assert_eq!(ctx.final_text, "untouched");
            assert_eq!(run.errors.len(), 1, "{:?}", run.errors);
            assert!(
                run.errors[0].contains(expected) && run.errors[0].contains("none of its fields"),
                "{:?} lacks {expected:?}",
                run.errors
            );
        }
        // Memory written during the call, but by another process (this one, the kernel's).
        let before = seq(&plane);
        let (ctx, run) = std::thread::scope(|s| {
            let call = s.spawn(|| before_output(&fx, "anything", "untouched"));
            while seq(&plane) == before {
                std::thread::yield_now();
            }
            plane.with_context(|c| {
                c.write(StageField::Memory, Some(b"[]")).expect("write");
            });
            std::fs::write(fx.plugins_dir().join("liar").join("go"), "").expect("go");
            call.join().expect("stage")
        });
        assert!(ctx.memory.is_empty());
        assert!(
            run.errors[0].contains("wrote that field, not the plugin"),
            "{:?}",
            run.errors
        );
        host.shutdown();
    });
}

#[test]
fn a_plugin_that_gives_no_pid_gets_its_stage_calls_inline() {
    watchdog(Duration::from_secs(90), || {
        let fx = Fixture::new();
        let plane = plane();
        // Over the area this answer would be refused (no dirty_fields); inline it is the
        // handler's new context.
        fx.install_script(
            "liar",
            &liar_with_pid(
                "0",
                &[r#"{"context":{"final_text":"rewritten inline"}}"#],
                r#"{"context":{}}"#,
            ),
            "",
        );
        let host = fx.host_on(&plane);
        start(&host, &["liar"]);
        let before = seq(&plane);
        let (ctx, run) = before_output(&fx, "anything", "untouched");
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(ctx.final_text, "rewritten inline");
        assert_eq!(seq(&plane), before, "the area was not used");
        host.shutdown();
    });
}

fn lock(fx: &Fixture, tool: &str, stage: &str) -> Result<serde_json::Value, String> {
    fx.tables.tools.call_tool(tool, &json!({"stage": stage}))
}

fn unlock(fx: &Fixture, tool: &str, stage: &str) -> Result<serde_json::Value, String> {
    fx.tables
        .tools
        .call_tool(tool, &json!({"stage": stage, "unlock": true}))
}

#[test]
fn stage_locks_wait_time_out_refuse_re_lock_and_foreign_release_and_free_on_exit() {
    watchdog(Duration::from_secs(120), || {
        let (fx, plane, host) = over_area(&["conformance", "conformance-b"]);
        let (a, b) = ("stage_lock", "b_stage_lock");

        lock(&fx, a, "pre_action").expect("a takes it");
        let again = lock(&fx, a, "pre_action").expect_err("no re-lock");
        assert!(again.contains("already holds it"), "{again}");
        let foreign = unlock(&fx, b, "pre_action").expect_err("not b's");
        assert!(foreign.contains("only its holder releases it"), "{foreign}");
        plane.set_stage_lock_wait(Duration::from_millis(300));
        let busy = lock(&fx, b, "pre_action").expect_err("held by a");
        assert!(busy.contains("held it for the whole"), "{busy}");
        assert_eq!(
            plane.stage_lock_holder(Stage::PreAction).as_deref(),
            Some("conformance")
        );

        // b waits and gets it when a releases.
        plane.set_stage_lock_wait(Duration::from_secs(60));
        std::thread::scope(|s| {
            let waiter = s.spawn(|| lock(&fx, b, "pre_action"));
            std::thread::sleep(Duration::from_millis(100));
            assert!(!waiter.is_finished(), "b took a lock a holds");
            unlock(&fx, a, "pre_action").expect("a releases");
            waiter.join().expect("waiter").expect("b got it");
        });
        assert_eq!(
            plane.stage_lock_holder(Stage::PreAction).as_deref(),
            Some("conformance-b")
        );
        unlock(&fx, b, "pre_action").expect("b releases");

        // a is SIGKILLed holding a lock: b, waiting, gets it.
        lock(&fx, a, "after_toolcall").expect("a takes it");
        let pid = host
            .status_of("conformance")
            .and_then(|s| s.pid)
            .expect("a runs");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| lock(&fx, b, "after_toolcall"));
            std::thread::sleep(Duration::from_millis(100));
            assert!(!waiter.is_finished(), "b took a lock a holds");
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            )
            .expect("kill");
            waiter
                .join()
                .expect("waiter")
                .expect("b got it after a died");
        });
        assert_eq!(
            plane.stage_lock_holder(Stage::AfterToolcall).as_deref(),
            Some("conformance-b")
        );
        host.shutdown();
    });
}
