//! The memory browser's "what was recalled for a turn, and why": the kernel's memory pass
//! records the cold items it injected (id, scores, time) in the turn's frame, the reply
//! journals them, and the page reads them back through `io.history` — for any past turn, across
//! a daemon restart, and exactly what the model was shown.

use crate::daemon_web::{Http, chat, config, events, login, start};
use crate::harness::{Daemon, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const NOTE: &str = "the blue teapot is in the attic";

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

fn history(http: &Http, cookie: &str) -> Vec<Value> {
    let h = http.request("GET", "/api/history", &[("Cookie", cookie)], "");
    assert_eq!(h.status, 200, "{}", h.body);
    h.json()["turns"].as_array().cloned().expect("turns")
}

fn turn<'a>(turns: &'a [Value], id: &str) -> &'a Value {
    turns
        .iter()
        .find(|t| t["request_id"] == id)
        .unwrap_or_else(|| panic!("turn {id} in {turns:?}"))
}

#[test]
fn each_turn_keeps_what_recall_injected_with_ids_scores_and_times_across_a_restart() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        server.push(Script::Tools(vec![(
            "doc_commit".into(),
            json!({"content": NOTE, "summary": "teapot"}),
        )]));
        server.push(Script::text("noted"));
        server.push(Script::text("in the attic"));
        let before = now_ms();
        let (daemon, http) = start(&server);
        let (cookie, csrf) = login(&http);
        let first = chat(&http, &cookie, &csrf, "remember where the teapot is");
        events(&http, &cookie, &first, None);
        let second = chat(&http, &cookie, &csrf, "where is the blue teapot?");
        let streamed = events(&http, &cookie, &second, None);
        assert_eq!(streamed.last().unwrap().2["content"], "in the attic");

        let found = http.request(
            "GET",
            "/api/memory?q=blue%20teapot",
            &[("Cookie", &cookie)],
            "",
        );
        assert_eq!(found.status, 200, "{}", found.body);
        let hit = found.json()["items"][0].clone();
        let note_id = hit["id"].as_i64().expect("the note's id");
        // Found by meaning and by keyword, with its time.
        assert!(hit["cosine"].as_f64().unwrap() > 0.0, "{hit}");
        assert!(hit["keyword"].as_f64().is_some(), "{hit}");
        assert!(hit["at_ms"].as_i64().unwrap() >= before, "{hit}");

        let check = |turns: &[Value]| {
            // Nothing was in cold context before the note: the first turn recalled nothing.
            assert!(
                turn(turns, &first)["recalled"]
                    .as_array()
                    .is_none_or(Vec::is_empty),
                "{turns:?}"
            );
            let recalled = turn(turns, &second)["recalled"]
                .as_array()
                .cloned()
                .unwrap_or_else(|| panic!("the second turn's recall: {turns:?}"));
            assert_eq!(recalled.len(), 1, "{recalled:?}");
            let item = &recalled[0];
            assert_eq!(item["id"].as_i64(), Some(note_id), "{item}");
            // The entry is searched by its summary.
            assert_eq!(item["text"], "teapot", "{item}");
            assert!(item["score"].as_f64().unwrap() > 0.0, "{item}");
            // Why: it matched by meaning and by its keyword.
            assert!(item["cosine"].as_f64().unwrap() > 0.0, "{item}");
            assert!(item["keyword"].as_f64().is_some(), "{item}");
            let at = item["at_ms"].as_i64().unwrap();
            assert!(at >= before && at <= now_ms(), "{item}");
        };
        check(&history(&http, &cookie));

        // What the record names is what the model was shown for that turn.
        let asked = server.seen();
        let recall_block = |i: usize| -> Option<String> {
            asked[i].body["messages"]
                .as_array()?
                .iter()
                .filter_map(|m| m["content"].as_str())
                .find(|c| {
                    c.starts_with(hearth_memory::INJECT_HEADER)
                        || c.starts_with(hearth_kernel::turn::texts::MEMORY_HEADER_EN)
                })
                .map(str::to_owned)
        };
        let shown = recall_block(2).expect("the second turn's prompt has a recall block");
        assert!(shown.contains(NOTE), "{shown}");
        assert_eq!(
            recall_block(0),
            None,
            "the first turn's prompt had no recall"
        );

        // From the journal: the same after the daemon is killed and restarted.
        let dir = daemon.dir.clone();
        let port = http.port;
        daemon.kill9();
        let _daemon = Daemon::restart(&dir, &config(&server));
        let http = Http { port };
        http.wait_up();
        let (cookie, csrf) = login(&http);
        check(&history(&http, &cookie));

        // The journal keeps the record by id: the text is cold context's, so forgetting the
        // note leaves the turn's record naming a forgotten memory.
        let forgot = http.request(
            "POST",
            &format!("/api/memory/{note_id}/forget"),
            &[("Cookie", &cookie), ("X-CSRF-Token", &csrf)],
            "",
        );
        assert_eq!(forgot.status, 200, "{}", forgot.body);
        let turns = history(&http, &cookie);
        let item = turn(&turns, &second)["recalled"][0].clone();
        assert_eq!(item["id"].as_i64(), Some(note_id), "{item}");
        assert_eq!(item["forgotten"], true, "{item}");
        assert_eq!(item["text"], "", "{item}");
        // The journal row itself holds no copy of the recalled words.
        let conn = rusqlite::Connection::open_with_flags(
            dir.join("memory.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("store");
        let replies: Vec<String> = conn
            .prepare("SELECT reply FROM journal WHERE reply IS NOT NULL")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .expect("journal");
        assert!(
            replies.iter().any(|r| r.contains("\"recalled\"")),
            "{replies:?}"
        );
        assert!(
            replies.iter().all(|r| !r.contains("\"text\"")),
            "journaled records carry no text: {replies:?}"
        );
    });
}

/// The memory browser finds a turn said a moment ago — still in the working window, not yet
/// archived — as `w<n>`, and its forget button takes it back whole; a malformed id is refused.
#[test]
fn the_memory_browser_lists_a_turn_just_said_and_forgets_it() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        server.push(Script::text("Noted, 3141."));
        let (daemon, http) = start(&server);
        let (cookie, csrf) = login(&http);
        let said = chat(&http, &cookie, &csrf, "my garage code is 3141");
        events(&http, &cookie, &said, None);

        let found = http.request(
            "GET",
            "/api/memory?q=garage%20code",
            &[("Cookie", &cookie)],
            "",
        );
        assert_eq!(found.status, 200, "{}", found.body);
        let recent = found.json()["recent"].clone();
        let hit = recent
            .as_array()
            .and_then(|r| {
                r.iter()
                    .find(|i| i["text"].as_str().is_some_and(|t| t.contains("3141")))
            })
            .unwrap_or_else(|| panic!("the turn is listed as recent: {recent}"))
            .clone();
        let id = hit["id"].as_str().expect("a name").to_owned();
        assert!(id.starts_with('w'), "{hit}");

        let post = |path: &str| {
            http.request(
                "POST",
                path,
                &[("Cookie", &cookie), ("X-CSRF-Token", &csrf)],
                "",
            )
        };
        assert_eq!(post("/api/memory/x12/forget").status, 400);
        // Well formed for the page, refused by the kernel (no entry is numbered 0): still the
        // client's request to fix, not a failing gateway.
        let zero = post("/api/memory/w0/forget");
        assert_eq!(zero.status, 400, "{}", zero.body);
        let forgot = post(&format!("/api/memory/{id}/forget"));
        assert_eq!(forgot.status, 200, "{}", forgot.body);
        let again = http.request(
            "GET",
            "/api/memory?q=garage%20code",
            &[("Cookie", &cookie)],
            "",
        );
        assert!(!again.body.contains("3141"), "{}", again.body);
        assert_eq!(post(&format!("/api/memory/{id}/forget")).status, 404);
        let conn = rusqlite::Connection::open_with_flags(
            daemon.dir.join("memory.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("store");
        let left: i64 = conn
            .query_row(
                "SELECT (SELECT count(*) FROM events WHERE instr(input, '3141')) \
                 + (SELECT count(*) FROM journal WHERE instr(payload, '3141') OR instr(reply, '3141'))",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(left, 0);
        let audit = std::fs::read_to_string(daemon.dir.join("audit.jsonl")).expect("audit");
        assert!(audit.contains(&format!("\"id\":\"{id}\"")), "{audit}");
    });
}
