//! The journal keeps answered entries for `journal_keep_days`, and each channel's newest 100
//! whatever their age: a daemon that runs for months does not keep every input and reply twice.

use crate::harness::{Daemon, source, stderr, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::json;
use std::time::{Duration, Instant};

/// Request ids of `source`'s journal entries, oldest first.
fn journal(daemon: &Daemon, source: &str) -> Vec<String> {
    let store = hearth_memory::StoreReader::open(daemon.dir.join("memory.db")).expect("store");
    store
        .journal_recent(source, 1_000)
        .expect("journal")
        .into_iter()
        .map(|e| e.request_id)
        .collect()
}

#[test]
fn answered_entries_past_their_keep_go_and_each_channel_keeps_its_newest() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let day = 86_400_000;
        let now = hearth_engine::now_ms();
        let toml = format!(
            "memory_model = false\njournal_keep_days = 30\n{}",
            source("remote", &server.base_url, 0)
        );
        // 150 web turns and 3 cli turns answered 40 days ago, 5 web turns answered yesterday.
        let daemon = Daemon::start_with(&toml, |dir| {
            let mut store = hearth_memory::Store::open(dir.join("memory.db")).expect("store");
            let mut turn = |id: String, source: &str, at: i64| {
                store
                    .journal_accept(&id, source, "input", &json!({"content": id}), at)
                    .expect("accept");
                store
                    .journal_reply(&id, &json!({"content": "ok"}), at)
                    .expect("reply");
            };
            for i in 0..150 {
                turn(format!("old-web-{i}"), "web", now - 40 * day + i);
            }
            for i in 0..3 {
                turn(format!("old-cli-{i}"), "cli", now - 40 * day + i);
            }
            for i in 0..5 {
                turn(format!("new-web-{i}"), "web", now - day + i);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        while journal(&daemon, "web").len() > 100 {
            assert!(Instant::now() < deadline, "the journal was not trimmed");
            std::thread::sleep(Duration::from_millis(100));
        }
        let web = journal(&daemon, "web");
        assert_eq!(web.len(), 100, "the newest 100 of the channel stay");
        assert_eq!(web[0], "old-web-55");
        assert_eq!(web[99], "new-web-4");
        assert_eq!(
            journal(&daemon, "cli"),
            ["old-cli-0", "old-cli-1", "old-cli-2"],
            "a channel's few old entries are its history"
        );
        // A turn now is journaled, answered and kept.
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(journal(&daemon, "cli").len(), 4);
    });
}
