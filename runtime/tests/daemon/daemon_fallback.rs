//! Fallback across sources (SPEC §7.3) seen from the CLI.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::Value;
use std::time::{Duration, Instant};

#[test]
fn two_server_errors_fall_back_to_the_next_source() {
    within(Duration::from_secs(60), || {
        let a = LlmServer::start();
        let b = LlmServer::start();
        a.push(Script::Status(500, "{\"error\":\"overloaded\"}".into()));
        a.push(Script::Status(500, "{\"error\":\"overloaded\"}".into()));
        b.push(Script::text("Answer from B."));
        let daemon = Daemon::start(&format!(
            "{}{}",
            source("a", &a.base_url, 10),
            source("b", &b.base_url, 0)
        ));
        let started = Instant::now();
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("Answer from B."));
        assert_eq!(a.seen().len(), 2, "two attempts on A");
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "2 s between the attempts"
        );
        let status: Value = serde_json::from_str(&stdout(&daemon.run(&["status"]))).expect("JSON");
        let src_a = &status["sources"][0];
        assert_eq!(src_a["name"], "a");
        assert_eq!(src_a["available"], false, "A cools down: {src_a}");
        assert_eq!(src_a["permanent"], false);
        // While A cools down, the next request goes straight to B.
        assert!(stdout(&daemon.run(&["send", "again"])).contains("default answer"));
        assert_eq!(a.seen().len(), 2);
    });
}

#[test]
fn rejected_credentials_mark_the_source_permanently_down() {
    within(Duration::from_secs(60), || {
        let a = LlmServer::start();
        let b = LlmServer::start();
        a.push(Script::Status(
            401,
            "{\"error\":\"invalid api key\"}".into(),
        ));
        b.push(Script::text("B again."));
        let daemon = Daemon::start(&format!(
            "{}{}",
            source("a", &a.base_url, 10),
            source("b", &b.base_url, 0)
        ));
        let out = daemon.run(&["send", "hello"]);
        assert!(stdout(&out).contains("B again."), "{}", stderr(&out));
        assert_eq!(a.seen().len(), 1, "a 401 is not retried");
        let status: Value = serde_json::from_str(&stdout(&daemon.run(&["status"]))).expect("JSON");
        assert_eq!(status["sources"][0]["permanent"], true, "{status}");
        assert!(
            status["sources"][0]["last_error"]
                .as_str()
                .unwrap_or("")
                .contains("401")
        );
    });
}
