//! A turn taken back while it is still being answered ("my safe code is 7319 — no, don't keep
//! that"): the person gets the answer, then the whole turn is forgotten — at once when the reply
//! is journaled, and after a crash when the input runs again.

use crate::daemon_graph::{config, rows_saying, until_gone_from_bytes};
use crate::daemon_graph_forget::entries;
use crate::harness::{Daemon, read_rest, read_until, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::Duration;

const SAID: &str = "My safe code is 7319";

/// The id `hearth memory recall` lists first for the turn holding `words`.
fn recent_id(daemon: &Daemon, query: &str, words: &str) -> Option<String> {
    entries(daemon, query, words).into_iter().next()
}

/// Sends `SAID` to a server holding its answer after the first piece, waits until the client
/// printed that piece, and forgets the turn by its `w` id: the answer's gate and the client.
fn forget_while_answering(
    server: &LlmServer,
    daemon: &Daemon,
) -> (
    crossbeam_channel::Sender<()>,
    std::process::Child,
    std::process::ChildStdout,
) {
    let (gate, wait) = crossbeam_channel::bounded(1);
    server.push(Script::Gated {
        pieces: vec!["Noted, ".into(), "I will not repeat it.".into()],
        after: 1,
        gate: wait,
    });
    let (child, mut out) = daemon.spawn(&["send", SAID]);
    read_until(&mut out, "Noted", Duration::from_secs(20));
    let id = recent_id(daemon, "safe code", "7319").expect("the turn is listed while it runs");
    assert!(id.starts_with('w'), "{id}");
    let forget = daemon.run(&["memory", "forget", &id]);
    assert!(forget.status.success(), "{}", stderr(&forget));
    assert!(
        stdout(&forget).contains("still being answered"),
        "{}",
        stdout(&forget)
    );
    // Nothing removed yet: the turn is still being answered.
    assert!(rows_saying(daemon, "7319") > 0);
    (gate, child, out)
}

#[test]
fn a_turn_taken_back_while_it_is_answered_goes_once_the_answer_is_in() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        let (gate, mut child, out) = forget_while_answering(&server, &daemon);
        gate.send(()).expect("release the answer");
        // The person still gets the whole answer.
        assert!(read_rest(out).contains("I will not repeat it."));
        assert!(child.wait().expect("cli exits").success());
        until_gone_from_bytes(&daemon, "7319");
        assert_eq!(recent_id(&daemon, "safe code", "7319"), None);
        let again = daemon.run(&["memory", "recall", "safe code 7319"]);
        assert!(!stdout(&again).contains("7319"), "{}", stdout(&again));
    });
}

#[test]
fn a_turn_marked_to_be_forgotten_goes_when_it_is_answered_after_a_crash() {
    within(Duration::from_secs(150), || {
        let server = LlmServer::start();
        let toml = config(&server.base_url);
        let daemon = Daemon::start(&toml);
        let dir = daemon.dir.clone();
        let (gate, mut child, _out) = forget_while_answering(&server, &daemon);
        daemon.kill9();
        let _ = child.wait();
        drop(gate);
        // The input was pending: it runs again after the restart, and its reply finds the mark.
        server.push(Script::text("Noted once more."));
        let again = Daemon::restart(&dir, &toml);
        until_gone_from_bytes(&again, "7319");
        assert_eq!(recent_id(&again, "safe code", "7319"), None);
        let seen = server.seen();
        assert!(
            seen.last().unwrap().body["messages"]
                .to_string()
                .contains("7319"),
            "the input ran again after the restart"
        );
    });
}
