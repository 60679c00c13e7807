//! The graph memory in a running daemon: a move told in conversation is pruned to cold
//! context, distilled by the heartbeat, found by `hearth memory search` with Lisbon current and
//! Porto past, explained by `why`, forgotten by id for good, and injected into later prompts.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::LlmServer;
use serde_json::Value;
use std::time::{Duration, Instant};

const FILLER: [&str; 4] = [
    "What is a good recipe for tomato soup?",
    "How do I fix a squeaky door hinge?",
    "番茄炒蛋怎么做？",
    "推荐一本科幻小说。",
];

/// A small window so a few turns prune, and a heartbeat of a second.
fn config(base_url: &str) -> String {
    format!(
        "memory_model = false\ngraph_heartbeat_secs = 1\n{}\n[agent]\nmax_context_size = 6\n",
        source("remote", base_url, 0)
    )
}

fn send(daemon: &Daemon, text: &str) {
    let out = daemon.run(&["send", text]);
    assert!(out.status.success(), "{text}: {}", stderr(&out));
}

/// Unrelated turns, each different (the daemon skips a duplicate input).
fn fill(daemon: &Daemon, turns: usize) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    for _ in 0..turns {
        let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        send(daemon, &format!("{} ({i})", FILLER[i % FILLER.len()]));
    }
}

/// `hearth memory search` as the socket answers it (the JSON, through the raw request).
fn search(daemon: &Daemon, query: &str) -> Vec<Value> {
    let mut raw = crate::raw::Raw::connect(&daemon.socket);
    raw.send(&serde_json::json!({"op": "memory", "action": "search", "arg": query}).to_string());
    let answer = raw.line();
    assert_eq!(answer["type"], "memory", "{answer}");
    answer["memory"].as_array().cloned().unwrap_or_default()
}

/// Waits for the heartbeat to have distilled both values.
fn until_both(daemon: &Daemon, query: &str, old: &str, new: &str) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let hits = search(daemon, query);
        let has = |o: &str| hits.iter().any(|h| h["object"] == o);
        if has(old) && has(new) {
            return hits;
        }
        assert!(
            Instant::now() < deadline,
            "not distilled in time: {hits:#?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn hit<'a>(hits: &'a [Value], object: &str) -> &'a Value {
    hits.iter()
        .find(|h| h["object"] == object)
        .expect("present")
}

fn moved(says: [&str; 2], query: &str, old: &str, new: &str) {
    let server = LlmServer::start();
    let daemon = Daemon::start(&config(&server.base_url));
    send(&daemon, says[0]);
    fill(&daemon, 8);
    send(&daemon, says[1]);
    fill(&daemon, 8);
    let hits = until_both(&daemon, query, old, new);
    let (now, before) = (hit(&hits, new), hit(&hits, old));
    assert_eq!(
        (&now["status"], &before["status"]),
        (&"current".into(), &"past".into())
    );
    assert!(says[1].contains(now["sentence"].as_str().unwrap()), "{now}");
    assert!(
        says[0].contains(before["sentence"].as_str().unwrap()),
        "{before}"
    );

    // The CLI: why, then forget by id.
    let old_id = before["id"].as_str().unwrap().to_string();
    let why = daemon.run(&["memory", "why", &old_id]);
    assert!(why.status.success(), "{}", stderr(&why));
    assert!(
        stdout(&why).contains(says[0].trim_end_matches(['.', '。'])),
        "{}",
        stdout(&why)
    );
    let gone = daemon.run(&["memory", "forget", &old_id]);
    assert!(gone.status.success(), "{}", stderr(&gone));
    assert!(
        stdout(&gone).contains(&format!("forgot {old_id}")),
        "{}",
        stdout(&gone)
    );
    assert!(
        stdout(&gone).contains(old),
        "says what it removed: {}",
        stdout(&gone)
    );

    // More turns, more heartbeats: the forgotten value does not come back.
    fill(&daemon, 4);
    std::thread::sleep(Duration::from_millis(2_500));
    let after = search(&daemon, query);
    assert!(after.iter().all(|h| h["object"] != old), "{after:#?}");
    assert!(after.iter().any(|h| h["object"] == new), "{after:#?}");
    let again = daemon.run(&["memory", "forget", &old_id]);
    assert!(!again.status.success(), "a second forget is an error");

    // The indexer: the next prompt carries the fact block, counted in the memory budget.
    send(&daemon, query);
    let seen = server.seen();
    let last = &seen.last().expect("requests").body;
    let system: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        system
            .iter()
            .any(|t| t.contains("Known facts (from memory):") && t.contains(new)),
        "{system:#?}"
    );
    let tools: Vec<&str> = last["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    for tool in [
        "memory_recall",
        "memory_forget",
        "memory_why",
        "memory_introspect",
    ] {
        assert!(tools.contains(&tool), "{tool} offered: {tools:?}");
    }
}

#[test]
fn a_move_in_english_is_distilled_recalled_and_forgotten_for_good() {
    within(Duration::from_secs(120), || {
        moved(
            ["I live in Porto.", "I moved to Lisbon."],
            "where do I live",
            "Porto",
            "Lisbon",
        );
    });
}

#[test]
fn a_move_in_chinese_is_distilled_recalled_and_forgotten_for_good() {
    within(Duration::from_secs(120), || {
        moved(
            ["我住在波尔图。", "我搬到了里斯本。"],
            "我住在哪里？",
            "波尔图",
            "里斯本",
        );
    });
}

#[test]
fn a_foreign_graph_file_leaves_the_daemon_running_without_it() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start_with(&config(&server.base_url), |dir| {
            std::fs::write(dir.join("graph.db"), b"someone else's file").expect("write");
        });
        send(&daemon, "hello");
        let stats = daemon.run(&["memory", "stats"]);
        assert!(stats.status.success(), "{}", stderr(&stats));
        assert!(
            stdout(&stats).contains("\"available\": false"),
            "{}",
            stdout(&stats)
        );
        let search = daemon.run(&["memory", "search", "anything"]);
        assert!(!search.status.success());
        assert!(
            stderr(&search).contains("graph memory unavailable"),
            "{}",
            stderr(&search)
        );
        assert_eq!(
            std::fs::read(daemon.dir.join("graph.db")).unwrap(),
            b"someone else's file"
        );
    });
}
