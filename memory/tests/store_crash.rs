//! Crash test of the memory store: a real writer process is SIGKILLed while it journals inputs
//! and replies, then the store is reopened (WAL recovery) and everything the writer announced —
//! each `ACK` printed after `journal_accept` returned, each `REPLIED` printed after
//! `journal_reply` returned — must be there, and the file must pass `PRAGMA integrity_check`.
//! Several rounds run on the same file, each killed at a different moment, each resuming the
//! previous round's unanswered inputs.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use hearth_memory::Store;

mod common;
use common::{TempDir, watchdog};

const ROUNDS: u32 = 4;
const LIMIT: Duration = Duration::from_secs(60);
/// How long a writer may take to open the store and announce its first write.
const FIRST_LINE_LIMIT: Duration = Duration::from_secs(10);

/// What one writer run announced before it was killed.
#[derive(Default)]
struct Announced {
    acked: Vec<String>,
    replied: Vec<String>,
}

/// Runs the writer for `run_for`, SIGKILLs it and returns every line it printed.
fn run_writer(db: &Path, tag: &str, run_for: Duration) -> Announced {
    let mut child = Command::new(env!("CARGO_BIN_EXE_store_crash_writer"))
        .arg(db)
        .arg(tag)
        .arg("20")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn writer");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });

    let mut lines = Vec::new();
    let mut exited_early = false;
    // The kill lands `run_for` after the writer's first announcement, not after its spawn: on a
    // loaded machine opening and migrating the store alone can take longer than a round.
    match rx.recv_timeout(FIRST_LINE_LIMIT) {
        Ok(line) => lines.push(line),
        Err(RecvTimeoutError::Timeout) => {}
        Err(RecvTimeoutError::Disconnected) => exited_early = true,
    }
    let deadline = Instant::now() + run_for;
    while let Some(left) = deadline
        .checked_duration_since(Instant::now())
        .filter(|_| !exited_early)
    {
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => {
                exited_early = true;
                break;
            }
        }
    }
    // `Child::kill` is SIGKILL on Unix: no destructor, no flush, no checkpoint runs.
    let _ = child.kill();
    let status = child.wait().expect("wait for writer");
    if exited_early {
        let mut err = String::new();
        if let Some(mut stderr) = child.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        panic!("writer exited by itself ({status}): {err}");
    }
    reader.join().expect("stdout reader");
    // Lines already in the pipe when the kill landed were printed after a durable write too.
    lines.extend(rx.try_iter());

    let mut out = Announced::default();
    for line in lines {
        match line.split_once(' ') {
            Some(("ACK", id)) => out.acked.push(id.to_owned()),
            Some(("REPLIED", id)) => out.replied.push(id.to_owned()),
            _ => panic!("unexpected writer output {line:?}"),
        }
    }
    out
}

/// Every input the writer's events recorded, in the window and in cold context.
fn event_inputs(store: &Store) -> HashSet<String> {
    let mut inputs: HashSet<String> = store
        .events_window()
        .expect("window")
        .into_iter()
        .map(|e| e.record.event.input)
        .collect();
    // Every entry was last accessed before the end of time: this lists all of cold context.
    for id in store
        .cold_find_cold(i64::MAX, 0, u64::MAX)
        .expect("cold ids")
    {
        let entry = store.cold_get(id).expect("cold get").expect("listed entry");
        inputs.insert(entry.event.input);
    }
    inputs
}

#[test]
fn store_crash_sigkill_loses_nothing_acknowledged() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-crash");
        let db = dir.path().join("memory.db");

        let mut all_acked = HashSet::new();
        let mut total_acks = 0;
        for round in 0..ROUNDS {
            let tag = format!("round{round}");
            let run_for = Duration::from_millis(300 + 41 * u64::from(round));
            let announced = run_writer(&db, &tag, run_for);
            assert!(
                !announced.acked.is_empty(),
                "round {round}: the writer acknowledged nothing in {run_for:?}"
            );
            total_acks += announced.acked.len();
            all_acked.extend(announced.acked.iter().cloned());

            let store = Store::open(&db).expect("reopen after SIGKILL");
            store.integrity_check().expect("integrity after SIGKILL");

            for id in &announced.acked {
                let entry = store
                    .journal_get(id)
                    .expect("journal_get")
                    .unwrap_or_else(|| panic!("round {round}: ACKed input {id} lost"));
                let seq: u64 = id
                    .rsplit('-')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("seq");
                assert_eq!(entry.payload["seq"], seq, "payload of {id}");
            }
            let inputs = event_inputs(&store);
            for id in &announced.replied {
                let entry = store
                    .journal_get(id)
                    .expect("journal_get")
                    .unwrap_or_else(|| panic!("round {round}: replied input {id} lost"));
                let reply = entry
                    .reply
                    .unwrap_or_else(|| panic!("round {round}: reply to {id} lost"));
                assert!(entry.replied_ms.is_some());
                if id.starts_with(&format!("{tag}-")) {
                    assert_eq!(reply["text"], format!("reply {id}"));
                    assert!(
                        inputs.contains(&format!("input {id}")),
                        "round {round}: the event of replied turn {id} is in neither layer"
                    );
                } else {
                    assert_eq!(
                        reply["resumed"], true,
                        "{id} was resumed from an earlier round"
                    );
                }
            }
            // Whatever is still pending was ACKed, or is the one input whose ACK the kill cut
            // off (durable, never acknowledged): at most one such input per round.
            let unacked_pending = store
                .journal_pending()
                .expect("pending")
                .into_iter()
                .filter(|e| !all_acked.contains(&e.request_id))
                .count();
            assert!(
                unacked_pending <= (round + 1) as usize,
                "round {round}: {unacked_pending} pending inputs were never acknowledged"
            );
        }
        assert!(total_acks >= ROUNDS as usize);
    });
}
