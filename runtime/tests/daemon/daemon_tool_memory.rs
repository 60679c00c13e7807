//! Memory a tool declares (SPEC §3.5): a Lua plugin's tool with `recall_policy = "auto"`
//! recalls, with its output as the query, a fact pruned out of the working window long before,
//! into one "Memory recall:" system message after the batch's tool messages; a second round of
//! the same tool replaces that message instead of adding another, and a tool that declares
//! nothing recalls nothing.

use crate::harness::{Daemon, install_lua, messages, source, stderr, within};
use hearth_testkit::llm_server::{LlmServer, Script, Seen};
use serde_json::json;
use std::time::Duration;

const ORDERS_LUA: &str = r#"
sdk.tool{
  name = "order_lookup",
  description = "Look up a delivery by its order number.",
  parameters = { type = "object", properties = { order = { type = "string" } } },
  recall_policy = "auto",
  handler = function(args)
    return "order " .. args.order .. ": a replacement rung for the blue ladder Hans borrowed"
  end,
}
sdk.tool{
  name = "order_status",
  description = "The shipping state of an order.",
  parameters = { type = "object", properties = { order = { type = "string" } } },
  handler = function(args)
    return "order " .. args.order .. ": the blue ladder rung Hans borrowed is in transit"
  end,
}
"#;

const FILLER: [&str; 4] = [
    "What is a good recipe for tomato soup?",
    "How many minutes should I boil an egg?",
    "Give me a tip for growing basil indoors.",
    "Suggest a board game for four players.",
];

/// The system messages of a request that a tool's recall wrote, and where each sits.
fn recalls(seen: &Seen) -> Vec<(usize, String)> {
    messages(seen)
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "system")
        .filter_map(|(i, m)| m["content"].as_str().map(|c| (i, c.to_owned())))
        .filter(|(_, c)| c.starts_with("Memory recall:"))
        .collect()
}

/// Index of the last tool message of a request.
fn last_tool(seen: &Seen) -> usize {
    messages(seen)
        .iter()
        .rposition(|m| m["role"] == "tool")
        .expect("a tool message")
}

#[test]
fn a_tool_that_declares_recall_brings_a_pruned_fact_back_once() {
    within(Duration::from_secs(120), || {
        let llm = LlmServer::start();
        let toml = format!(
            "{}\n[agent]\nmax_context_size = 4\n",
            source("llm", &llm.base_url, 0)
        );
        let daemon = Daemon::start_with(&toml, |dir| install_lua(dir, "orders", ORDERS_LUA, &[]));
        let told = daemon.run(&["send", "Hans borrowed my blue ladder for his garage roof."]);
        assert!(told.status.success(), "{}", stderr(&told));
        for (i, text) in FILLER.iter().cycle().take(8).enumerate() {
            let out = daemon.run(&["send", &format!("{text} ({i})")]);
            assert!(out.status.success(), "filler {i}: {}", stderr(&out));
        }
        let before = llm.seen().len();
        let ask = "check order 7781 please";
        let lookup =
            |order: &str| Script::Tools(vec![("order_lookup".into(), json!({"order": order}))]);
        llm.push_for(ask, lookup("7781"));
        llm.push_for(ask, lookup("7782"));
        llm.push_for(ask, Script::text("It is on its way."));
        let out = daemon.run(&["send", ask]);
        assert!(out.status.success(), "{}", stderr(&out));
        let seen = llm.wait_requests(before + 3, Duration::from_secs(20));
        let [first, second, third] = [&seen[before], &seen[before + 1], &seen[before + 2]];
        assert!(
            recalls(first).is_empty(),
            "no tool has run yet: {:#?}",
            messages(first)
        );
        let after_one = recalls(second);
        assert_eq!(after_one.len(), 1, "{:#?}", messages(second));
        let (at, text) = &after_one[0];
        assert!(
            text.contains("ladder"),
            "the pruned fact is recalled: {text}"
        );
        assert!(
            *at > last_tool(second),
            "after the tool results: {:#?}",
            messages(second)
        );
        let after_two = recalls(third);
        assert_eq!(
            after_two.len(),
            1,
            "replaced, not added: {:#?}",
            messages(third)
        );
        assert!(after_two[0].1.contains("ladder"));

        // A tool that declares nothing recalls nothing, however related its output.
        let before = llm.seen().len();
        let ask = "what is the status of order 7783";
        llm.push_for(
            ask,
            Script::Tools(vec![("order_status".into(), json!({"order": "7783"}))]),
        );
        llm.push_for(ask, Script::text("In transit."));
        let out = daemon.run(&["send", ask]);
        assert!(out.status.success(), "{}", stderr(&out));
        let seen = llm.wait_requests(before + 2, Duration::from_secs(20));
        assert!(
            recalls(&seen[before + 1]).is_empty(),
            "{:#?}",
            messages(&seen[before + 1])
        );
    });
}
