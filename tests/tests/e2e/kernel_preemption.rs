//! Interrupts preempting a running task, which then resumes with its tail intact (SPEC §2, §2.11).

use crate::support::{Harness, REPLY_WAIT, within};
use hearth_ipc::EventKind;
use hearth_kernel::graph::Registries;
use hearth_kernel::input::InputEvent;
use hearth_kernel::turn::TurnConfig;
use hearth_kernel::turn::texts::{self, Lang};
use hearth_llm::provider::{Role, ScriptStep};
use hearth_stages::ToolDef;
use serde_json::{Value, json};
use std::time::Duration;

fn interrupt(text: &str, level: &str) -> InputEvent {
    InputEvent::text("timer", text).with_payload("priority", json!(level))
}

#[test]
fn l3_interrupt_preempts_at_the_next_safe_point_and_the_victim_resumes_with_its_tail() {
    within(Duration::from_secs(30), || {
        let registries = Registries::default();
        let (started_tx, started) = crossbeam_channel::bounded(1);
        registries
            .tools
            .register(
                ToolDef {
                    name: "scan_disk".into(),
                    parameters: json!({"type": "object"}),
                    ..ToolDef::default()
                },
                hearth_stages::tool_fn(move |_: &Value| {
                    let _ = started_tx.try_send(());
                    std::thread::sleep(Duration::from_millis(300));
                    Ok(json!("disk ok"))
                }),
            )
            .expect("registers");
        let h = Harness::with_config(
            vec![
                ScriptStep::tool_calls(&[("scan_disk", json!({}))]),
                ScriptStep::text("The oven timer rang."),
                ScriptStep::text("Disk scan finished."),
            ],
            TurnConfig::default(),
            registries,
        );
        let mut events = h.recorder();
        let handle = h.kernel.handle();
        let first = handle.send_text("cli", "scan my disk");
        started.recv_timeout(REPLY_WAIT).expect("the tool starts");
        // The tool is running now: the interrupt is armed, and the task yields after the tool.
        let urgent = handle.interrupt(interrupt("oven timer", "L3"));
        let urgent_reply = urgent.recv_timeout(REPLY_WAIT).expect("interrupt answered");
        assert_eq!(urgent_reply.content, "The oven timer rang.");
        let first_reply = first.recv_timeout(REPLY_WAIT).expect("victim answered");
        assert_eq!(first_reply.content, "Disk scan finished.");

        let reqs = h.provider.requests();
        assert_eq!(reqs.len(), 3);
        // The interrupt sees none of the victim's progress and reads as a system message.
        let int_msgs = &reqs[1].messages;
        assert!(int_msgs.iter().all(|m| m.role != Role::Tool));
        assert!(int_msgs.iter().any(|m| m.role == Role::System
            && m.content == format!("{}oven timer", texts::interrupt_prefix(Lang::En))));
        // The victim's resumed request: rebuilt prefix (its timeline now holds the interrupt's
        // answer), then the old tail unchanged.
        let resumed = &reqs[2].messages;
        let timeline = resumed
            .iter()
            // An English task reads the timeline under an English header.
            .find(|m| m.content.starts_with("Earlier in this conversation:"))
            .expect("timeline");
        assert!(
            timeline.content.contains("The oven timer rang."),
            "resumed prefix is rebuilt: {}",
            timeline.content
        );
        let tail: Vec<(Role, &str)> = resumed
            .iter()
            .rev()
            .take(3)
            .map(|m| (m.role, m.content.as_str()))
            .collect();
        assert_eq!(tail[0], (Role::User, texts::continue_after_tools(Lang::En)));
        assert_eq!(tail[1], (Role::Tool, "disk ok"));
        assert_eq!(tail[2].0, Role::Assistant);

        // A reply is sent once journaled and its output event published just after, so the
        // victim's event may still be on its way when its reply arrives.
        let is_output = |(k, _): &(EventKind, Value)| *k == EventKind::AgentOutput;
        let seen = events.drain_until(EventKind::AgentOutput, 2);
        let outputs: Vec<&str> = seen
            .iter()
            .filter(|e| is_output(e))
            .filter_map(|(_, v)| v["content"].as_str())
            .collect();
        assert_eq!(
            outputs,
            ["The oven timer rang.", "Disk scan finished."],
            "the interrupt is answered before the preempted task"
        );
        let sched: Vec<&Value> = seen
            .iter()
            .filter(|(k, _)| *k == EventKind::Scheduler)
            .map(|(_, v)| v)
            .collect();
        assert_eq!(
            sched
                .iter()
                .map(|v| v["action"].as_str().unwrap_or(""))
                .collect::<Vec<_>>(),
            ["suspend", "resume"]
        );
        let snap = handle.snapshot(REPLY_WAIT).expect("snapshot");
        assert_eq!(snap.stats.suspended, 1);
        assert_eq!(snap.stats.resumed, 1);
        assert_eq!(snap.stats.preempts_by_level[3], 1);
        assert!(snap.stack.is_empty());
        h.kernel.shutdown();
    });
}

#[test]
fn interrupt_cuts_a_streaming_answer_which_is_sent_again_on_resume() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![
            ScriptStep::slow_text(
                "one two three four five six seven eight",
                Duration::from_millis(100),
            ),
            ScriptStep::text("Doorbell!"),
            ScriptStep::text("A whole story."),
        ]);
        let handle = h.kernel.handle();
        let story = handle.send_text("cli", "tell me a story");
        h.wait_requests(1);
        std::thread::sleep(Duration::from_millis(150));
        let door = handle.interrupt(interrupt("doorbell", "L2"));
        assert_eq!(
            door.recv_timeout(REPLY_WAIT).expect("interrupt").content,
            "Doorbell!"
        );
        assert_eq!(
            story.recv_timeout(REPLY_WAIT).expect("story").content,
            "A whole story."
        );
        let reqs = h.provider.requests();
        assert_eq!(reqs.len(), 3);
        // The cut call is simply sent again: same tail (the user input), rebuilt prefix.
        assert_eq!(
            reqs[2].messages.last().map(|m| m.content.clone()),
            reqs[0].messages.last().map(|m| m.content.clone())
        );
        h.kernel.shutdown();
    });
}

#[test]
fn equal_levels_never_preempt_each_other() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![
            ScriptStep::slow_text("a b c d", Duration::from_millis(60)),
            ScriptStep::text("second"),
        ]);
        let handle = h.kernel.handle();
        let a = handle.interrupt(interrupt("first", "L2"));
        h.wait_requests(1);
        let b = handle.interrupt(interrupt("second", "L2"));
        assert_eq!(a.recv_timeout(REPLY_WAIT).expect("a").content, "a b c d");
        assert_eq!(b.recv_timeout(REPLY_WAIT).expect("b").content, "second");
        let snap = handle.snapshot(REPLY_WAIT).expect("snapshot");
        assert_eq!(snap.stats.suspended, 0);
        h.kernel.shutdown();
    });
}

#[test]
fn external_plugins_cannot_claim_l4() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![ScriptStep::text("ok")]);
        let handle = h.kernel.handle();
        let reply = handle.interrupt(
            interrupt("plugin says hi", "L4").with_trust(hearth_kernel::input::Trust::External),
        );
        reply.recv_timeout(REPLY_WAIT).expect("answered");
        let snap = handle.snapshot(REPLY_WAIT).expect("snapshot");
        assert_eq!(snap.stats.interrupts_by_level[4], 0);
        assert_eq!(snap.stats.interrupts_by_level[3], 1);
        h.kernel.shutdown();
    });
}
