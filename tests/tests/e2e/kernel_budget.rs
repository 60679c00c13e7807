//! The turn's token budget as the prompt shows it: the tool schemas are counted only when the
//! source sends them to its model.

use crate::support::{Harness, within};
use hearth_kernel::graph::Registries;
use hearth_kernel::turn::TurnConfig;
use hearth_llm::provider::{ChatRequest, ScriptStep, ScriptedProvider};
use hearth_stages::ToolDef;
use serde_json::json;
use std::time::Duration;

/// Registries holding one tool whose schema alone is more than a 4,096-token window's band.
fn one_wide_tool() -> Registries {
    let registries = Registries::default();
    let def = ToolDef {
        name: "catalogue_search".into(),
        description: "Searches the catalogue by title, author or shelf. ".repeat(400),
        parameters: json!({"type": "object"}),
        ..ToolDef::default()
    };
    registries
        .tools
        .register(def, hearth_stages::tool_fn(|_| Ok(json!("none"))))
        .expect("registers");
    registries
}

/// The last request after three inputs, to a provider with a 4,096-token window.
fn third_request(provider: ScriptedProvider) -> ChatRequest {
    let h = Harness::with_provider(
        provider.with_max_context(4096),
        TurnConfig::default(),
        one_wide_tool(),
    );
    for input in [
        "my cat is called Pimenta",
        "she scratches the sofa",
        "what now?",
    ] {
        assert!(!h.ask(input).error);
    }
    h.provider.requests().pop().expect("requests")
}

fn timeline_of(request: &ChatRequest) -> String {
    request
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .find(|c| c.contains("she scratches the sofa"))
        .expect("a timeline")
        .to_owned()
}

#[test]
fn a_source_without_tools_leaves_their_room_to_the_conversation() {
    within(Duration::from_secs(30), || {
        let steps = || (0..3).map(|i| ScriptStep::text(&format!("answer {i}")));
        // Sent with the schemas, the band is spent on them: the timeline keeps only the newest
        // event, the least any budget shows.
        let with = timeline_of(&third_request(ScriptedProvider::new(steps())));
        assert!(!with.contains("Pimenta"), "{with}");
        let without = timeline_of(&third_request(
            ScriptedProvider::new(steps()).without_tools(),
        ));
        assert!(without.contains("Pimenta"), "{without}");
    });
}
