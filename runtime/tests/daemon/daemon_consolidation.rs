//! The model distiller in a running daemon: a turn pruned to cold context is put to the model
//! as a `_consolidation_` task of its own — no tools, no conversation in its prompt, no reply to
//! anyone, nothing added to the window — and the grounded claims of its answer become facts
//! whose source is the turn.

use crate::daemon_graph::search;
use crate::harness::{Daemon, source, stderr, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::{Duration, Instant};

const SAID: &str = "Ana started working at the bakery on Rua Nova.";

fn send(daemon: &Daemon, text: &str) {
    let out = daemon.run(&["send", text]);
    assert!(out.status.success(), "{text}: {}", stderr(&out));
}

#[test]
fn a_cold_turn_is_distilled_by_the_model_in_a_consolidation_task_of_its_own() {
    within(Duration::from_secs(90), || {
        let server = LlmServer::start();
        // The consolidation prompt numbers its items: this answers it, whenever it comes.
        server.push_for(
            "Memory consolidation task",
            Script::text("Here you go:\n1 | Ana | works_at | the bakery\n1 | Ana | likes | jazz\n"),
        );
        let daemon = Daemon::start(&format!(
            "memory_model = false\ngraph_heartbeat_secs = 1\ngraph_model_secs = 1\n\
             graph_model_idle_secs = 0\n{}\n[agent]\nmax_context_size = 6\n",
            source("remote", &server.base_url, 0)
        ));
        send(&daemon, SAID);
        for i in 0..8 {
            send(
                &daemon,
                &format!("How do I fix a squeaky door hinge? ({i})"),
            );
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        let bakery = loop {
            let hits = search(&daemon, "where does Ana work");
            if let Some(h) = hits.iter().find(|h| h["object"] == "the bakery") {
                break h.clone();
            }
            assert!(Instant::now() < deadline, "not distilled: {hits:#?}");
            std::thread::sleep(Duration::from_millis(200));
        };
        assert_eq!(bakery["status"], "current");
        assert_eq!(bakery["sentence"], SAID);
        let hits = search(&daemon, "what does Ana like");
        assert!(
            hits.iter().all(|h| h["object"] != "jazz"),
            "invented: {hits:#?}"
        );

        let seen = server.seen();
        let task: Vec<_> = seen
            .iter()
            .filter(|s| s.body.to_string().contains("Memory consolidation task"))
            .collect();
        assert_eq!(task.len(), 1, "one task for the cold items");
        let body = &task[0].body;
        assert!(
            body["tools"].as_array().is_none_or(Vec::is_empty),
            "no tools offered: {body}"
        );
        let prompt = body.to_string();
        assert!(prompt.contains(SAID), "{prompt}");
        // The system prompt and the task: no timeline of the conversation, no recalled block.
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m["role"].as_str())
            .collect();
        assert_eq!(roles, ["system", "user"], "{body}");
        // Nothing of the task entered the window: the next turn's prompt does not carry it.
        send(&daemon, "thanks");
        let last = server.seen().last().expect("a request").body.to_string();
        assert!(!last.contains("Memory consolidation task"), "{last}");
        assert!(!last.contains("1 | Ana | works_at"), "{last}");
    });
}
