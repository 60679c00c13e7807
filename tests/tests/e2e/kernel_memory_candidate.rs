//! The `memory_candidate` event (SPEC §3.7): a turn that ended well is offered, after its
//! reply and its `agent_output`, to whoever keeps memories outside Hearth — its source, input,
//! reply and tools; a turn that asked not to be remembered, or that failed, is not.

use crate::support::{Harness, REPLY_WAIT, with_tool, within};
use hearth_ipc::EventKind;
use hearth_kernel::graph::Registries;
use hearth_kernel::input::InputEvent;
use hearth_kernel::turn::TurnConfig;
use hearth_llm::provider::{ProviderError, ScriptStep};
use serde_json::{Value, json};
use std::time::Duration;

#[test]
fn a_finished_turn_is_offered_as_a_memory_candidate_after_its_reply() {
    within(Duration::from_secs(30), || {
        offered_after_the_reply(|steps, registries| {
            Harness::with_config(steps, TurnConfig::default(), registries)
        });
    });
}

/// The same through the journal: the store's owner publishes a reply's events after its
/// commit, in the order the turn produced them.
#[test]
fn a_journaled_turn_is_offered_after_its_reply_too() {
    within(Duration::from_secs(30), || {
        let dir = hearth_testkit::fresh_dir("memory-candidate");
        offered_after_the_reply(|steps, registries| {
            Harness::durable(steps, registries, &dir.join("memory.db"))
        });
        let _ = std::fs::remove_dir_all(&dir);
    });
}

fn offered_after_the_reply(start: impl FnOnce(Vec<ScriptStep>, Registries) -> Harness) {
    let registries = with_tool(
        "weather_get",
        hearth_stages::tool_fn(|_: &Value| Ok(json!("sunny"))),
    );
    let h = start(
        vec![
            ScriptStep::text("not remembered"),
            ScriptStep::tool_calls(&[("weather_get", json!({"city": "Paris"}))]),
            ScriptStep::text("Paris is sunny."),
        ],
        registries,
    );
    let mut events = h.recorder();
    let quiet = InputEvent::text("cli", "a secret").with_payload("no_memory", json!(true));
    let reply = h
        .kernel
        .handle()
        .submit(quiet)
        .recv_timeout(REPLY_WAIT)
        .expect("a reply");
    assert_eq!(reply.content, "not remembered");
    let reply = h.ask("weather in Paris?");
    assert_eq!(reply.content, "Paris is sunny.");

    let seen = events.drain_until(EventKind::MemoryCandidate, 1);
    let order: Vec<EventKind> = seen
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| matches!(k, EventKind::AgentOutput | EventKind::MemoryCandidate))
        .collect();
    assert_eq!(
        order,
        [
            EventKind::AgentOutput,
            EventKind::AgentOutput,
            EventKind::MemoryCandidate
        ],
        "only the second turn is offered, after its agent_output"
    );
    let candidate = &seen
        .iter()
        .find(|(k, _)| *k == EventKind::MemoryCandidate)
        .expect("a candidate")
        .1;
    assert_eq!(candidate["source"], "cli");
    assert_eq!(candidate["input"], "weather in Paris?");
    assert_eq!(candidate["response"], "Paris is sunny.");
    assert_eq!(candidate["tools_used"], json!(["weather_get"]));
    assert_eq!(candidate["tool_results"][0]["name"], "weather_get");
    assert_eq!(candidate["tool_results"][0]["output"], "sunny");
    assert_eq!(candidate["agent_id"], "test");
    assert!(candidate["timestamp"].as_i64().is_some_and(|t| t > 0));
    assert!(
        !candidate["request_id"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
    );
    h.kernel.shutdown();
}

#[test]
fn a_failed_turn_is_not_a_memory_candidate() {
    within(Duration::from_secs(30), || {
        let h = Harness::new(vec![
            ScriptStep::Fail(ProviderError::Other("model down".into())),
            ScriptStep::text("fine now"),
        ]);
        let mut events = h.recorder();
        assert!(h.ask("first").error);
        assert_eq!(h.ask("second").content, "fine now");
        let seen = events.drain_until(EventKind::MemoryCandidate, 1);
        let inputs: Vec<&Value> = seen
            .iter()
            .filter(|(k, _)| *k == EventKind::MemoryCandidate)
            .map(|(_, v)| &v["input"])
            .collect();
        assert_eq!(inputs, [&json!("second")]);
        h.kernel.shutdown();
    });
}
