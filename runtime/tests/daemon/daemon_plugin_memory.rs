//! A plugin process reaches the kernel's memory, knowledge base, social graph and plugin
//! manager through its reverse calls (SPEC §6.3), under a real `hearthd`: the model first tells
//! the kernel's tools a trait, a relation, a document and a note; then the conformance
//! plugin's `call` tool asks for them by the original's method names and gets them back, a
//! purge with a criterion the kernel does not know is refused whole, and a soft purge leaves
//! the trait as past history.

use crate::daemon_plugins::{plugin_dir, sdk_binary, wait_state};
use crate::harness::{Daemon, source, stderr, tool_results, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::time::Duration;

/// One turn in which the model calls `calls` in order; the results of those calls, parsed
/// (JSON, or the error text as a string).
fn turn(daemon: &Daemon, llm: &LlmServer, text: &str, calls: Vec<(&str, Value)>) -> Vec<Value> {
    let n = calls.len();
    llm.push_for(
        text,
        Script::Tools(calls.into_iter().map(|(t, a)| (t.to_owned(), a)).collect()),
    );
    llm.push_for(text, Script::text("Done."));
    let out = daemon.run(&["send", text]);
    assert!(out.status.success(), "{text}: {}", stderr(&out));
    let tools = tool_results(llm);
    tools[tools.len() - n..].to_vec()
}

/// A daemon with keyword memory, the loopback model and the conformance plugin running.
fn start() -> (LlmServer, Daemon) {
    let llm = LlmServer::start();
    let conformance = sdk_binary("hearth-plugin-conformance");
    let toml = format!("memory_model = false\n{}", source("llm", &llm.base_url, 0));
    let daemon = Daemon::start_with(&toml, |dir| {
        plugin_dir(&dir.join("plugins"), "conformance", &conformance);
    });
    wait_state(&daemon, "conformance", "running");
    (llm, daemon)
}

/// The conformance plugin's `call` tool asking the kernel for `method` with `params`.
fn call(method: &str, params: Value) -> (&'static str, Value) {
    ("call", json!({"method": method, "params": params}))
}

#[test]
fn a_plugin_reads_and_purges_what_the_kernel_remembers_by_the_originals_methods() {
    within(Duration::from_secs(120), || {
        let (llm, daemon) = start();

        let told = turn(
            &daemon,
            &llm,
            "remember a few things",
            vec![
                (
                    "person_set_trait",
                    json!({"name": "me", "trait": "favourite colour", "value": "green",
                           "sentence": "my favourite colour is green"}),
                ),
                (
                    "person_relate",
                    json!({"person_a": "Ana", "relation": "sister of", "person_b": "me"}),
                ),
                (
                    "knowledge_create",
                    json!({"name": "recipes/bread",
                           "content": "Bread needs flour, water, salt and a sourdough starter."}),
                ),
                (
                    "doc_commit",
                    json!({"content": "The spare key is under the blue flower pot."}),
                ),
            ],
        );
        assert!(told[..3].iter().all(Value::is_object), "{told:?}");
        assert!(
            told[3].as_str().is_some_and(|t| t.starts_with("stored")),
            "{told:?}"
        );

        let got = turn(
            &daemon,
            &llm,
            "what do plugins see",
            vec![
                call(
                    "social.getTrait",
                    json!({"name": "me", "trait": "favourite colour"}),
                ),
                call("social.listPersons", json!({})),
                call("social.getRelations", json!({"name": "Ana"})),
                call("knowledge.search", json!({"query": "sourdough"})),
                call("knowledge.list", json!({})),
                call("doc.query", json!({"text": "spare key", "top_k": 2})),
                call("doc.stats", json!({})),
                call("memory.introspect", json!({})),
                call("plugin.listLoaded", json!({})),
                call("plugin.isDisabled", json!({"name": "conformance"})),
                call("plugin.reloadOne", json!({"name": "nobody"})),
                call(
                    "events.subscribe",
                    json!({"types": ["agent_output", "nonsense"]}),
                ),
                call(
                    "kernel.control",
                    json!({"request": {"op": "plugin", "action": "install", "name": "/tmp"}}),
                ),
                call(
                    "kernel.control",
                    json!({"request": {"op": "plugin", "action": "remove", "name": "conformance"}}),
                ),
            ],
        );
        let [
            trait_,
            persons,
            relations,
            search,
            list,
            docs,
            stats,
            introspect,
            loaded,
            disabled,
            unknown,
            subscribe,
            install,
            remove,
        ] = got.as_slice()
        else {
            panic!("fourteen results: {got:?}")
        };
        assert_eq!(trait_["values"][0]["object"], "green", "{trait_}");
        assert_eq!(trait_["values"][0]["status"], "current", "{trait_}");
        let names: Vec<&str> = persons["persons"]
            .as_array()
            .expect("a list")
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(names.contains(&"Ana"), "{persons}");
        assert_eq!(
            relations["relations"][0]["relation"], "sister_of",
            "{relations}"
        );
        assert!(
            search["results"]
                .as_str()
                .is_some_and(|r| r.contains("recipes/bread")),
            "{search}"
        );
        let hit = &search["hits"][0];
        assert_eq!(hit["name"], "recipes/bread", "{search}");
        assert_eq!(hit["category"], "recipes", "{search}");
        assert!(
            hit["passage"]
                .as_str()
                .is_some_and(|p| p.contains("sourdough"))
                && hit["score"].is_number(),
            "{search}"
        );
        assert_eq!(list["names"], json!(["recipes/bread"]), "{list}");
        assert!(
            docs["docs"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("blue flower pot")),
            "{docs}"
        );
        assert!(stats["entries"].as_u64().is_some_and(|n| n >= 1), "{stats}");
        assert_eq!(introspect["available"], true, "{introspect}");
        assert!(
            loaded["plugins"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["name"] == "conformance")),
            "{loaded}"
        );
        assert_eq!(disabled, &json!({"disabled": false}));
        let refused = unknown.as_str().unwrap_or_default();
        assert!(
            refused.contains("plugin.reloadOne")
                && refused.contains("\"nobody\"")
                && refused.contains("(invalid arguments)"),
            "the host's reason, naming the plugin: {unknown}"
        );
        let refused = subscribe.as_str().unwrap_or_default();
        assert!(
            refused.contains("nonsense") && refused.contains("agent_output"),
            "an unknown type is named, with the known ones: {subscribe}"
        );
        // Installing or removing code stays the local operator's, even for a plugin that may
        // manage plugins: the refusal is `denied` and names the action.
        for (action, answer) in [("plugin install", install), ("plugin remove", remove)] {
            let refused = answer.as_str().unwrap_or_default();
            assert!(
                refused.contains("not offered to plugins")
                    && refused.contains(action)
                    && refused.contains("(denied)"),
                "{action} refused as denied: {answer}"
            );
        }

        let purged = turn(
            &daemon,
            &llm,
            "forget my colour",
            vec![
                call(
                    "memory.purge",
                    json!({"criteria": {"subject_contains": "u", "predicate": "favourite_colour"}}),
                ),
                call(
                    "memory.purge",
                    json!({"criteria": {"subject": "user", "predicate": "favourite_colour"}}),
                ),
                call(
                    "social.getTrait",
                    json!({"name": "me", "trait": "favourite colour"}),
                ),
            ],
        );
        let refused = purged[0].as_str().unwrap_or_default();
        assert!(
            refused.contains("subject_contains"),
            "an unknown criterion refuses the purge: {}",
            purged[0]
        );
        assert_eq!(purged[1], json!({"purged": 1, "mode": "soft"}));
        assert_eq!(purged[2]["values"][0]["object"], "green", "{}", purged[2]);
        assert_eq!(
            purged[2]["values"][0]["status"], "past",
            "a soft purge keeps it as history: {}",
            purged[2]
        );

        let key = docs["docs"][0]["id"].as_i64().expect("the note's id");
        let wrote = turn(
            &daemon,
            &llm,
            "tidy up",
            vec![
                call("doc.remove", json!({"id": key})),
                call("doc.remove", json!({"id": key})),
                call("doc.query", json!({"text": "spare key"})),
                call(
                    "doc.insert",
                    json!({"doc": {"content": "The bins go out on Tuesday."}}),
                ),
                call(
                    "knowledge.add",
                    json!({"name": "notes/plants", "content": "Water the basil."}),
                ),
                call(
                    "knowledge.add",
                    json!({"name": "notes/plants", "content": "again"}),
                ),
                call("social.getPerson", json!({"name": "Ana"})),
                call("social.getNetwork", json!({"name": "me"})),
            ],
        );
        assert_eq!(wrote[0], json!({"removed": true}));
        assert_eq!(wrote[1], json!({"removed": false}), "gone already");
        assert!(
            wrote[2]["docs"]
                .as_array()
                .is_some_and(|d| d.iter().all(|d| d["id"] != key)),
            "{}",
            wrote[2]
        );
        assert!(
            wrote[3]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("stored")),
            "{}",
            wrote[3]
        );
        assert_eq!(wrote[4], json!({"name": "notes/plants", "replaced": false}));
        assert!(
            wrote[5]
                .as_str()
                .is_some_and(|e| e.contains("notes/plants")),
            "an existing document is not replaced unasked: {}",
            wrote[5]
        );
        assert_eq!(wrote[6]["name"], "Ana", "{}", wrote[6]);
        assert!(
            wrote[7]["links"].as_array().is_some_and(|l| !l.is_empty()),
            "{}",
            wrote[7]
        );
    });
}

/// `textmemory.append` keeps an event a plugin saw (here a message of a family chat) in
/// long-term memory under its own speaker and time: found by a search with the id the call
/// answered, forgotten by that id; a malformed event, or one that speaks as the agent, keeps
/// nothing and says why.
#[test]
fn a_plugin_keeps_an_event_it_saw_in_long_term_memory() {
    within(Duration::from_secs(120), || {
        let (llm, daemon) = start();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_millis() as i64;
        let said_at = now - 3 * 86_400_000;

        let kept = turn(
            &daemon,
            &llm,
            "log the family chat",
            vec![
                call(
                    "textmemory.append",
                    json!({"event": {"source": "Ana", "timestamp_ms": said_at,
                        "input": "The boiler was serviced on Tuesday by Mr Costa."}}),
                ),
                call(
                    "textmemory.append",
                    json!({"event": {"source": "agent", "input": "I serviced it myself."}}),
                ),
                call("textmemory.append", json!({"event": {"input": "  "}})),
                call(
                    "memory.search",
                    json!({"query": "boiler serviced Costa", "top_k": 5}),
                ),
                // The Rust SDK's typed helper, from a tool of the plugin.
                (
                    "remember",
                    json!({"input": "The gas meter reads 4711.", "source": "Ben"}),
                ),
                call("memory.search", json!({"query": "gas meter 4711"})),
            ],
        );
        let id = kept[0]["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("{}", kept[0]));
        for (refused, why) in [
            (&kept[1], "agent's own turns"),
            (&kept[2], "must not be blank"),
        ] {
            let text = refused.as_str().unwrap_or_default();
            assert!(
                text.contains(why) && text.contains("(invalid arguments)"),
                "{refused}"
            );
        }
        let helper = kept[4]["id"]
            .as_i64()
            .unwrap_or_else(|| panic!("{}", kept[4]));
        assert_eq!(kept[5]["items"][0]["id"], helper, "{}", kept[5]);
        let items = kept[3]["items"].as_array().expect("items");
        assert_eq!(items.len(), 1, "only the kept event: {}", kept[3]);
        assert_eq!(items[0]["id"], id, "{}", kept[3]);
        assert_eq!(items[0]["at_ms"], said_at, "its own time: {}", kept[3]);
        assert!(
            items[0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("Mr Costa")),
            "{}",
            kept[3]
        );

        let forgot = turn(
            &daemon,
            &llm,
            "forget the boiler",
            vec![
                call("memory.forget", json!({"id": id, "reason": "asked"})),
                call("memory.search", json!({"query": "boiler serviced Costa"})),
            ],
        );
        assert_eq!(forgot[0]["forgotten"], true, "{}", forgot[0]);
        assert_eq!(forgot[1]["items"], json!([]), "{}", forgot[1]);
    });
}

/// The original's `memory.commit {triples}` tells the graph facts directly, each through the
/// model's own `memory_commit` (a predicate it refuses is reported in that triple's place);
/// a malformed list stores nothing; the original's `memory.recall {query: [names], depth}`
/// gets them back as relations.
#[test]
fn a_plugin_tells_the_graph_facts_as_triples() {
    within(Duration::from_secs(120), || {
        let (llm, daemon) = start();
        let told = turn(
            &daemon,
            &llm,
            "tell the graph",
            vec![
                call(
                    "memory.commit",
                    json!({"triples": [
                        {"subject": "Ana", "predicate": "lives_in", "object": "Braga",
                         "sentence": "Ana lives in Braga."},
                        ["Ana", "Works At!", "Acme"],
                    ]}),
                ),
                call(
                    "memory.commit",
                    json!({"triples": [["Ben", "lives_in", "Faro"], ["Ben", "likes"]]}),
                ),
            ],
        );
        assert_eq!(told[0]["committed"], 1, "{}", told[0]);
        let results = told[0]["results"].as_array().expect("results");
        assert!(
            results[0]["inserted"]
                .as_array()
                .is_some_and(|ids| ids.len() == 1),
            "{}",
            told[0]
        );
        assert!(
            results[1]["error"]
                .as_str()
                .is_some_and(|e| e.contains("Works At!")),
            "the refused predicate is reported in its place: {}",
            told[0]
        );
        let refused = told[1].as_str().unwrap_or_default();
        assert!(
            refused.contains("triples[1]") && refused.contains("(invalid arguments)"),
            "{}",
            told[1]
        );
        let search = |what: &str| {
            let out = daemon.run(&["memory", "search", what]);
            assert!(out.status.success(), "{}", stderr(&out));
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        assert!(search("Braga").contains("Braga"));
        assert!(
            !search("Faro").contains("Faro"),
            "nothing of the refused list is stored"
        );

        // The original's recall shape: a list of names and a depth; the graph's facts come
        // back as relations, with the names they are about, beside the memories' text.
        let recalled = turn(
            &daemon,
            &llm,
            "what do you know of Ana",
            vec![call("memory.recall", json!({"query": ["Ana"], "depth": 2}))],
        );
        let recalled = &recalled[0];
        assert!(recalled["text"].is_string(), "{recalled}");
        let relations = recalled["relations"].as_array().expect("relations");
        assert!(
            relations.iter().any(|r| r["subject"] == "Ana"
                && r["object"] == "Braga"
                && r["status"] == "current"),
            "{recalled}"
        );
        let entities = recalled["entities"].as_array().expect("entities");
        assert!(
            entities.contains(&json!("Ana")) && entities.contains(&json!("Braga")),
            "{recalled}"
        );
    });
}
