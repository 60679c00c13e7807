//! `kill -9` with more inputs pending than the ready queue holds (256): after one restart every
//! one of them is answered, in acceptance order, while the daemon would otherwise sit idle. It
//! prints the recovery times README quotes (set HEARTH_PENDING to change the count, at most
//! 512: the ready queue and the input edge).

use crate::harness::{Daemon, held_server, source, within};
use crate::raw::{Got, Raw};
use hearth_memory::StoreReader;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

fn pending_count() -> usize {
    std::env::var("HEARTH_PENDING")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

#[test]
fn every_input_pending_at_kill_9_is_answered_after_one_restart() {
    within(Duration::from_secs(600), || {
        let n = pending_count();
        // The first call never finishes before the kill: every input stays pending behind it.
        let (server, gate) = held_server();
        let config = format!(
            "{}\n[socket]\nmax_connections = {}\n",
            source("remote", &server.base_url, 0),
            n + 16
        );
        let daemon = Daemon::start(&config);
        let (acked_tx, acked_rx) = crossbeam_channel::unbounded();
        let clients: Vec<_> = (0..n)
            .map(|i| {
                let socket = daemon.socket.clone();
                let acked_tx = acked_tx.clone();
                std::thread::spawn(move || {
                    let mut raw = Raw::connect(&socket);
                    raw.send_text(&format!("pending input {i}"));
                    while let Got::Line(v) = raw.next() {
                        if v["type"] == "accepted" {
                            let _ = acked_tx.send(v["request_id"].as_str().map(String::from));
                        }
                    }
                })
            })
            .collect();
        let mut acked = Vec::new();
        for _ in 0..n {
            let id = acked_rx
                .recv_timeout(Duration::from_secs(120))
                .expect("every input is accepted before the kill")
                .expect("accepted carries the request id");
            acked.push(id);
        }
        // The oldest input's call is out (and held) when the kill lands.
        server.wait_requests(1, Duration::from_secs(60));
        let dir = daemon.dir.clone();
        daemon.kill9();
        drop(gate);
        for c in clients {
            let _ = c.join();
        }
        // The journal lists pending inputs in acceptance order.
        let accepted_order: Vec<String> = {
            let store = StoreReader::open(dir.join("memory.db")).expect("store");
            let pending = store.journal_pending().expect("pending");
            assert_eq!(
                pending.len(),
                n,
                "every accepted input is pending at the kill"
            );
            pending
                .iter()
                .map(|e| {
                    e.payload["content"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        };

        let started = Instant::now();
        let again = Daemon::restart(&dir, &config);
        let ready = started.elapsed();
        let deadline = Instant::now() + Duration::from_secs(480);
        let answered = loop {
            let store = StoreReader::open(dir.join("memory.db")).expect("store");
            let left = store.journal_pending().expect("pending").len();
            if left == 0 {
                break started.elapsed();
            }
            assert!(
                Instant::now() < deadline,
                "{left} of {n} inputs still pending after one restart"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        eprintln!(
            "recovery after kill -9 with {n} pending: socket accepting after {} ms, all answered after {} ms",
            ready.as_millis(),
            answered.as_millis()
        );
        assert!(UnixStream::connect(&again.socket).is_ok());
        // Each input ran once after the restart, in the order it was accepted: the model saw
        // the inputs in that order (the held call is the first request, before the kill).
        let seen = server.seen();
        let asked: Vec<String> = seen
            .iter()
            .skip(1)
            .filter_map(|s| last_user_text(&s.body))
            .filter(|text| text.contains("pending input "))
            .collect();
        assert_eq!(
            asked.len(),
            n,
            "one model call per resumed input; {} calls in all, without one: {:?}",
            seen.len(),
            seen.iter()
                .skip(1)
                .filter(|s| !last_user_text(&s.body).is_some_and(|t| t.contains("pending input ")))
                .map(|s| s.body["messages"].to_string())
                .collect::<Vec<_>>()
        );
        for (i, (asked, accepted)) in asked.iter().zip(&accepted_order).enumerate() {
            assert!(
                asked.contains(accepted.as_str()),
                "resumed input {i} ran out of acceptance order: asked {asked:?}, accepted {accepted:?}"
            );
        }
        let store = StoreReader::open(dir.join("memory.db")).expect("store");
        for id in &acked {
            let entry = store.journal_get(id).expect("read").expect("journaled");
            assert!(entry.reply.is_some(), "{id} answered");
        }
        drop(again);
    });
}

/// The text of the last user message of a chat request.
fn last_user_text(body: &serde_json::Value) -> Option<String> {
    body["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user")?["content"]
        .as_str()
        .map(String::from)
}
