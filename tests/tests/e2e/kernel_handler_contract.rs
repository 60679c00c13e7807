//! The handler contract through the whole graph: a blocking stage handler never holds up the
//! kernel, a stop cancels a cancellable tool, and trust decided at the front door (and journaled)
//! limits what an input may do, across a restart too.

use crate::support::{Harness, REPLY_WAIT, within};
use hearth_kernel::graph::{Kernel, Registries};
use hearth_kernel::input::{InputEvent, Trust, skip};
use hearth_kernel::turn::TurnConfig;
use hearth_kernel::turn::texts::{self, Lang};
use hearth_llm::provider::{Role, ScriptStep, ScriptedProvider};
use hearth_scheduler::{CRITICAL_CHANNEL, TaskClass};
use hearth_stages::{CallContext, HandlerError, HandlerSpec, Stage, StageContext, ToolDef};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long after a stop or a snapshot request the kernel must have answered.
const AT_ONCE: Duration = Duration::from_millis(50);

/// A blocking on_input handler that signals when it starts, then sleeps `nap`.
fn sleeper(registries: &Registries, nap: Duration) -> crossbeam_channel::Receiver<()> {
    let (started_tx, started) = crossbeam_channel::unbounded();
    registries.stages.register(
        Stage::OnInput,
        HandlerSpec::new("sleeper"),
        move |_: &CallContext, _: &mut StageContext| {
            let _ = started_tx.send(());
            std::thread::sleep(nap);
            Ok(())
        },
    );
    started
}

#[test]
fn a_stop_is_answered_at_once_while_a_stage_handler_sleeps() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        let started = sleeper(&registries, Duration::from_secs(3));
        let h = Harness::with_config(
            vec![ScriptStep::text("never sent"), ScriptStep::text("next one")],
            TurnConfig::default(),
            registries,
        );
        let handle = h.kernel.handle();
        let sent = Instant::now();
        let task = handle.send_text("cli", "hello");
        started
            .recv_timeout(REPLY_WAIT)
            .expect("the handler started");
        std::thread::sleep(Duration::from_millis(100).saturating_sub(sent.elapsed()));

        // The kernel's worker is free: a control request is answered while the handler sleeps.
        let asked = Instant::now();
        let snapshot = handle.snapshot(REPLY_WAIT).expect("a snapshot");
        assert!(
            asked.elapsed() < AT_ONCE,
            "snapshot took {:?}",
            asked.elapsed()
        );
        assert!(snapshot.running.is_some());

        let stopped = Instant::now();
        let ack = handle
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("stop acknowledged");
        let took = stopped.elapsed();
        assert!(took < AT_ONCE, "the stop was answered after {took:?}");
        assert!(ack.content.contains("\"stopped\":true"), "{}", ack.content);
        let reply = task.recv_timeout(REPLY_WAIT).expect("the task's reply");
        assert!(
            stopped.elapsed() < Duration::from_millis(500),
            "the stopped task answered after {:?}",
            stopped.elapsed()
        );
        assert_eq!(reply.content, texts::stopped(Lang::En));
        assert_eq!(
            h.provider.request_count(),
            0,
            "a stopped task never reaches the model"
        );
        // The stage service is free again at once: the next input is not held up by the sleeper
        // it abandoned (that one sleeps on its own runner thread).
        let next = handle.send_text("cli", "again");
        started
            .recv_timeout(REPLY_WAIT)
            .expect("the handler runs for the next input");
        let reply = next.recv_timeout(REPLY_WAIT).expect("the next reply");
        assert_eq!(reply.content, "never sent");
        h.kernel.shutdown();
    });
}

#[test]
fn an_interrupt_is_taken_at_once_while_a_stage_handler_sleeps() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        let started = sleeper(&registries, Duration::from_millis(600));
        let h = Harness::with_config(
            vec![ScriptStep::text("first"), ScriptStep::text("urgent")],
            TurnConfig::default(),
            registries,
        );
        let handle = h.kernel.handle();
        let task = handle.send_text("cli", "hello");
        started
            .recv_timeout(REPLY_WAIT)
            .expect("the handler started");
        let urgent = InputEvent::text("cli", "the oven")
            .with_payload("priority", json!("L4"))
            .with_trust(Trust::Local);
        let sent = Instant::now();
        let urgent = handle.interrupt(urgent);
        loop {
            let snapshot = handle.snapshot(REPLY_WAIT).expect("a snapshot");
            if snapshot.pending_interrupts == 1 || snapshot.preempt_level.is_some() {
                break;
            }
            assert!(
                sent.elapsed() < AT_ONCE,
                "the interrupt was not taken at once"
            );
        }
        assert!(sent.elapsed() < AT_ONCE, "taken after {:?}", sent.elapsed());
        assert!(urgent.recv_timeout(REPLY_WAIT).is_ok());
        assert!(task.recv_timeout(REPLY_WAIT).is_ok());
        h.kernel.shutdown();
    });
}

#[test]
fn a_stop_cancels_a_cancellable_tool_and_a_plain_tool_never_sees_it() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        let (ended_tx, ended) = crossbeam_channel::unbounded();
        registries
            .tools
            .register(
                ToolDef {
                    name: "scan_disk".into(),
                    cancellable: true,
                    ..ToolDef::default()
                },
                move |call: &CallContext, _: &Value| {
                    let result = (|| {
                        for _ in 0..1000 {
                            call.check()?;
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Ok(json!("scanned"))
                    })();
                    let _ = ended_tx.send((result.clone(), Instant::now()));
                    result
                },
            )
            .expect("registers");
        let saw_cancel = Arc::new(AtomicBool::new(false));
        let saw = Arc::clone(&saw_cancel);
        let (plain_started_tx, plain_started) = crossbeam_channel::unbounded();
        registries
            .tools
            .register(
                ToolDef {
                    name: "copy_file".into(),
                    ..ToolDef::default()
                },
                move |call: &CallContext, _: &Value| {
                    let _ = plain_started_tx.send(());
                    std::thread::sleep(Duration::from_millis(300));
                    saw.store(call.is_cancelled(), Ordering::SeqCst);
                    Ok(json!("copied"))
                },
            )
            .expect("registers");
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("scan_disk", json!({}))]),
                ScriptStep::tool_calls(&[("copy_file", json!({}))]),
            ],
            TurnConfig::default(),
            registries,
        );
        let handle = h.kernel.handle();
        let scan = handle.send_text("cli", "scan");
        h.wait_requests(1);
        std::thread::sleep(Duration::from_millis(100));
        let stopped = Instant::now();
        handle
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("stop acknowledged");
        let (result, at) = ended.recv_timeout(REPLY_WAIT).expect("the tool ended");
        assert_eq!(result, Err(HandlerError::Cancelled));
        let took = at.duration_since(stopped);
        assert!(
            took < Duration::from_millis(200),
            "the tool ran {took:?} past the stop"
        );
        scan.recv_timeout(REPLY_WAIT)
            .expect("the stopped task's reply");

        let copy = handle.send_text("cli", "copy");
        plain_started
            .recv_timeout(REPLY_WAIT)
            .expect("the plain tool started");
        handle
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("stop acknowledged");
        copy.recv_timeout(REPLY_WAIT)
            .expect("the stopped task's reply");
        std::thread::sleep(Duration::from_millis(400));
        assert!(
            !saw_cancel.load(Ordering::SeqCst),
            "a tool that is not cancellable is not told about the stop"
        );
        h.kernel.shutdown();
    });
}

#[test]
fn a_tool_sees_the_task_and_the_trust_of_the_input() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        registries
            .tools
            .register(
                ToolDef {
                    name: "whoami".into(),
                    ..ToolDef::default()
                },
                |call: &CallContext, _: &Value| {
                    Ok(json!(format!(
                        "{} {} {}",
                        call.caller().source,
                        call.trust(),
                        call.task_id() > 0
                    )))
                },
            )
            .expect("registers");
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("whoami", json!({}))]),
                ScriptStep::text("done"),
                ScriptStep::tool_calls(&[("whoami", json!({}))]),
                ScriptStep::text("done"),
            ],
            TurnConfig::default(),
            registries,
        );
        let handle = h.kernel.handle();
        let local = InputEvent::text("cli", "who").with_trust(Trust::Local);
        handle
            .submit(local)
            .recv_timeout(REPLY_WAIT)
            .expect("reply");
        handle
            .submit(InputEvent::text("qq", "who"))
            .recv_timeout(REPLY_WAIT)
            .expect("reply");
        let results: Vec<String> = h
            .provider
            .requests()
            .iter()
            .flat_map(|r| r.messages.clone())
            .filter(|m| m.role == Role::Tool)
            .map(|m| m.content)
            .collect();
        assert!(
            results.contains(&"cli local true".to_owned()),
            "{results:?}"
        );
        assert!(
            results.contains(&"qq external true".to_owned()),
            "{results:?}"
        );
        h.kernel.shutdown();
    });
}

#[test]
fn an_external_caller_may_not_stop_or_claim_consolidation() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![ScriptStep::HangAfter(vec![])]);
        let handle = h.kernel.handle();
        let task = handle.send_text("cli", "think");
        h.wait_requests(1);
        let mut payload = serde_json::Map::new();
        payload.insert("content".into(), Value::String(String::new()));
        payload.insert("stop".into(), Value::Bool(true));
        let external_stop = InputEvent::new("qq", payload).with_trust(Trust::External);
        let reply = handle
            .interrupt(external_stop)
            .recv_timeout(AT_ONCE * 10)
            .expect("denied");
        assert!(reply.skipped);
        assert_eq!(reply.reason.as_deref(), Some(skip::DENIED));
        let claim = InputEvent::text(CRITICAL_CHANNEL, "merge memories");
        let reply = handle
            .submit(claim)
            .recv_timeout(REPLY_WAIT)
            .expect("denied");
        assert_eq!(reply.reason.as_deref(), Some(skip::DENIED));
        // The running task was not stopped by either.
        assert!(task.try_recv().is_err());
        let snapshot = handle.snapshot(REPLY_WAIT).expect("a snapshot");
        assert!(!snapshot.stop_armed && !snapshot.critical);
        handle
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("a trusted stop");
        assert!(task.recv_timeout(REPLY_WAIT).is_ok());
        h.kernel.shutdown();
    });
}

/// A durable kernel over `db` whose model never answers.
fn durable_kernel(db: &Path) -> (Kernel, Arc<ScriptedProvider>) {
    let steps = vec![ScriptStep::HangAfter(vec![]), ScriptStep::HangAfter(vec![])];
    let h = Harness::durable(steps, Registries::default(), db);
    (h.kernel, h.provider)
}

/// The level an L4 interrupt of `trust` runs at after the kernel restarted with it pending.
fn level_after_restart(trust: Trust) -> u8 {
    let dir = hearth_testkit::fresh_dir("trust-restart");
    let db = dir.join("memory.db");
    {
        let (kernel, provider) = durable_kernel(&db);
        let handle = kernel.handle();
        // A consolidation task holds the processor (it is never preempted), so the interrupt
        // stays pending until the shutdown.
        handle.self_input(InputEvent::text(CRITICAL_CHANNEL, "consolidate"));
        let deadline = Instant::now() + REPLY_WAIT;
        while provider.request_count() < 1 {
            assert!(
                Instant::now() < deadline,
                "consolidation never reached the model"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // Nobody waits for its answer (a caller told `shutdown` would have it journaled as
        // ended), so the shutdown leaves it pending and the next start resumes it.
        let urgent = InputEvent::text("qq", "the oven")
            .with_payload("priority", json!("L4"))
            .with_payload("interrupt", json!(true))
            .with_trust(trust);
        handle.submit_durably(urgent, true).expect("journaled");
        loop {
            let snapshot = handle.snapshot(REPLY_WAIT).expect("a snapshot");
            let running = snapshot
                .running
                .is_some_and(|r| r.class == TaskClass::Interrupt);
            if snapshot.pending_interrupts == 1 || running {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the interrupt was never registered"
            );
        }
        kernel.shutdown();
    }
    let (kernel, provider) = durable_kernel(&db);
    let deadline = Instant::now() + REPLY_WAIT;
    while provider.request_count() < 1 {
        assert!(Instant::now() < deadline, "the resumed interrupt never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
    let running = kernel
        .handle()
        .snapshot(REPLY_WAIT)
        .expect("a snapshot")
        .running
        .expect("the resumed interrupt runs");
    kernel.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
    running.level
}

#[test]
fn an_external_l4_clamped_to_l3_is_still_l3_after_a_restart() {
    within(Duration::from_secs(60), || {
        assert_eq!(level_after_restart(Trust::External), 3);
        assert_eq!(
            level_after_restart(Trust::Local),
            4,
            "a trusted L4 stays L4"
        );
    });
}
