//! `hearth send`, `interrupt`, `status` and the socket protocol against a real daemon.

use crate::harness::{Daemon, read_rest, read_until, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

#[test]
fn two_round_tool_loop_through_the_cli() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        server.push(Script::Tools(vec![("system_time".into(), json!({}))]));
        server.push(Script::text("It is late in the evening."));
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let out = daemon.run(&["send", "what", "time", "is", "it?"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("It is late in the evening."),
            "{}",
            stdout(&out)
        );
        let seen = server.seen();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].path, "/v1/chat/completions");
        let tools: Vec<&str> = seen[0].body["tools"]
            .as_array()
            .expect("tools offered")
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(tools.contains(&"system_time"), "{tools:?}");
        let msgs = seen[1].body["messages"].as_array().expect("messages");
        let assistant = msgs
            .iter()
            .find(|m| m["role"] == "assistant")
            .expect("assistant message");
        assert_eq!(
            assistant["tool_calls"][0]["function"]["name"],
            "system_time"
        );
        let tool = msgs
            .iter()
            .find(|m| m["role"] == "tool")
            .expect("tool message");
        assert_eq!(tool["tool_call_id"], assistant["tool_calls"][0]["id"]);
        let result: Value = serde_json::from_str(tool["content"].as_str().unwrap_or(""))
            .expect("tool result is JSON");
        assert!(
            result["local"].as_str().is_some_and(|s| s.contains('T')),
            "{result}"
        );
        assert_eq!(
            seen[1]
                .headers
                .iter()
                .find(|(k, _)| k == "content-type")
                .map(|(_, v)| v.as_str()),
            Some("application/json")
        );
    });
}

#[test]
fn the_cli_sees_the_first_token_before_the_server_sends_the_last() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let (gate, wait) = crossbeam_channel::bounded(1);
        server.push(Script::Gated {
            pieces: vec![
                "Hello ".into(),
                "from ".into(),
                "the ".into(),
                "stream.".into(),
            ],
            after: 1,
            gate: wait,
        });
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let (mut child, mut out) = daemon.spawn(&["send", "hi"]);
        // The server holds back everything after the first piece until the CLI printed it.
        let first = read_until(&mut out, "Hello", Duration::from_secs(20));
        assert!(!first.contains("stream."));
        gate.send(()).expect("release the rest");
        let rest = read_rest(out);
        assert!(child.wait().expect("cli exits").success());
        assert!(rest.contains("from the stream."), "{rest}");
    });
}

#[test]
fn an_l3_interrupt_is_answered_first_then_the_long_answer_resumes() {
    within(Duration::from_secs(90), || {
        let server = LlmServer::start();
        let words: Vec<String> = (0..60).map(|i| format!("w{i} ")).collect();
        server.push(Script::Text {
            pieces: words,
            delay: Duration::from_millis(40),
        });
        server.push(Script::text("Urgent handled."));
        server.push(Script::text("The long answer, resumed."));
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let (mut long, long_out) = daemon.spawn(&["send", "tell me something long"]);
        server.wait_requests(1, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(200));
        let urgent = daemon.run(&["interrupt", "--level", "L3", "the", "oven", "timer", "rang"]);
        let urgent_done = Instant::now();
        assert!(urgent.status.success(), "{}", stderr(&urgent));
        assert!(
            stdout(&urgent).contains("Urgent handled."),
            "{}",
            stdout(&urgent)
        );
        let rest = read_rest(long_out);
        let long_done = Instant::now();
        assert!(long.wait().expect("exits").success());
        assert!(urgent_done <= long_done);
        assert!(rest.contains("The long answer, resumed."), "{rest}");
        assert!(
            rest.contains("[interrupted"),
            "the cut stream is marked: {rest}"
        );
        let seen = server.seen();
        assert_eq!(seen.len(), 3, "long, interrupt, long again");
        let int_msgs = seen[1].body["messages"].as_array().expect("messages");
        assert!(
            int_msgs.iter().any(|m| m["role"] == "system"
                && m["content"].as_str().unwrap_or("").contains("oven timer"))
        );
        let status: Value =
            serde_json::from_str(&stdout(&daemon.run(&["status"]))).expect("status JSON");
        assert_eq!(status["scheduler"]["stats"]["suspended"], 1);
        assert_eq!(status["scheduler"]["stats"]["resumed"], 1);
    });
}

#[test]
fn status_lists_sources_and_the_scheduler() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&source("remote", &server.base_url, 3));
        let out = daemon.run(&["status"]);
        assert!(out.status.success());
        let status: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
        assert_eq!(status["sources"][0]["name"], "remote");
        assert_eq!(status["sources"][0]["priority"], 3);
        assert_eq!(status["sources"][0]["available"], true);
        assert_eq!(status["scheduler"]["max_queue"], 256);
        let list: Value =
            serde_json::from_str(&stdout(&daemon.run(&["source", "list"]))).expect("JSON");
        assert_eq!(list[0]["base_url"], server.base_url.as_str());
    });
}

#[test]
fn a_keyed_daemon_refuses_clients_without_the_key() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "api_key = \"sesame\"\n{}",
            source("remote", &server.base_url, 0)
        ));
        let mode = std::fs::metadata(&daemon.socket)
            .expect("socket")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
        let refused = daemon.run(&["status"]);
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert!(
            stderr(&refused).contains("unauthorized"),
            "{}",
            stderr(&refused)
        );
        let wrong = daemon
            .cli()
            .env("HEARTH_API_KEY", "nope")
            .arg("status")
            .output()
            .expect("runs");
        assert_eq!(wrong.status.code(), Some(2));
        let ok = daemon
            .cli()
            .env("HEARTH_API_KEY", "sesame")
            .args(["send", "hi"])
            .output()
            .expect("runs");
        assert!(ok.status.success(), "{}", stderr(&ok));
        assert!(stdout(&ok).contains("default answer"));
    });
}

#[test]
fn malformed_client_lines_get_errors_and_the_connection_survives() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let stream = UnixStream::connect(&daemon.socket).expect("connect");
        let mut out = stream.try_clone().expect("clone");
        let mut lines = BufReader::new(stream);
        let mut next = || {
            let mut l = String::new();
            lines.read_line(&mut l).expect("read");
            serde_json::from_str::<Value>(&l).expect("JSON line")
        };
        out.write_all(b"\xff\xfe not utf-8\n").expect("write");
        assert_eq!(next()["type"], "error");
        out.write_all(b"{\"op\":\"launch_rockets\"}\n")
            .expect("write");
        let err = next();
        assert!(
            err["error"].as_str().unwrap_or("").contains("bad request"),
            "{err}"
        );
        out.write_all(b"/status\n").expect("write");
        assert_eq!(next()["type"], "status");
        // The daemon answers and hangs up past an operator's 24 MiB, so the rest of the write
        // may fail.
        let writer = std::thread::spawn(move || {
            let mut huge = vec![b'x'; 25 << 20];
            huge.push(b'\n');
            let _ = out.write_all(&huge);
        });
        assert!(
            next()["error"]
                .as_str()
                .unwrap_or("")
                .contains("longer than")
        );
        let _ = writer.join();
    });
}

/// A terminal line waits until the socket's ring reader has passed every event published before
/// the reply; events that reader skips (other requests' deltas, every non-delta) must advance
/// it at once. When they did not, each answer waited for the reader's one-second park.
#[test]
fn answers_are_not_held_back_by_the_ring_reader() {
    within(Duration::from_secs(90), || {
        let server = LlmServer::start();
        const SENDS: usize = 6;
        for i in 0..SENDS {
            server.push(Script::text(&format!("answer number {i}")));
        }
        let daemon = Daemon::start(&format!(
            "memory_model = false\n{}",
            source("remote", &server.base_url, 0)
        ));
        let started = Instant::now();
        for i in 0..SENDS {
            let out = daemon.run(&["send", &format!("question number {i}")]);
            assert!(out.status.success(), "{}", stderr(&out));
            assert!(
                stdout(&out).contains(&format!("answer number {i}")),
                "{}",
                stdout(&out)
            );
        }
        let took = started.elapsed();
        // Held back, the six answers take at least six seconds; unheld, well under one each.
        assert!(
            took < Duration::from_secs(5),
            "{SENDS} answers took {took:?}"
        );
    });
}

/// A source's configured temperature is what its server is asked for; a source that sets none
/// gets the default (SPEC §7.2: 0.7), so a user who wants steadier answers can say so.
#[test]
fn a_sources_temperature_reaches_its_server() {
    within(Duration::from_secs(60), || {
        let steady = LlmServer::start();
        steady.push(Script::text("steady"));
        let config = format!(
            "{}temperature = 0.25\n",
            source("steady", &steady.base_url, 0)
        );
        let daemon = Daemon::start(&config);
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(steady.seen()[0].body["temperature"], json!(0.25));
        drop(daemon);

        let plain = LlmServer::start();
        plain.push(Script::text("plain"));
        let daemon = Daemon::start(&source("plain", &plain.base_url, 0));
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(plain.seen()[0].body["temperature"], json!(0.7));
    });
}

/// A source configured `no_tools` (the embedded default's setting) gets its requests without
/// the tool list, while a source without it is offered the tools as before.
#[test]
fn a_source_that_takes_no_tools_is_sent_none() {
    within(Duration::from_secs(60), || {
        let plain = LlmServer::start();
        let daemon = Daemon::start(&format!(
            "{}no_tools = true\n",
            source("plain", &plain.base_url, 0)
        ));
        plain.push(Script::text("Hello there."));
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("Hello there."), "{}", stdout(&out));
        let body = &plain.seen()[0].body;
        assert!(
            body.get("tools").is_none() && body.get("tool_choice").is_none(),
            "no tool list for a source that takes none: {body}"
        );

        let tooled = LlmServer::start();
        let daemon = Daemon::start(&source("tooled", &tooled.base_url, 0));
        tooled.push(Script::text("Hello there."));
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let body = &tooled.seen()[0].body;
        assert!(
            body["tools"].as_array().is_some_and(|t| !t.is_empty()),
            "{body}"
        );
    });
}

/// `hearth send … | head -c 6`: the reader goes away mid-answer. The CLI ends quietly with the
/// status a shell gives a command ended by SIGPIPE (141), not a panic, and the daemon goes on.
#[test]
fn a_reader_that_goes_away_mid_answer_ends_the_cli_quietly() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let (gate, wait) = crossbeam_channel::bounded(1);
        server.push(Script::Gated {
            pieces: vec!["Hello ".into(), "from ".into(), "the stream.".into()],
            after: 1,
            gate: wait,
        });
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let mut child = daemon
            .cli()
            .args(["send", "hi"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("hearth runs");
        let mut out = child.stdout.take().expect("stdout");
        read_until(&mut out, "Hello", Duration::from_secs(20));
        drop(out);
        gate.send(()).expect("release the rest");
        let ended = child.wait_with_output().expect("cli exits");
        let err = String::from_utf8_lossy(&ended.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(ended.status.code(), Some(141), "{err}");
        let again = daemon.run(&["send", "still there?"]);
        assert!(again.status.success(), "{}", stderr(&again));
    });
}
