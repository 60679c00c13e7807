//! The tool loop of the turn engine (SPEC §3.4–§3.6) through the whole graph.

use crate::support::{Harness, REPLY_WAIT, tool, with_tool, within};
use hearth_ipc::EventKind;
use hearth_kernel::graph::Registries;
use hearth_kernel::turn::TurnConfig;
use hearth_kernel::turn::texts::{self, Lang};
use hearth_llm::provider::{Role, ScriptStep};
use hearth_stages::{HandlerSpec, Stage, StageContext, ToolDef};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[test]
fn two_round_tool_loop_feeds_results_back_in_one_assistant_message() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        registries
            .tools
            .register(
                tool("weather_get"),
                hearth_stages::tool_fn(|args: &Value| {
                    Ok(json!(format!(
                        "sunny in {}",
                        args["city"].as_str().unwrap_or("?")
                    )))
                }),
            )
            .expect("registers");
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("weather_get", json!({"city": "Paris"}))]),
                ScriptStep::tool_calls(&[("weather_get", json!({"city": "Rome"}))]),
                ScriptStep::text("Paris and Rome are sunny."),
            ],
            TurnConfig::default(),
            registries,
        );
        let mut events = h.recorder();
        let reply = h.ask("weather in Paris and Rome?");
        assert_eq!(reply.content, "Paris and Rome are sunny.");
        assert!(!reply.error && !reply.skipped);

        let reqs = h.provider.requests();
        assert_eq!(reqs.len(), 3);
        assert_eq!(
            reqs[0]
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["weather_get"]
        );
        let last = &reqs[2].messages;
        let roles: Vec<Role> = last.iter().map(|m| m.role).collect();
        // system prompt, timeline, user input, source note, then two rounds of assistant+tool, then the placeholder.
        assert_eq!(
            &roles[roles.len() - 5..],
            [
                Role::Assistant,
                Role::Tool,
                Role::Assistant,
                Role::Tool,
                Role::User
            ]
        );
        assert_eq!(last[last.len() - 4].content, "sunny in Paris");
        assert_eq!(
            last[last.len() - 4].tool_call_id,
            last[last.len() - 5].tool_calls[0].id
        );
        assert_eq!(last[last.len() - 2].content, "sunny in Rome");
        assert_eq!(
            last.last().map(|m| m.content.as_str()),
            Some(texts::continue_after_tools(Lang::En))
        );
        // Only one placeholder survives: the previous one was removed before the second call.
        assert_eq!(
            last.iter()
                .filter(|m| m.content == texts::continue_after_tools(Lang::En))
                .count(),
            1
        );

        // The reply arrives before its agent_output event is published.
        let seen = events.drain_until(EventKind::AgentOutput, 1);
        let calls: Vec<&Value> = seen
            .iter()
            .filter(|(k, _)| *k == EventKind::ToolCall)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["status"], "ok");
        assert_eq!(calls[0]["result"], "sunny in Paris");
        let chains = seen
            .iter()
            .filter(|(k, _)| *k == EventKind::AgentLlmChain)
            .count();
        assert_eq!(chains, 3);
        let output = seen
            .iter()
            .find(|(k, _)| *k == EventKind::AgentOutput)
            .expect("agent_output");
        assert_eq!(output.1["content"], "Paris and Rome are sunny.");
        let deltas: String = seen
            .iter()
            .filter(|(k, _)| *k == EventKind::ContentDelta)
            .map(|(_, v)| v["content"].as_str().unwrap_or("").to_string())
            .collect();
        assert_eq!(deltas, "Paris and Rome are sunny.");
        h.kernel.shutdown();
    });
}

#[test]
fn denied_tool_never_runs_and_the_denial_is_the_tool_message() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let r = runs.clone();
        registries
            .tools
            .register(
                tool("files_delete"),
                hearth_stages::tool_fn(move |_: &Value| {
                    r.fetch_add(1, Ordering::SeqCst);
                    Ok(json!("deleted"))
                }),
            )
            .expect("registers");
        registries
            .tools
            .register(
                tool("files_list"),
                hearth_stages::tool_fn(|_: &Value| Ok(json!("a.txt"))),
            )
            .expect("registers");
        registries.stages.register(
            Stage::BeforeToolcall,
            HandlerSpec::new("guard"),
            hearth_stages::stage_fn(|ctx: &mut StageContext| {
                if ctx.tool_calls[0].name == "files_delete" {
                    ctx.response = Some("deleting is not allowed".into());
                }
                Ok(())
            }),
        );
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[
                    ("files_delete", json!({"path": "/"})),
                    ("files_list", json!({})),
                ]),
                ScriptStep::text("done"),
            ],
            TurnConfig::default(),
            registries,
        );
        let mut events = h.recorder();
        assert_eq!(h.ask("clean up").content, "done");
        assert_eq!(runs.load(Ordering::SeqCst), 0, "a denied tool must not run");
        let msgs = &h.provider.requests()[1].messages;
        let tools: Vec<&str> = msgs
            .iter()
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content.as_str())
            .collect();
        assert_eq!(tools, ["deleting is not allowed", "a.txt"]);
        let assistants = msgs.iter().filter(|m| m.role == Role::Assistant).count();
        assert_eq!(
            assistants, 1,
            "one assistant message carries the whole batch"
        );
        let statuses: Vec<Value> = events
            .drain()
            .into_iter()
            .filter(|(k, _)| *k == EventKind::ToolCall)
            .map(|(_, v)| v["status"].clone())
            .collect();
        assert_eq!(statuses, [json!("denied"), json!("ok")]);
        h.kernel.shutdown();
    });
}

#[test]
fn blank_denial_gets_the_default_text() {
    within(Duration::from_secs(30), || {
        let registries = with_tool(
            "x_run",
            hearth_stages::tool_fn(|_: &Value| Ok(json!("ran"))),
        );
        registries.stages.register(
            Stage::BeforeToolcall,
            HandlerSpec::new("guard"),
            hearth_stages::stage_fn(|ctx: &mut StageContext| {
                ctx.response = Some("  ".into());
                Ok(())
            }),
        );
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("x_run", json!({}))]),
                ScriptStep::text("ok"),
            ],
            TurnConfig::default(),
            registries,
        );
        h.ask("go");
        let msgs = &h.provider.requests()[1].messages;
        let denial = msgs
            .iter()
            .find(|m| m.role == Role::Tool)
            .expect("tool message");
        assert_eq!(denial.content, texts::tool_denied(Lang::En, "x_run"));
        h.kernel.shutdown();
    });
}

fn sleepy(name: &str, parallel: bool, serial: bool) -> ToolDef {
    ToolDef {
        parallel_safe: parallel,
        serial,
        ..tool(name)
    }
}

/// Runs a batch of two tools that sleep 300 ms and 100 ms; returns (elapsed, tool messages in order).
fn run_batch(parallel: bool, serial_second: bool) -> (Duration, Vec<String>) {
    let registries = Registries::default();
    registries
        .tools
        .register(
            sleepy("slow_a", parallel, false),
            hearth_stages::tool_fn(|_: &Value| {
                std::thread::sleep(Duration::from_millis(300));
                Ok(json!("A"))
            }),
        )
        .expect("registers");
    registries
        .tools
        .register(
            sleepy("slow_b", parallel, serial_second),
            hearth_stages::tool_fn(|_: &Value| {
                std::thread::sleep(Duration::from_millis(100));
                Ok(json!("B"))
            }),
        )
        .expect("registers");
    let h = Harness::with_config(
        vec![
            ScriptStep::tool_calls(&[("slow_a", json!({})), ("slow_b", json!({}))]),
            ScriptStep::text("both"),
        ],
        TurnConfig::default(),
        registries,
    );
    let started = Instant::now();
    let reply = h.ask("run both");
    let elapsed = started.elapsed();
    assert_eq!(reply.content, "both");
    let msgs = &h.provider.requests()[1].messages;
    let order = msgs
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.clone())
        .collect();
    h.kernel.shutdown();
    (elapsed, order)
}

#[test]
fn parallel_batch_runs_at_once_and_keeps_index_order() {
    within(Duration::from_secs(30), || {
        let (elapsed, order) = run_batch(true, false);
        assert_eq!(
            order,
            ["A", "B"],
            "tool messages follow call order, not finish order"
        );
        assert!(
            elapsed < Duration::from_millis(390),
            "parallel batch took {elapsed:?}"
        );
    });
}

#[test]
fn serial_flag_or_undeclared_tools_run_one_after_another() {
    within(Duration::from_secs(30), || {
        let (elapsed, order) = run_batch(true, true);
        assert_eq!(order, ["A", "B"]);
        assert!(
            elapsed >= Duration::from_millis(400),
            "a Serial tool must serialise the batch ({elapsed:?})"
        );
        let (elapsed, _) = run_batch(false, false);
        assert!(
            elapsed >= Duration::from_millis(400),
            "undeclared tools run serially ({elapsed:?})"
        );
    });
}

#[test]
fn max_tool_turns_stops_the_loop_with_its_text() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        registries
            .tools
            .register(
                tool("loop_again"),
                hearth_stages::tool_fn(|_: &Value| Ok(json!("again"))),
            )
            .expect("registers");
        let steps = (0..10)
            .map(|_| ScriptStep::tool_calls(&[("loop_again", json!({}))]))
            .collect();
        let turn = TurnConfig {
            max_tool_turns: 3,
            ..TurnConfig::default()
        };
        let h = Harness::with_config(steps, turn, registries);
        let reply = h.ask("loop forever");
        assert_eq!(reply.content, texts::max_tool_turns(Lang::En, 3));
        assert_eq!(
            h.provider.request_count(),
            3,
            "three batches, then no fourth LLM call"
        );
        h.kernel.shutdown();
    });
}

#[test]
fn max_tool_turns_prefers_the_last_llm_text() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        registries
            .tools
            .register(
                tool("loop_again"),
                hearth_stages::tool_fn(|_: &Value| Ok(json!("again"))),
            )
            .expect("registers");
        let mut step = ScriptStep::tool_calls(&[("loop_again", json!({}))]);
        if let ScriptStep::Stream { chunks, .. } = &mut step {
            chunks.insert(0, hearth_llm::provider::StreamChunk::text("still working"));
        }
        let turn = TurnConfig {
            max_tool_turns: 1,
            ..TurnConfig::default()
        };
        let h = Harness::with_config(vec![step], turn, registries);
        assert_eq!(h.ask("go").content, "still working");
        h.kernel.shutdown();
    });
}

#[test]
fn tool_timeout_answers_the_model_and_the_turn_goes_on() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        registries
            .tools
            .register(
                tool("hang_forever"),
                hearth_stages::tool_fn(|_: &Value| {
                    std::thread::sleep(Duration::from_secs(5));
                    Ok(json!("late"))
                }),
            )
            .expect("registers");
        let turn = TurnConfig {
            tool_timeout: Duration::from_millis(200),
            ..TurnConfig::default()
        };
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("hang_forever", json!({}))]),
                ScriptStep::text("gave up"),
            ],
            turn,
            registries,
        );
        let started = Instant::now();
        assert_eq!(h.ask("try").content, "gave up");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "took {:?}",
            started.elapsed()
        );
        let msgs = &h.provider.requests()[1].messages;
        let tool_msg = msgs
            .iter()
            .find(|m| m.role == Role::Tool)
            .expect("tool message");
        assert_eq!(
            tool_msg.content,
            texts::tool_timed_out(Lang::En, "hang_forever", Duration::from_millis(200))
        );
        h.kernel.shutdown();
    });
}

#[test]
fn reply_only_batches_get_the_delivery_placeholder() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        let sent = Arc::new(AtomicUsize::new(0));
        let s = sent.clone();
        registries
            .outputs
            .register(
                "phone",
                hearth_stages::CAP_TEXT,
                "the user's phone",
                hearth_stages::output_fn(move |_: &str, _: &str, _: Option<&Value>| {
                    s.fetch_add(1, Ordering::SeqCst);
                    Ok(json!({"status": "sent"}))
                }),
            )
            .expect("registers");
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("output_send__phone", json!({"payload": "hello"}))]),
                ScriptStep::text("sent it"),
            ],
            TurnConfig::default(),
            registries,
        );
        assert_eq!(h.ask("text my phone").content, "sent it");
        assert_eq!(sent.load(Ordering::SeqCst), 1);
        let msgs = &h.provider.requests()[1].messages;
        assert_eq!(
            msgs.iter()
                .find(|m| m.role == Role::Tool)
                .map(|m| m.content.as_str()),
            Some("ok")
        );
        assert_eq!(
            msgs.last().map(|m| m.content.as_str()),
            Some(texts::continue_after_delivery(Lang::En))
        );
        h.kernel.shutdown();
    });
}

#[test]
fn stage_short_circuits_answer_without_the_model() {
    within(Duration::from_secs(30), || {
        for stage in [Stage::OnInput, Stage::PreAction, Stage::PostAction] {
            let registries = Registries::default();
            registries.stages.register(
                stage,
                HandlerSpec::new("gate"),
                hearth_stages::stage_fn(|ctx: &mut StageContext| {
                    ctx.response = Some("answered by a plugin".into());
                    Ok(())
                }),
            );
            let h = Harness::with_config(
                vec![ScriptStep::text("model")],
                TurnConfig::default(),
                registries,
            );
            assert_eq!(h.ask("hello").content, "answered by a plugin", "{stage:?}");
            let expected_calls = usize::from(stage == Stage::PostAction);
            assert_eq!(h.provider.request_count(), expected_calls, "{stage:?}");
            h.kernel.shutdown();
        }
    });
}

#[test]
fn before_output_rewrites_the_reply() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        registries.stages.register(
            Stage::BeforeOutput,
            HandlerSpec::new("fmt"),
            hearth_stages::stage_fn(|ctx: &mut StageContext| {
                ctx.final_text = format!("[{}]", ctx.final_text);
                Ok(())
            }),
        );
        let h = Harness::with_config(
            vec![ScriptStep::text("hi")],
            TurnConfig::default(),
            registries,
        );
        assert_eq!(
            h.kernel
                .handle()
                .send_text("cli", "x")
                .recv_timeout(REPLY_WAIT)
                .expect("reply")
                .content,
            "[hi]"
        );
        h.kernel.shutdown();
    });
}
