//! `hearth stop` while the model is silent (a long prefill): the daemon closes the upstream
//! request within 50 ms.

use crate::harness::{Daemon, read_rest, source, stderr, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::{Duration, Instant};

#[test]
fn stop_during_a_silent_prefill_closes_the_request_within_50ms() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        server.push(Script::Silent);
        let daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let (mut send, out) = daemon.spawn(&["send", "a question that takes long to read"]);
        server.wait_requests(1, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(100));
        // Open the connection first so only the request itself is timed, not process start-up.
        let mut stop = daemon.cli();
        stop.arg("stop");
        let asked = Instant::now();
        let stopped = stop.output().expect("hearth stop runs");
        let closed = server.closed_at(Duration::from_secs(5));
        assert!(stopped.status.success(), "{}", stderr(&stopped));
        let took = closed.saturating_duration_since(asked);
        assert!(
            took < Duration::from_millis(50),
            "upstream closed {took:?} after `hearth stop`"
        );
        let text = read_rest(out);
        assert!(send.wait().expect("exits").success());
        assert!(text.contains("Generation stopped."), "{text}");
    });
}
