//! The social tools in a running daemon: the model sets a trait of the user's, changes it a
//! turn later, relates two people, and asks who the user is; the tool results it is fed back
//! hold the new value as current, the old one as past with its sentence, and the relation.

use crate::harness::{Daemon, source, stdout, tool_turn, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::{Value, json};
use std::time::Duration;

/// A turn of tool calls; the tool results it fed back, parsed (each is JSON or an error text).
fn turn(
    daemon: &Daemon,
    server: &LlmServer,
    text: &str,
    calls: Vec<(String, Value)>,
) -> Vec<Value> {
    let calls = calls.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
    tool_turn(daemon, server, text, calls)
        .into_iter()
        .map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t)))
        .collect()
}

#[test]
fn the_model_keeps_a_persons_traits_and_relations_with_their_history() {
    within(Duration::from_secs(90), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}",
            source("remote", &server.base_url, 0)
        ));
        let set = |value: &str, sentence: &str| {
            (
                "person_set_trait".to_owned(),
                json!({"name": "me", "trait": "favourite colour", "value": value, "sentence": sentence}),
            )
        };
        let first = turn(
            &daemon,
            &server,
            "my favourite colour is green",
            vec![set("green", "my favourite colour is green")],
        );
        assert_eq!(
            first[0]["inserted"].as_array().map(Vec::len),
            Some(1),
            "{first:?}"
        );
        let second = turn(
            &daemon,
            &server,
            "now I prefer blue",
            vec![set("blue", "now I prefer blue")],
        );
        assert_eq!(
            second[0]["closed"].as_array().map(Vec::len),
            Some(1),
            "{second:?}"
        );
        turn(
            &daemon,
            &server,
            "Ana is my sister",
            vec![(
                "person_relate".into(),
                json!({"person_a": "Ana", "relation": "sister of", "person_b": "me"}),
            )],
        );
        let asked = turn(
            &daemon,
            &server,
            "what do you know about me?",
            vec![
                ("person_query".into(), json!({"name": "me"})),
                ("person_network".into(), json!({"name": "me"})),
                ("person_query".into(), json!({"name": "Nobody Known"})),
            ],
        );
        let me = &asked[0];
        let facts = me["facts"].as_array().expect("facts");
        let colour = |status: &str| {
            facts
                .iter()
                .find(|f| f["predicate"] == "favourite_colour" && f["status"] == status)
                .unwrap_or_else(|| panic!("a {status} colour in {me}"))
        };
        assert_eq!(colour("current")["object"], "blue");
        assert_eq!(colour("past")["object"], "green");
        assert_eq!(colour("past")["sentence"], "my favourite colour is green");
        assert!(
            facts
                .iter()
                .any(|f| f["subject"] == "Ana" && f["predicate"] == "sister_of"),
            "{me}"
        );
        let network = asked[1].as_array().expect("links");
        assert_eq!(network.len(), 1, "{network:?}");
        assert_eq!(
            (network[0]["from"].as_str(), network[0]["relation"].as_str()),
            (Some("Ana"), Some("sister_of"))
        );
        // An unknown person is the caller's mistake, said plainly, not a failure of memory.
        let unknown = asked[2].to_string();
        assert!(unknown.contains("Nobody Known"), "{unknown}");
        assert!(unknown.contains("invalid"), "{unknown}");
        // Each turn's tools joined its scenes once its reply was recorded.
        let stats = stdout(&daemon.run(&["memory", "stats"]));
        for scene in ["tool:person_set_trait", "tool:person_relate"] {
            assert!(stats.contains(scene), "{scene} missing from {stats}");
        }
    });
}
