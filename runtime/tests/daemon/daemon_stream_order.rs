//! A streamed answer reaches its client whole and in order while its socket changes hands: the
//! provider's thread writes the deltas of a client that keeps up, and the socket's thread
//! takes over (first the rest of a half-written line) when the client falls behind.

use crate::harness::{Daemon, source, within};
use crate::raw::Raw;
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::Value;
use std::time::Duration;

/// The text of a streamed answer's deltas, and whether a `lag` line came.
fn deltas_of(lines: &[Value]) -> (String, bool) {
    let mut text = String::new();
    let mut lagged = false;
    for line in lines {
        match line["type"].as_str() {
            Some("delta") => text.push_str(line["content"].as_str().expect("content")),
            Some("lag") => lagged = true,
            _ => {}
        }
    }
    (text, lagged)
}

/// A client that stops reading while 200 KB stream (more than its socket holds, less than
/// its connection's buffer) loses nothing: the half-written line the provider's thread left
/// goes out first, the rest follows in order, and no `lag` line comes.
#[test]
fn a_paused_reader_gets_every_delta_in_order_when_the_socket_changes_hands() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let pieces: Vec<String> = (0..1000)
            .map(|j| format!("{j:04}{} ", "x".repeat(195)))
            .collect();
        server.push(Script::Text {
            pieces: pieces.clone(),
            // Paced, so the socket's thread catches up and lends the socket before the pause.
            delay: Duration::from_millis(1),
        });
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let mut raw = Raw::connect(&daemon.socket);
        raw.send_text("a long answer please");
        let mut lines = Vec::new();
        while lines.len() < 6 {
            lines.push(raw.line());
        }
        std::thread::sleep(Duration::from_millis(1500));
        lines.extend(raw.until_terminal());
        let (text, lagged) = deltas_of(&lines);
        assert!(!lagged, "a buffer of 256 KiB holds what the client missed");
        assert_eq!(text, pieces.concat(), "every delta, in order");
        let terminal = lines.last().expect("terminal");
        assert_eq!(terminal["type"], "response", "{terminal}");
        assert_eq!(
            terminal["content"].as_str().map(str::trim),
            Some(text.trim())
        );
        let (publisher, reactor) = writers(&daemon);
        assert_eq!(publisher + reactor, 1000, "each delta written once");
        assert!(
            publisher > 0,
            "the provider's thread wrote while the client kept up"
        );
        assert!(
            reactor > 0,
            "the socket's thread took over when it fell behind"
        );
    });
}

/// How many deltas the provider's thread and the socket's thread wrote, from `hearth status`.
fn writers(daemon: &Daemon) -> (u64, u64) {
    let out = daemon.run(&["status"]);
    assert!(out.status.success(), "{}", crate::harness::stderr(&out));
    let status: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    let written = &status["socket"]["deltas_written"];
    let count = |who: &str| written[who].as_u64().unwrap_or_else(|| panic!("{status}"));
    (count("publisher"), count("reactor"))
}

/// Clients streaming one after another each get their own answer's deltas only, all of them,
/// in order, then their terminal line.
#[test]
fn concurrent_clients_each_stream_only_their_own_answer() {
    within(Duration::from_secs(120), || {
        const CLIENTS: usize = 6;
        let server = LlmServer::start();
        for k in 0..CLIENTS {
            server.push(Script::Text {
                pieces: (0..200).map(|j| format!("a{k}.{j} ")).collect(),
                delay: Duration::ZERO,
            });
        }
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let socket = daemon.socket.clone();
                std::thread::spawn(move || {
                    let mut raw = Raw::connect(&socket);
                    raw.send_text(&format!("question {i}"));
                    raw.until_terminal()
                })
            })
            .collect();
        let mut answers = Vec::new();
        for client in clients {
            let lines = client.join().expect("client");
            let (text, lagged) = deltas_of(&lines);
            assert!(!lagged);
            let terminal = lines.last().expect("terminal");
            assert_eq!(
                terminal["content"].as_str().map(str::trim),
                Some(text.trim())
            );
            let words: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(words.len(), 200, "{text}");
            let k = words[0].split('.').next().expect("answer tag").to_owned();
            for (j, word) in words.iter().enumerate() {
                assert_eq!(*word, format!("{k}.{j}"), "one answer, in order: {text}");
            }
            answers.push(k);
        }
        answers.sort();
        answers.dedup();
        assert_eq!(answers.len(), CLIENTS, "each client its own answer");
        let (publisher, reactor) = writers(&daemon);
        assert_eq!(
            publisher + reactor,
            200 * CLIENTS as u64,
            "each delta written once"
        );
    });
}
