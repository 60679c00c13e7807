//! Lua stage handlers and output channels in the kernel's tables: registered under the plugin's
//! name, called per request with the call context, hostile ones a clear error of that call,
//! the crash policy over them, reload swapping them, and everything gone when the plugin stops.

mod support;

use hearth_plugin_host::{InProcessHost, RestartPolicy};
use hearth_rpc::Grants;
use hearth_stages::{CallContext, Stage, StageContext};
use hearth_testkit::{fresh_dir, within};
use serde_json::json;
use std::time::{Duration, Instant};
use support::{WATCHDOG, host, script, start_in};

fn kernel_call() -> CallContext {
    CallContext::kernel(Duration::from_secs(10))
}

/// Runs `stage` of `host`'s pipeline on a context holding `text` as raw and final text.
fn run(host: &InProcessHost, stage: Stage, text: &str) -> (StageContext, Vec<String>) {
    let mut ctx = StageContext::with_final_text(text);
    ctx.raw_message = text.into();
    let run = host.tables.stages.run(stage, &kernel_call(), &mut ctx);
    (ctx, run.errors)
}

fn send(host: &InProcessHost, channel: &str, payload: &str) -> Result<String, String> {
    let tool = format!("output_send__{channel}");
    let args = json!({"payload": payload});
    let outputs = &host.tables.outputs;
    match outputs.dispatch(&kernel_call(), &tool, &args, &host.tables.stages) {
        Some(result) => result.map_err(|e| e.to_string()),
        None => Err(format!("{tool} is not an output tool")),
    }
}

#[test]
fn a_scripts_stage_handlers_and_channel_join_the_kernel_under_its_name() {
    within(WATCHDOG, || {
        let host = host();
        let plugin = start_in(
            &host,
            "notes",
            &script("stages.lua"),
            RestartPolicy::default(),
            Grants::unrestricted(),
        );
        assert_eq!(host.tables.stages.plugins(Stage::BeforeOutput), ["notes"]);
        assert_eq!(host.tables.stages.plugins(Stage::OnInput), ["notes"]);

        let (ctx, errors) = run(&host, Stage::BeforeOutput, "hello there");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(ctx.final_text, "HELLO THERE [kernel]");
        // A handler that returns nothing leaves the context as it was.
        let (ctx, errors) = run(&host, Stage::OnInput, "as it was");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            (ctx.raw_message.as_str(), ctx.final_text.as_str()),
            ("as it was", "as it was")
        );

        let channels = host.tables.outputs.channels();
        assert_eq!(channels.len(), 1);
        assert_eq!(channels[0].name, "notebook");
        assert_eq!(channels[0].description, "Keeps notes.");
        // A delivery passes before_output first, the script's own handler included.
        send(&host, "notebook", "buy milk").expect("delivered");
        let kept = host
            .tables
            .tools
            .execute(&kernel_call(), "notebook_read", &json!({}))
            .expect("the tool reads the channel's state");
        assert_eq!(kept["notes"], json!(["BUY MILK [kernel]"]));

        drop(plugin);
        assert_eq!(host.tables.stages.handlers(Stage::BeforeOutput), 0);
        assert_eq!(host.tables.stages.handlers(Stage::OnInput), 0);
        assert!(host.tables.outputs.is_empty());
        assert!(host.tables.tools.is_empty());
    });
}

#[test]
fn hostile_handlers_are_a_clear_error_of_their_call_and_the_context_is_kept() {
    within(WATCHDOG, || {
        let host = host();
        // Patient enough for every failure below (the delivery runs before_output's loop too).
        let policy = RestartPolicy {
            max_crashes: 100,
            ..RestartPolicy::default()
        };
        let _plugin = start_in(
            &host,
            "pit",
            &script("hostile_stages.lua"),
            policy,
            Grants::unrestricted(),
        );
        for (stage, want) in [
            (Stage::BeforeOutput, "exceeded its"),
            (Stage::OnInput, "ran out of memory"),
            (Stage::PreAction, "no actions today"),
            (Stage::AfterOutput, "returned context does not fit"),
        ] {
            let (ctx, errors) = run(&host, stage, "untouched");
            assert_eq!(errors.len(), 1, "{stage:?}: {errors:?}");
            let error = &errors[0];
            assert!(
                error.starts_with("pit: ") && error.contains(want),
                "{stage:?}: {error}"
            );
            assert_eq!(ctx.final_text, "untouched", "{stage:?}");
        }
        let error = send(&host, "pit", "hello").expect_err("the channel fails");
        assert!(
            error.contains("lua plugin pit output channel pit: ") && error.contains("pit is full"),
            "{error}"
        );
    });
}

#[test]
fn handlers_that_keep_failing_are_stopped_by_the_crash_policy() {
    within(WATCHDOG, || {
        let host = host();
        let policy = RestartPolicy {
            max_crashes: 3,
            window: Duration::from_secs(60),
            ..RestartPolicy::scaled(1000)
        };
        let plugin = start_in(
            &host,
            "pit",
            &script("hostile_stages.lua"),
            policy,
            Grants::unrestricted(),
        );
        for _ in 0..3 {
            let (_, errors) = run(&host, Stage::PreAction, "x");
            assert!(errors[0].contains("no actions today"), "{errors:?}");
        }
        let gone = Instant::now();
        while plugin.is_running() && gone.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!plugin.is_running(), "stopped after three failures");
        for stage in Stage::ALL {
            assert_eq!(host.tables.stages.handlers(stage), 0, "{stage:?}");
        }
        assert!(host.tables.outputs.is_empty());
    });
}

#[test]
fn a_reload_swaps_the_handlers_and_channels() {
    within(WATCHDOG, || {
        let dir = fresh_dir("lua-stage-reload");
        let entry = dir.join("main.lua");
        let version = |tag: &str, channel: &str| {
            format!(
                "sdk.stage{{ stage = 'before_output', handler = function(c) \
                 c.final_text = c.final_text .. ' {tag}'; return c end }}\n\
                 sdk.channel{{ name = '{channel}', handler = function() end }}\n"
            )
        };
        std::fs::write(&entry, version("v1", "first")).expect("write");
        let host = host();
        let _plugin = start_in(
            &host,
            "swap",
            &entry,
            RestartPolicy::default(),
            Grants::unrestricted(),
        );
        assert_eq!(run(&host, Stage::BeforeOutput, "x").0.final_text, "x v1");
        // A new mtime even on a coarse clock.
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&entry, version("v2", "second")).expect("write");
        let until = Instant::now() + Duration::from_secs(10);
        while run(&host, Stage::BeforeOutput, "x").0.final_text != "x v2" && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(run(&host, Stage::BeforeOutput, "x").0.final_text, "x v2");
        assert_eq!(host.tables.stages.handlers(Stage::BeforeOutput), 1);
        let names: Vec<String> = host
            .tables
            .outputs
            .channels()
            .into_iter()
            .map(|c| c.name)
            .collect();
        assert_eq!(names, ["second"]);
        let _ = std::fs::remove_dir_all(dir);
    });
}

#[test]
fn concurrent_stage_runs_and_tool_calls_each_get_their_own_answer() {
    within(WATCHDOG, || {
        let host = host();
        let _plugin = start_in(
            &host,
            "notes",
            &script("stages.lua"),
            RestartPolicy::default(),
            Grants::unrestricted(),
        );
        let busy = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..8 {
                let (host, busy) = (&host, &busy);
                s.spawn(move || {
                    for i in 0..40 {
                        let text = format!("t{t} i{i}");
                        let (ctx, errors) = run(host, Stage::BeforeOutput, &text);
                        match errors.first() {
                            // The queue is bounded: a refusal says so, and changes nothing.
                            Some(e) if e.contains("is busy") => {
                                busy.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                assert_eq!(ctx.final_text, text);
                            }
                            Some(e) => panic!("{e}"),
                            None => assert_eq!(
                                ctx.final_text,
                                format!("{} [kernel]", text.to_uppercase())
                            ),
                        }
                        let read =
                            host.tables
                                .tools
                                .execute(&kernel_call(), "notebook_read", &json!({}));
                        if let Err(e) = read {
                            assert!(e.to_string().contains("is busy"), "{e}");
                        }
                    }
                });
            }
        });
        // Every run answered; the script is still there and well.
        let (ctx, errors) = run(&host, Stage::BeforeOutput, "done");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(ctx.final_text, "DONE [kernel]");
    });
}
