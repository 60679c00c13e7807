//! The graph memory in a running daemon: a move told in conversation is pruned to cold
//! context, distilled by the heartbeat, found by `hearth memory search` with Lisbon current and
//! Porto past, explained by `why`, forgotten by id for good, and injected into later prompts.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::Value;
use std::time::{Duration, Instant};

const FILLER: [&str; 4] = [
    "What is a good recipe for tomato soup?",
    "How do I fix a squeaky door hinge?",
    "番茄炒蛋怎么做？",
    "推荐一本科幻小说。",
];

/// A small window so a few turns prune, and a heartbeat of a second.
pub(crate) fn config(base_url: &str) -> String {
    format!(
        "memory_model = false\ngraph_heartbeat_secs = 1\n{}\n[agent]\nmax_context_size = 6\n",
        source("remote", base_url, 0)
    )
}

pub(crate) fn send(daemon: &Daemon, text: &str) {
    let out = daemon.run(&["send", text]);
    assert!(out.status.success(), "{text}: {}", stderr(&out));
}

/// Unrelated turns, each different (the daemon skips a duplicate input).
pub(crate) fn fill(daemon: &Daemon, turns: usize) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    for _ in 0..turns {
        let i = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        send(daemon, &format!("{} ({i})", FILLER[i % FILLER.len()]));
    }
}

/// `hearth memory search` as the socket answers it (the JSON, through the raw request).
pub(crate) fn search(daemon: &Daemon, query: &str) -> Vec<Value> {
    let mut raw = crate::raw::Raw::connect(&daemon.socket);
    raw.send(&serde_json::json!({"op": "memory", "action": "search", "arg": query}).to_string());
    let answer = raw.line();
    assert_eq!(answer["type"], "memory", "{answer}");
    answer["memory"].as_array().cloned().unwrap_or_default()
}

/// Waits for the heartbeat to have distilled both values.
pub(crate) fn until_both(daemon: &Daemon, query: &str, old: &str, new: &str) -> Vec<Value> {
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

/// Rows of `memory.db` (window, cold context, journal) whose words hold `words`.
pub(crate) fn rows_saying(daemon: &Daemon, words: &str) -> i64 {
    let db = rusqlite::Connection::open_with_flags(
        daemon.dir.join("memory.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("memory.db");
    db.query_row(
        "SELECT (SELECT count(*) FROM cold WHERE instr(event, ?1) OR instr(text, ?1)) \
         + (SELECT count(*) FROM events WHERE instr(input, ?1) OR instr(response, ?1)) \
         + (SELECT count(*) FROM journal WHERE instr(payload, ?1) OR instr(reply, ?1))",
        [words],
        |r| r.get(0),
    )
    .expect("count")
}

/// Whether `memory.db` or its log holds `words` anywhere in their bytes (ASCII compared
/// without case, as the keyword index folds it).
fn store_bytes_hold(daemon: &Daemon, words: &str) -> bool {
    let needle = words.to_lowercase().into_bytes();
    ["memory.db", "memory.db-wal"].iter().any(|file| {
        std::fs::read(daemon.dir.join(file)).is_ok_and(|bytes| {
            bytes
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(&needle))
        })
    })
}

/// Waits until neither the rows of `memory.db` nor the bytes of its files hold `words` (the
/// log is truncated at the next idle moment after a forget).
pub(crate) fn until_gone_from_bytes(daemon: &Daemon, words: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while store_bytes_hold(daemon, words) {
        assert!(
            Instant::now() < deadline,
            "{words} still in the bytes of memory.db or its log ({} rows hold it)",
            rows_saying(daemon, words)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn hit<'a>(hits: &'a [Value], object: &str) -> &'a Value {
    hits.iter()
        .find(|h| h["object"] == object)
        .expect("present")
}

/// `says[0]` is answered by `echo`, a reply that repeats the old value in its own words.
fn moved(says: [&str; 2], echo: &str, query: &str, old: &str, new: &str) {
    let server = LlmServer::start();
    let daemon = Daemon::start(&config(&server.base_url));
    server.push(Script::text(echo));
    send(&daemon, says[0]);
    assert!(rows_saying(&daemon, echo) > 0, "the reply is remembered");
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
    let show = daemon.run(&["memory", "show", &old_id]);
    assert!(
        stdout(&show).contains(&format!("{old_id} user lives_in {old} (past)")),
        "{}",
        stdout(&show)
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
    // The sentence it came from is gone from every row the store keeps of its turn, so recall
    // cannot bring it back; the sentence of the current value stays.
    assert!(
        stdout(&gone).contains("its words taken out of 2 remembered turns"),
        "the input archived alone, then with its reply: {}",
        stdout(&gone)
    );
    let said_before = says[0].trim_end_matches(['.', '。']);
    let said_after = says[1].trim_end_matches(['.', '。']);
    assert_eq!(rows_saying(&daemon, said_before), 0);
    assert!(rows_saying(&daemon, said_after) > 0);
    // Nor is the value the reply repeated, nor is either left in the files' bytes (freed
    // space, the keyword index, the log) once the next idle moment has truncated the log.
    assert_eq!(rows_saying(&daemon, old), 0, "the reply's echo went too");
    until_gone_from_bytes(&daemon, old);

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
    assert!(
        !last["messages"].to_string().contains(said_before),
        "neither the graph nor cold recall brings the forgotten sentence back"
    );
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
    // Every schema together takes less than a quarter of this model's working band, so the
    // whole set goes with each request (the same on every turn, which keeps a local server's
    // prompt cache): the graph tools are there without `tool_search` to find them.
    for tool in ["memory_recall", "person_query", "memory_forget"] {
        assert!(tools.contains(&tool), "{tool} offered: {tools:?}");
    }
    assert!(
        !tools.contains(&"tool_search"),
        "no search while the whole set is offered: {tools:?}"
    );
}

#[test]
fn a_move_in_english_is_distilled_recalled_and_forgotten_for_good() {
    within(Duration::from_secs(120), || {
        moved(
            ["I live in Porto.", "I moved to Lisbon."],
            "Lovely, porto is a great city to live in!",
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
            "波尔图是个好地方！",
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

/// Every relation as (subject, predicate, object, state, provenance rows), sorted: what two
/// graphs distilled from the same items must agree on, whatever their clocks.
fn facts(path: &std::path::Path) -> Vec<(String, String, String, String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("graph opens");
    let mut stmt = conn
        .prepare(
            "SELECT e1.name, r.predicate, e2.name, \
             CASE WHEN r.superseded_ms IS NOT NULL THEN 'superseded' \
                  WHEN r.valid_to_ms IS NOT NULL THEN 'past' ELSE 'current' END, \
             (SELECT count(*) FROM provenance p WHERE p.relation_id = r.id) \
             FROM relations r JOIN entities e1 ON e1.id = r.subject_id \
             JOIN entities e2 ON e2.id = r.object_id",
        )
        .expect("query");
    let mut rows: Vec<_> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("read");
    rows.sort();
    rows
}

const HOBBIES: [&str; 12] = [
    "chess",
    "hiking",
    "jazz",
    "pottery",
    "sailing",
    "tennis",
    "cycling",
    "baking",
    "knitting",
    "fishing",
    "gardening",
    "painting",
];

#[test]
fn sigkill_during_distillation_loses_and_duplicates_nothing() {
    within(Duration::from_secs(180), || {
        let server = LlmServer::start();
        let toml = config(&server.base_url);
        let daemon = Daemon::start(&toml);
        for (i, hobby) in HOBBIES.iter().enumerate() {
            send(&daemon, &format!("I like {hobby}."));
            if i == 5 {
                send(&daemon, "I live in Porto.");
            }
        }
        send(&daemon, "I moved to Lisbon.");
        fill(&daemon, 6);
        // The heartbeat ticks every second and commits item by item: a kill at a moment taken
        // from the clock lands before, inside or between its transactions.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        std::thread::sleep(Duration::from_millis(u64::from(nanos % 1_500)));
        let dir = daemon.dir.clone();
        daemon.kill9();
        let daemon = Daemon::restart(&dir, &toml);

        // After the restart the heartbeat finishes every archived item.
        let store = hearth_memory::StoreReader::open(dir.join("memory.db")).expect("store");
        let ids = store.cold_ids_after(0, 10_000).expect("cold ids");
        assert!(
            ids.len() > HOBBIES.len(),
            "the facts were archived: {}",
            ids.len()
        );
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = daemon.run(&["memory", "stats"]);
            let stats: Value = serde_json::from_str(&stdout(&out)).expect("stats JSON");
            let seen = stats["items_done"].as_u64().unwrap_or(0)
                + stats["items_waiting"].as_u64().unwrap_or(0);
            if stats["cursor"].as_i64() >= ids.last().copied() && seen >= ids.len() as u64 {
                break;
            }
            assert!(Instant::now() < deadline, "not all distilled: {stats}");
            std::thread::sleep(Duration::from_millis(300));
        }

        // The same items distilled in one uninterrupted run give the same graph.
        let items: Vec<hearth_graph::ColdItem> = ids
            .iter()
            .map(|id| hearth_graph::ColdItem::from(&store.cold_get(*id).unwrap().unwrap()))
            .collect();
        let reference = dir.join("reference-graph.db");
        let mut graph = hearth_graph::GraphStore::open(&reference).expect("reference graph");
        graph.distill_items(&items).expect("distilled");
        drop(graph);
        let got = facts(&dir.join("graph.db"));
        assert_eq!(got, facts(&reference));
        assert!(
            got.iter().any(|f| f.2 == "Lisbon" && f.3 == "current")
                && got.iter().any(|f| f.2 == "Porto" && f.3 == "past"),
            "{got:#?}"
        );
        assert_eq!(
            got.iter().filter(|f| f.1 == "likes").count(),
            HOBBIES.len(),
            "{got:#?}"
        );
    });
}

/// One input from `source` through the socket, waited for to its reply.
pub(crate) fn send_from(daemon: &Daemon, source: &str, text: &str) {
    let mut raw = crate::raw::Raw::connect(&daemon.socket);
    raw.send(&serde_json::json!({"op": "send", "text": text, "source": source}).to_string());
    let seen = raw.until_terminal();
    let last = seen.last().expect("a terminal line");
    assert!(last["error"] != true, "{text}: {last}");
}

/// The system messages of the last request the model got.
pub(crate) fn last_system(server: &LlmServer) -> String {
    let seen = server.seen();
    let last = &seen.last().expect("requests").body;
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A fact told on one channel is tagged with that channel's scene when the heartbeat distills
/// the turn, long after it happened: a later turn on the same channel is shown it even when it
/// shares no word with it, a turn on another channel is not.
#[test]
fn a_fact_told_on_a_channel_is_shown_on_that_channel_only() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        send_from(&daemon, "telegram", "I live in Porto.");
        fill(&daemon, 8);
        until_both(&daemon, "where do I live", "Porto", "Porto");
        let unrelated = "any news about the weather tomorrow";
        send_from(&daemon, "telegram", unrelated);
        let here = last_system(&server);
        assert!(
            here.contains("Known facts of this scene (from memory):")
                && here.contains("lives_in Porto"),
            "{here}"
        );
        send_from(&daemon, "web", unrelated);
        let elsewhere = last_system(&server);
        assert!(!elsewhere.contains("lives_in Porto"), "{elsewhere}");
        let stats = daemon.run(&["memory", "stats"]);
        assert!(
            stdout(&stats).contains("chan:telegram"),
            "{}",
            stdout(&stats)
        );
    });
}
