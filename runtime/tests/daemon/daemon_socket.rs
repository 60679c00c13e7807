//! The client socket under load and abuse: hundreds of idle clients, a reader too slow for its
//! answer, clients that never read or never speak, too many clients, and lines that are not
//! requests at all.

use crate::harness::{Daemon, source, within};
use crate::raw::{Got, Raw};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::{Duration, Instant};

fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("/proc task dir")
        .count()
}

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

#[test]
fn five_hundred_idle_clients_cost_no_thread_and_no_cpu() {
    within(Duration::from_secs(240), || {
        // No embedding model: its loading would be the only CPU used here.
        let daemon = Daemon::start("memory_model = false\n[socket]\nmax_connections = 600\n");
        let pid = daemon.pid();
        // One round trip first, so every lazily started thread is running.
        let mut probe = Raw::connect(&daemon.socket);
        probe.send(r#"{"op":"help"}"#);
        probe.line();
        std::thread::sleep(Duration::from_millis(500));
        let before = threads(pid);
        let t0 = cpu_ticks(pid);
        std::thread::sleep(Duration::from_secs(3));
        let baseline = cpu_ticks(pid) - t0;
        let clients: Vec<Raw> = (0..500)
            .map(|_| {
                let mut raw = Raw::connect(&daemon.socket);
                raw.send(r#"{"op":"help"}"#);
                raw
            })
            .collect();
        let mut clients: Vec<Raw> = clients
            .into_iter()
            .map(|mut raw| {
                assert_eq!(raw.line()["type"], "response");
                raw
            })
            .collect();
        let after = threads(pid);
        std::thread::sleep(Duration::from_millis(200));
        let t0 = cpu_ticks(pid);
        std::thread::sleep(Duration::from_secs(3));
        let ticks = cpu_ticks(pid) - t0;
        eprintln!(
            "500 idle clients: threads {before} -> {after}, CPU ticks in 3 s {baseline} without clients, {ticks} with"
        );
        assert_eq!(after, before, "connections must not start threads");
        assert!(ticks <= 3, "{ticks} ticks of CPU in 3 s with idle clients");
        // They are all still served.
        for raw in clients.iter_mut().step_by(50) {
            raw.send(r#"{"op":"help"}"#);
            assert_eq!(raw.line()["type"], "response");
        }
    });
}

/// A daemon with a 4 KiB write buffer (plus `socket_toml`) streaming `count` copies of `piece`
/// to a client that reads nothing for `unread`.
fn long_answer_unread(
    piece: &str,
    count: usize,
    socket_toml: &str,
    unread: Duration,
) -> (LlmServer, Daemon, Raw) {
    let server = LlmServer::start();
    server.push(Script::Text {
        pieces: vec![piece.to_string(); count],
        delay: Duration::ZERO,
    });
    let config = format!(
        "{}\n[socket]\nwrite_buffer_bytes = 4096\n{socket_toml}",
        source("remote", &server.base_url, 0)
    );
    let daemon = Daemon::start(&config);
    let mut raw = Raw::connect(&daemon.socket);
    raw.send_text("a long answer please");
    server.wait_requests(1, Duration::from_secs(60));
    std::thread::sleep(unread);
    (server, daemon, raw)
}

#[test]
fn a_slow_reader_is_told_how_many_deltas_it_missed_and_gets_the_whole_answer() {
    within(Duration::from_secs(240), || {
        let piece = "x".repeat(199) + " ";
        let (_server, _daemon, mut raw) =
            long_answer_unread(&piece, 3000, "", Duration::from_secs(3));
        let lines = raw.until_terminal();
        let missed: u64 = lines
            .iter()
            .filter(|l| l["type"] == "lag")
            .map(|l| l["missed"].as_u64().expect("missed count"))
            .sum();
        let deltas = lines.iter().filter(|l| l["type"] == "delta").count() as u64;
        let terminal = lines.last().expect("terminal");
        assert_eq!(terminal["type"], "response", "{terminal}");
        assert_eq!(
            terminal["content"].as_str().expect("content").trim(),
            piece.repeat(3000).trim(),
            "the terminal line carries the whole answer"
        );
        assert!(missed > 0, "a lag marker says deltas were dropped");
        assert!(deltas < 3000, "{deltas} deltas shown");
        eprintln!("slow reader: {deltas} deltas shown, {missed} missed, terminal intact");
    });
}

#[test]
fn a_client_that_never_reads_is_closed_after_the_write_timeout() {
    within(Duration::from_secs(240), || {
        let piece = "y".repeat(500);
        let (_server, daemon, mut raw) = long_answer_unread(
            &piece,
            2000,
            "write_timeout_secs = 1\n",
            Duration::from_secs(4),
        );
        // What the socket buffer held arrives, then the end: the daemon gave up on this client.
        let mut terminal = false;
        while let Got::Line(v) = raw.next() {
            terminal |= !matches!(v["type"].as_str(), Some("delta" | "accepted" | "lag"));
        }
        assert!(!terminal, "the stalled client was closed before its answer");
        // Everyone else is served as before.
        let mut other = Raw::connect(&daemon.socket);
        other.send(r#"{"op":"help"}"#);
        assert_eq!(other.line()["type"], "response");
    });
}

#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    within(Duration::from_secs(60), || {
        let daemon = Daemon::start("[socket]\nidle_timeout_secs = 1\n");
        let mut raw = Raw::connect(&daemon.socket);
        let opened = Instant::now();
        raw.read_timeout(Duration::from_secs(10));
        let notice = raw.line();
        assert!(
            notice["error"].as_str().unwrap_or("").contains("idle"),
            "{notice}"
        );
        assert!(matches!(raw.next(), Got::Eof));
        let took = opened.elapsed();
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(5),
            "{took:?}"
        );
    });
}

#[test]
fn connections_past_the_cap_are_refused_with_a_clear_line() {
    within(Duration::from_secs(60), || {
        let daemon = Daemon::start("[socket]\nmax_connections = 3\n");
        let mut held: Vec<Raw> = (0..3)
            .map(|_| {
                let mut raw = Raw::connect(&daemon.socket);
                raw.send(r#"{"op":"help"}"#);
                assert_eq!(raw.line()["type"], "response");
                raw
            })
            .collect();
        let mut extra = Raw::connect(&daemon.socket);
        let refusal = extra.line();
        assert!(
            refusal["error"]
                .as_str()
                .unwrap_or("")
                .contains("maximum of 3 connections"),
            "{refusal}"
        );
        assert!(matches!(extra.next(), Got::Eof));
        drop(held.pop());
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let mut again = Raw::connect(&daemon.socket);
            again.send(r#"{"op":"help"}"#);
            if let Got::Line(v) = again.next()
                && v["type"] == "response"
            {
                break;
            }
            assert!(Instant::now() < deadline, "a freed slot is served again");
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

/// A client that hung up frees its slot before the next one is counted, even when its hang-up
/// is still unread behind the new connection (both queued before the daemon looks).
#[test]
fn a_client_that_hung_up_does_not_hold_a_slot() {
    within(Duration::from_secs(60), || {
        let daemon = Daemon::start("[socket]\nmax_connections = 1\n");
        for round in 0..100 {
            drop(Raw::connect(&daemon.socket));
            let mut next = Raw::connect(&daemon.socket);
            next.send(r#"{"op":"help"}"#);
            let got = next.line();
            assert_eq!(got["type"], "response", "round {round}: {got}");
        }
    });
}

#[test]
fn an_http_request_is_refused_and_never_reaches_the_model() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let mut raw = Raw::connect(&daemon.socket);
        raw.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r");
        for _ in 0..2 {
            let err = raw.line();
            assert!(
                err["error"]
                    .as_str()
                    .unwrap_or("")
                    .contains("not a request"),
                "{err}"
            );
        }
        raw.send("/send a real question");
        let lines = raw.until_terminal();
        assert_eq!(lines.last().expect("terminal")["type"], "response");
        let seen = server.seen();
        assert_eq!(seen.len(), 1, "only the real question reached the model");
        let asked = seen[0].body["messages"].to_string();
        assert!(!asked.contains("HTTP/1.1"), "{asked}");
    });
}

#[test]
fn before_auth_a_malformed_line_closes_the_connection() {
    within(Duration::from_secs(60), || {
        let daemon = Daemon::start("api_key = \"k1\"\n");
        for line in ["GET / HTTP/1.1", "{\"op\":", "/status"] {
            let mut raw = Raw::connect(&daemon.socket);
            raw.send(line);
            assert_eq!(raw.line()["error"], "unauthorized", "after {line:?}");
            assert!(matches!(raw.next(), Got::Eof), "closed after {line:?}");
        }
        // Before authentication a line may be 1 MiB, not an operator's 24.
        let stream = std::os::unix::net::UnixStream::connect(&daemon.socket).expect("connect");
        let mut out = stream.try_clone().expect("clone");
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = out.write_all(format!("/auth {}\n", "k".repeat(2 << 20)).as_bytes());
        });
        let mut first = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stream), &mut first)
            .expect("an answer");
        let _ = writer.join();
        assert!(first.contains("longer than 1048576 bytes"), "{first}");
        let mut raw = Raw::connect(&daemon.socket);
        raw.send("/auth k1");
        assert_eq!(raw.line()["content"], "authenticated");
    });
}

#[test]
fn a_chat_session_left_idle_past_the_timeout_connects_again() {
    within(Duration::from_secs(120), || {
        use std::io::Write;
        let server = LlmServer::start();
        server.push(Script::text("first answer"));
        server.push(Script::text("second answer"));
        let config = format!(
            "{}\n[socket]\nidle_timeout_secs = 1\n",
            source("remote", &server.base_url, 0)
        );
        let daemon = Daemon::start(&config);
        let mut chat = daemon
            .cli()
            .arg("chat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("hearth chat");
        let mut input = chat.stdin.take().expect("stdin");
        let mut out = chat.stdout.take().expect("stdout");
        input.write_all(b"hello\n").expect("type");
        crate::harness::read_until(&mut out, "first answer", Duration::from_secs(60));
        // Idle past the daemon's timeout: it closes the connection.
        std::thread::sleep(Duration::from_millis(2500));
        input.write_all(b"hello again\n").expect("type");
        crate::harness::read_until(&mut out, "second answer", Duration::from_secs(60));
        drop(input);
        assert!(chat.wait().expect("chat exits").success());
    });
}
