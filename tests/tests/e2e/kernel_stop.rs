//! Stop (SPEC §2.8): the in-flight call is cut at once, inputs queued at that moment are
//! cancelled, later ones are untouched.

use crate::support::{Harness, REPLY_WAIT, within};
use hearth_ipc::EventKind;
use hearth_kernel::turn::texts::{self, Lang};
use hearth_llm::provider::{ScriptStep, StreamChunk};
use std::time::{Duration, Instant};

#[test]
fn stop_mid_stream_keeps_the_partial_text_and_cancels_the_queue() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![
            ScriptStep::HangAfter(vec![StreamChunk::text("Once upon ")]),
            ScriptStep::text("after stop"),
        ]);
        let mut events = h.recorder();
        let handle = h.kernel.handle();
        let story = handle.send_text("cli", "story");
        let queued: Vec<_> = (0..3)
            .map(|i| handle.send_text("cli", &format!("queued {i}")))
            .collect();
        events.wait_for(EventKind::ContentDelta, REPLY_WAIT);
        let started = Instant::now();
        let ack = handle
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("stop acknowledged");
        assert!(ack.content.contains("\"stopped\":true"), "{}", ack.content);
        let story = story.recv_timeout(REPLY_WAIT).expect("story reply");
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "stop took {:?}",
            started.elapsed()
        );
        assert_eq!(story.content, "Once upon ");
        for rx in queued {
            assert_eq!(
                rx.recv_timeout(REPLY_WAIT).expect("cancelled").content,
                texts::cancelled_by_stop(Lang::En)
            );
        }
        assert_eq!(
            h.provider.request_count(),
            1,
            "cancelled inputs never reach the model"
        );
        // The budget was a snapshot: the next input runs normally.
        assert_eq!(h.ask("after").content, "after stop");
        h.kernel.shutdown();
    });
}

#[test]
fn stop_before_any_text_replies_stopped() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![ScriptStep::HangAfter(vec![])]);
        let handle = h.kernel.handle();
        let rx = handle.send_text("cli", "think hard");
        h.wait_requests(1);
        handle.stop("cli").recv_timeout(REPLY_WAIT).expect("ack");
        assert_eq!(
            rx.recv_timeout(REPLY_WAIT).expect("reply").content,
            texts::stopped(Lang::En)
        );
        h.kernel.shutdown();
    });
}

#[test]
fn stop_while_idle_does_not_leak_into_the_next_task() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![ScriptStep::text("fine")]);
        let ack = h
            .kernel
            .handle()
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("ack");
        assert!(ack.content.contains("\"stopped\":false"));
        assert_eq!(h.ask("hello").content, "fine");
        h.kernel.shutdown();
    });
}

#[test]
fn stop_while_a_tool_runs_ends_the_task_at_once() {
    within(Duration::from_secs(30), || {
        let registries = hearth_kernel::graph::Registries::default();
        let (started_tx, started) = crossbeam_channel::bounded(1);
        registries
            .tools
            .register(
                hearth_stages::ToolDef {
                    name: "slow_job".into(),
                    parameters: serde_json::json!({"type": "object"}),
                    ..Default::default()
                },
                hearth_stages::tool_fn(move |_: &serde_json::Value| {
                    let _ = started_tx.try_send(());
                    std::thread::sleep(Duration::from_secs(2));
                    Ok(serde_json::json!("finished"))
                }),
            )
            .expect("registers");
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("slow_job", serde_json::json!({}))]),
                ScriptStep::text("never asked"),
            ],
            hearth_kernel::turn::TurnConfig::default(),
            registries,
        );
        let handle = h.kernel.handle();
        let rx = handle.send_text("cli", "run the slow job");
        started.recv_timeout(REPLY_WAIT).expect("tool started");
        let asked = Instant::now();
        handle.stop("cli").recv_timeout(REPLY_WAIT).expect("ack");
        let reply = rx.recv_timeout(REPLY_WAIT).expect("reply");
        assert!(
            asked.elapsed() < Duration::from_millis(500),
            "stop took {:?}",
            asked.elapsed()
        );
        assert_eq!(reply.content, texts::stopped(Lang::En));
        assert_eq!(
            h.provider.request_count(),
            1,
            "no further model call after the stop"
        );
        h.kernel.shutdown();
    });
}

/// SPEC §2.8: the cancel budget counts the inputs still in the kernel's inbox edge, not only
/// those already pumped into the ready queue. With a ready queue of one, two of the three
/// inputs waiting at the stop are still in the edge; all three must be cancelled.
#[test]
fn stop_cancels_inputs_still_in_the_inbox_edge() {
    within(Duration::from_secs(30), || {
        let turn = hearth_kernel::turn::TurnConfig {
            scheduler: hearth_scheduler::SchedulerConfig {
                max_queue: 1,
                ..hearth_scheduler::SchedulerConfig::default()
            },
            ..hearth_kernel::turn::TurnConfig::default()
        };
        let h = Harness::with_config(
            vec![
                ScriptStep::HangAfter(vec![StreamChunk::text("Once ")]),
                ScriptStep::text("after stop"),
            ],
            turn,
            hearth_kernel::graph::Registries::default(),
        );
        let handle = h.kernel.handle();
        let story = handle.send_text("cli", "story");
        h.wait_requests(1);
        let waiting: Vec<_> = (0..3)
            .map(|i| handle.send_text("cli", &format!("waiting {i}")))
            .collect();
        // Only one fits the ready queue; the pump leaves the others in the edge.
        let deadline = Instant::now() + REPLY_WAIT;
        while handle
            .snapshot(REPLY_WAIT)
            .expect("snapshot")
            .queue
            .is_empty()
        {
            assert!(Instant::now() < deadline, "the ready queue never filled");
            std::thread::sleep(Duration::from_millis(5));
        }
        let ack = handle
            .stop("cli")
            .recv_timeout(REPLY_WAIT)
            .expect("stop acknowledged");
        assert!(
            ack.content.contains("\"cancel_budget\":3"),
            "one queued + two in the edge: {}",
            ack.content
        );
        story.recv_timeout(REPLY_WAIT).expect("story reply");
        for rx in waiting {
            assert_eq!(
                rx.recv_timeout(REPLY_WAIT).expect("answered").content,
                texts::cancelled_by_stop(Lang::En)
            );
        }
        assert_eq!(
            h.provider.request_count(),
            1,
            "nothing waiting reached the model"
        );
        assert_eq!(h.ask("after").content, "after stop");
        h.kernel.shutdown();
    });
}
