//! A client that hangs up before its answer, with nothing else waiting for it: the running
//! task's LLM call is cut (the model server sees its connection close), a queued one never
//! reaches the model, both end journaled as `cancelled` and neither runs again after a restart.

use crate::harness::{Daemon, source, within};
use crate::raw::Raw;
use hearth_memory::StoreReader;
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::{Duration, Instant};

/// Sends `text` and returns the connection once the daemon has accepted it, with its id.
fn accepted(daemon: &Daemon, text: &str) -> (Raw, String) {
    let mut raw = Raw::connect(&daemon.socket);
    raw.send_text(text);
    let ack = raw.line();
    assert_eq!(ack["type"], "accepted", "{ack}");
    let id = ack["request_id"].as_str().expect("request id").to_string();
    (raw, id)
}

#[test]
fn a_client_that_hangs_up_cancels_its_task_and_it_is_not_rerun() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        server.push(Script::Silent);
        server.push(Script::text("answer for the one still waiting"));
        let config = source("remote", &server.base_url, 0);
        let mut daemon = Daemon::start(&config);
        let (running, running_id) = accepted(&daemon, "a question nobody waits for");
        server.wait_requests(1, Duration::from_secs(20));
        let (queued, queued_id) = accepted(&daemon, "queued and then abandoned");
        let (mut waiting, waiting_id) = accepted(&daemon, "still wanted");
        drop(queued);
        // Let the queued hang-up reach the kernel before the running one ends.
        std::thread::sleep(Duration::from_millis(200));
        let hung_up = Instant::now();
        drop(running);
        let closed = server.closed_at(Duration::from_secs(10));
        let took = closed.saturating_duration_since(hung_up);
        assert!(
            took < Duration::from_secs(2),
            "the model call was cut {took:?} after the hang-up"
        );
        let lines = waiting.until_terminal();
        let terminal = lines.last().expect("terminal");
        assert_eq!(
            terminal["content"], "answer for the one still waiting",
            "the abandoned queued input must not take the next model call: {terminal}"
        );
        assert_eq!(
            server.seen().len(),
            2,
            "no model call for the abandoned queued input"
        );
        let store = StoreReader::open(daemon.dir.join("memory.db")).expect("store");
        for id in [&running_id, &queued_id] {
            let entry = store.journal_get(id).expect("read").expect("journaled");
            let reply = entry.reply.expect("ended in the journal");
            assert_eq!(reply["skipped"], true, "{reply}");
            assert_eq!(reply["reason"], "cancelled", "{reply}");
        }
        let answered = store.journal_get(&waiting_id).expect("read").expect("row");
        assert!(answered.reply.is_some());
        drop(store);

        let (_, clean) = daemon.terminate(Duration::from_secs(15));
        assert!(clean);
        let dir = daemon.dir.clone();
        let again = Daemon::restart(&dir, &config);
        std::thread::sleep(Duration::from_millis(500));
        let store = StoreReader::open(dir.join("memory.db")).expect("store");
        assert!(store.journal_pending().expect("pending").is_empty());
        assert_eq!(
            server.seen().len(),
            2,
            "nothing ran again after the restart"
        );
        drop(again);
    });
}
