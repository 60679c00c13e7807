//! `kill -9` of hearthd while inputs stream in: after a restart every acknowledged input and every
//! reply a client received is in the store, unanswered inputs are answered, and a task that was
//! suspended resumes with a visible notice (DESIGN §4.2–§4.3).

use crate::harness::{Daemon, source, within};
use hearth_memory::StoreReader;
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::Value;
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Sends one request on a raw socket and records what the daemon acknowledged and answered.
fn client(
    socket: std::path::PathBuf,
    text: String,
    acked: Arc<Mutex<Vec<String>>>,
    replied: Arc<Mutex<Vec<(String, String)>>>,
) {
    let Ok(stream) = UnixStream::connect(&socket) else {
        return;
    };
    let mut out = stream.try_clone().expect("clone");
    let line = serde_json::json!({"op": "send", "text": text}).to_string();
    if out.write_all(format!("{line}\n").as_bytes()).is_err() {
        return;
    }
    let mut id = String::new();
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            return;
        };
        match v["type"].as_str() {
            Some("accepted") => {
                id = v["request_id"].as_str().unwrap_or_default().to_string();
                acked.lock().expect("lock").push(id.clone());
            }
            Some("response") => {
                replied.lock().expect("lock").push((
                    id.clone(),
                    v["content"].as_str().unwrap_or_default().to_string(),
                ));
                return;
            }
            Some("delta") => {}
            _ => return,
        }
    }
}

#[test]
fn acknowledged_inputs_and_replies_survive_kill_9() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        // Every answer takes a little while, so some inputs are queued when the kill lands.
        for _ in 0..200 {
            server.push(Script::Text {
                pieces: vec!["ok ".into(), "done".into()],
                delay: Duration::from_millis(15),
            });
        }
        let config = source("remote", &server.base_url, 0);
        let daemon = Daemon::start(&config);
        let acked = Arc::new(Mutex::new(Vec::new()));
        let replied = Arc::new(Mutex::new(Vec::new()));
        let mut clients = Vec::new();
        for i in 0..40 {
            let (s, a, r) = (daemon.socket.clone(), acked.clone(), replied.clone());
            clients.push(std::thread::spawn(move || {
                client(s, format!("input number {i}"), a, r)
            }));
            std::thread::sleep(Duration::from_millis(8));
        }
        std::thread::sleep(Duration::from_millis(150));
        let dir = daemon.dir.clone();
        daemon.kill9();
        for c in clients {
            let _ = c.join();
        }
        let acked = acked.lock().expect("lock").clone();
        let replied = replied.lock().expect("lock").clone();
        assert!(
            !acked.is_empty(),
            "some inputs were acknowledged before the kill"
        );
        let store = StoreReader::open(dir.join("memory.db")).expect("the store reopens");
        store.integrity_check().expect("intact after kill -9");
        for id in &acked {
            assert!(
                store.journal_get(id).expect("read").is_some(),
                "acknowledged input {id} lost"
            );
        }
        for (id, content) in &replied {
            let entry = store
                .journal_get(id)
                .expect("read")
                .expect("replied input present");
            let reply = entry.reply.expect("a reply the client saw is journaled");
            assert_eq!(reply["content"].as_str(), Some(content.as_str()));
        }
        let pending: HashSet<String> = store
            .journal_pending()
            .expect("pending")
            .into_iter()
            .map(|e| e.request_id)
            .collect();
        drop(store);
        // Restart on the same data dir: what was accepted but unanswered is answered now.
        let again = Daemon::restart(&dir, &config);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let store = StoreReader::open(dir.join("memory.db")).expect("open");
            let left: Vec<_> = store
                .journal_pending()
                .expect("pending")
                .into_iter()
                .filter(|e| pending.contains(&e.request_id))
                .collect();
            if left.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{} inputs never answered after the restart",
                left.len()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(again);
    });
}

#[test]
fn a_task_suspended_at_the_crash_resumes_with_a_notice() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let words: Vec<String> = (0..50).map(|i| format!("w{i} ")).collect();
        server.push(Script::Text {
            pieces: words,
            delay: Duration::from_millis(40),
        });
        // The interrupt's call never answers before the kill.
        server.push(Script::Silent);
        let config = source("remote", &server.base_url, 0);
        let daemon = Daemon::start(&config);
        // Each client's output stays open: a CLI whose reader went away hangs up, which cancels
        // its task.
        let (mut long, _long_out) = daemon.spawn(&["send", "a long story please"]);
        server.wait_requests(1, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(200));
        let (mut urgent, _urgent_out) = daemon.spawn(&["interrupt", "--level", "L3", "doorbell"]);
        server.wait_requests(2, Duration::from_secs(20));
        let dir = daemon.dir.clone();
        {
            let store = StoreReader::open(dir.join("memory.db")).expect("open");
            let deadline = Instant::now() + Duration::from_secs(10);
            while store.frames_load().expect("frames").is_empty() {
                assert!(
                    Instant::now() < deadline,
                    "the preempted task's frame was never saved"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        daemon.kill9();
        let _ = long.wait();
        let _ = urgent.wait();
        server.push(Script::text("Doorbell answered."));
        server.push(Script::text("The story, continued."));
        let again = Daemon::restart(&dir, &config);
        let deadline = Instant::now() + Duration::from_secs(60);
        let replies = loop {
            let store = StoreReader::open(dir.join("memory.db")).expect("open");
            if store.journal_pending().expect("pending").is_empty() {
                break store;
            }
            assert!(
                Instant::now() < deadline,
                "pending work never finished after the restart"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let frames = replies.frames_load().expect("frames");

        assert!(
            frames.is_empty(),
            "the resumed frame is removed: {:?}",
            frames
                .iter()
                .map(|f| (f.task_id, &f.request_id, f.stack_pos))
                .collect::<Vec<_>>()
        );
        drop(replies);
        let seen = server.seen();
        let resumed = seen.last().expect("requests");
        // The resumed call carries the original input, rebuilt, after the restart.
        assert!(
            resumed.body["messages"]
                .as_array()
                .expect("messages")
                .iter()
                .any(|m| m["content"] == "a long story please")
        );
        // The reply is journaled by the store writer, the context event by the memory thread:
        // the second may land a moment after the first.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let store = StoreReader::open(dir.join("memory.db")).expect("open");
            let responses: Vec<String> = store
                .events_window()
                .expect("window")
                .into_iter()
                .map(|e| e.record.event.response)
                .collect();
            if responses
                .iter()
                .any(|r| r == "[resumed after a restart] The story, continued.")
            {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the visible notice is recorded: {responses:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(again);
    });
}
