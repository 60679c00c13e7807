//! Property tests over random sequences of inputs, interrupts of every level, stops, tool calls,
//! failures and panics, run through the real graph (SPEC §2.10).

use crate::support::{Harness, REPLY_WAIT, within};
use hearth_kernel::graph::Registries;
use hearth_kernel::input::{InputEvent, Reply, Trust, skip};
use hearth_kernel::turn::TurnConfig;
use hearth_llm::provider::{ProviderError, ScriptStep};
use hearth_stages::ToolDef;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::time::Duration;

#[derive(Clone, Debug)]
enum Op {
    Input(u8),
    Interrupt { level: u8, external: bool },
    Stop,
    Pause(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => any::<u8>().prop_map(Op::Input),
        3 => (1u8..=4, any::<bool>()).prop_map(|(level, external)| Op::Interrupt { level, external }),
        1 => Just(Op::Stop),
        2 => (0u8..15).prop_map(Op::Pause),
    ]
}

fn step() -> impl Strategy<Value = ScriptStep> {
    prop_oneof![
        3 => Just(ScriptStep::text("plain answer")),
        2 => (1u64..8).prop_map(|ms| ScriptStep::slow_text("a b c d e", Duration::from_millis(ms))),
        2 => Just(ScriptStep::tool_calls(&[("probe_work", json!({"ms": 5}))])),
        1 => Just(ScriptStep::tool_calls(&[("probe_work", json!({"ms": 2})), ("probe_boom", json!({}))])),
        1 => Just(ScriptStep::Fail(ProviderError::Other("flaky".into()))),
        1 => Just(ScriptStep::Panic("provider bug".into())),
    ]
}

fn registries() -> Registries {
    let r = Registries::default();
    let def = |name: &str| ToolDef {
        name: name.into(),
        parameters: json!({"type": "object"}),
        parallel_safe: true,
        ..ToolDef::default()
    };
    r.tools
        .register(
            def("probe_work"),
            hearth_stages::tool_fn(|args: &Value| {
                std::thread::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(1)));
                Ok(json!("worked"))
            }),
        )
        .expect("registers");
    r.tools
        .register(
            def("probe_boom"),
            hearth_stages::tool_fn(|_: &Value| -> Result<Value, String> { panic!("tool bug") }),
        )
        .expect("registers");
    r
}

/// Submits every op and returns the reply receivers in submission order.
fn play(h: &Harness, ops: &[Op]) -> Vec<crossbeam_channel::Receiver<Reply>> {
    let handle = h.kernel.handle();
    let mut rxs = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        match op {
            Op::Input(n) => rxs.push(handle.send_text("cli", &format!("input {i} {n}"))),
            Op::Interrupt { level, external } => {
                let trust = if *external {
                    Trust::External
                } else {
                    Trust::Local
                };
                let input = InputEvent::text("probe", format!("interrupt {i}"))
                    .with_payload("priority", json!(format!("L{level}")))
                    .with_trust(trust);
                rxs.push(handle.interrupt(input));
            }
            Op::Stop => rxs.push(handle.stop("cli")),
            Op::Pause(ms) => std::thread::sleep(Duration::from_millis(u64::from(*ms))),
        }
    }
    rxs
}

fn turn_config() -> TurnConfig {
    TurnConfig {
        duplicate_window: Duration::ZERO,
        ..TurnConfig::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Drained normally: every task gets a real reply (never a drop), the stack empties,
    /// Suspended == Resumed, and nothing runs afterwards. A second reply is ruled out by the
    /// type (`ReplyHandle`'s `compile_fail` doctests), not checked here.
    #[test]
    fn every_task_gets_exactly_one_reply_and_the_stack_drains(ops in prop::collection::vec(op(), 1..28),
                                                            steps in prop::collection::vec(step(), 0..20)) {
        within(Duration::from_secs(60), move || {
            let h = Harness::with_config(steps, turn_config(), registries());
            let rxs = play(&h, &ops);
            for rx in &rxs {
                let reply = rx.recv_timeout(REPLY_WAIT).expect("every task is answered");
                assert_ne!(reply.reason.as_deref(), Some(skip::DROPPED), "{reply:?}");
                assert_ne!(reply.reason.as_deref(), Some(skip::SHUTDOWN), "{reply:?}");
            }
            // Kernel interrupts raised by panics run after the callers' tasks: wait for quiet.
            let snap = loop {
                let snap = h.kernel.handle().snapshot(REPLY_WAIT).expect("snapshot");
                if snap.running.is_none() && snap.queue.is_empty() && snap.pending_interrupts == 0 && snap.stack.is_empty() {
                    break snap;
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            assert_eq!(snap.stats.suspended, snap.stats.resumed);
            assert!(snap.stats.max_stack_depth <= snap.max_interrupt_frames as u64, "{:?}", snap.stats);
            h.kernel.shutdown();
        });
    }

    /// Shut down at a random moment: still a reply per task.
    #[test]
    fn shutdown_answers_everything_still_pending(ops in prop::collection::vec(op(), 1..28),
                                                 steps in prop::collection::vec(step(), 0..20)) {
        within(Duration::from_secs(60), move || {
            let h = Harness::with_config(steps, turn_config(), registries());
            let rxs = play(&h, &ops);
            h.kernel.shutdown();
            for rx in &rxs {
                let reply = rx.recv_timeout(REPLY_WAIT).expect("every task is answered, also on shutdown");
                assert_ne!(reply.reason.as_deref(), Some(skip::DROPPED), "{reply:?}");
            }
        });
    }
}
