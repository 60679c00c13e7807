//! The knowledge base in a running daemon: the model writes a document, the user edits it by
//! hand on disk, and the model's next search finds the user's words, not the old ones; list,
//! read and delete answer as documented, and a caller's mistake is `invalid_arguments`.

use crate::harness::{Daemon, source, tool_turn as turn, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::json;
use std::time::Duration;

#[test]
fn documents_are_written_edited_by_hand_searched_and_deleted() {
    within(Duration::from_secs(90), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}",
            source("remote", &server.base_url, 0)
        ));
        let created = turn(
            &daemon,
            &server,
            "note my bread recipe",
            vec![(
                "knowledge_create",
                json!({"name": "recipes/bread", "content": "Sourdough: flour, water, salt, a starter."}),
            )],
        );
        assert!(created[0].contains("\"replaced\":false"), "{created:?}");
        let file = daemon.dir.join("knowledge/recipes/bread/content.md");
        assert_eq!(
            std::fs::read_to_string(&file).expect("the document is a file"),
            "Sourdough: flour, water, salt, a starter."
        );

        // The user edits it in their editor while the daemon runs.
        std::fs::write(&file, "Rye bread: rye flour, caraway, a long proof.").unwrap();
        std::fs::create_dir_all(daemon.dir.join("knowledge/travel")).unwrap();
        std::fs::write(
            daemon.dir.join("knowledge/travel/content.md"),
            "我喜欢去杭州看西湖。",
        )
        .unwrap();
        let found = turn(
            &daemon,
            &server,
            "what bread do I bake?",
            vec![
                ("knowledge_search", json!({"query": "caraway"})),
                ("knowledge_search", json!({"query": "sourdough starter"})),
                ("knowledge_search", json!({"query": "西湖"})),
                ("knowledge_list", json!({})),
                ("knowledge_read", json!({"name": "recipes/bread"})),
            ],
        );
        assert!(
            found[0].starts_with("[recipes/bread]\n") && found[0].contains("caraway"),
            "{found:?}"
        );
        assert_eq!(found[1], "No document matches.", "the old words are gone");
        assert!(found[2].starts_with("[travel]\n"), "{found:?}");
        assert!(
            found[3].contains("recipes/\\n  bread\\ntravel"),
            "{}",
            found[3]
        );
        assert!(found[4].contains("Rye bread"), "{}", found[4]);

        let mistakes = turn(
            &daemon,
            &server,
            "tidy up",
            vec![
                ("knowledge_delete", json!({"name": "recipes/bread"})),
                ("knowledge_delete", json!({"name": "recipes/bread"})),
                (
                    "knowledge_create",
                    json!({"name": "../escape", "content": "x"}),
                ),
                (
                    "knowledge_create",
                    json!({"name": "travel", "content": "overwrite?"}),
                ),
            ],
        );
        assert!(mistakes[0].contains("\"deleted\""), "{mistakes:?}");
        for refused in &mistakes[1..] {
            assert!(refused.contains("invalid"), "{refused}");
        }
        assert!(!file.exists(), "deleted from disk");
        assert!(!daemon.dir.join("escape").exists());
        assert_eq!(
            std::fs::read_to_string(daemon.dir.join("knowledge/travel/content.md")).unwrap(),
            "我喜欢去杭州看西湖。",
            "not overwritten without replace"
        );
    });
}
