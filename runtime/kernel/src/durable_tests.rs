//! The store's owner against real SQLite files: one writer per file, acknowledged = durable
//! under a group commit, and a reply the journal cannot take is never sent.

use super::*;
use crate::input::Reply;
use hearth_memory::StoreReader;
use hearth_testkit::{fresh_dir, within};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const LIMIT: Duration = Duration::from_secs(60);
const WAIT: Duration = Duration::from_secs(10);

fn open(path: &Path) -> (Durable, Recovered) {
    Durable::open(path, EventBus::with_default_ring("durable-test")).expect("store opens")
}

fn pending_ids(path: &Path) -> Vec<String> {
    StoreReader::open(path)
        .expect("reader")
        .journal_pending()
        .expect("pending")
        .into_iter()
        .map(|e| e.request_id)
        .collect()
}

#[test]
fn a_second_read_write_open_of_the_file_is_refused_until_the_owner_closes() {
    within(LIMIT, || {
        let dir = fresh_dir("durable-one-owner");
        let db = dir.join("memory.db");
        let (first, _) = open(&db);
        let err = Durable::open(&db, EventBus::with_default_ring("second"))
            .expect_err("a second owner of one file is refused");
        assert!(matches!(err, StoreError::AlreadyOpen { .. }), "{err}");
        let held = first.clone();
        assert!(first.close(WAIT), "the owner closes");
        let (again, _) = open(&db);
        drop(held);
        assert!(again.close(WAIT));
        let _ = std::fs::remove_dir_all(dir);
    });
}

/// Many clients accept at once: each is offered to the kernel only once its row is committed,
/// and every one is in the journal after.
#[test]
fn inputs_of_many_clients_are_offered_only_once_journaled() {
    within(LIMIT, || {
        let dir = fresh_dir("durable-group");
        let db = dir.join("memory.db");
        let (durable, _) = open(&db);
        const CLIENTS: usize = 16;
        const EACH: usize = 40;
        let offered = Arc::new(AtomicUsize::new(0));
        let (seen_tx, seen_rx) = crossbeam_channel::unbounded();
        // Its own connection: it sees only what is committed.
        let reader = Arc::new(parking_lot::Mutex::new(
            StoreReader::open(&db).expect("reader"),
        ));
        let threads: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let durable = durable.clone();
                let offered = offered.clone();
                let seen_tx = seen_tx.clone();
                let reader = reader.clone();
                std::thread::spawn(move || {
                    for n in 0..EACH {
                        let input = InputEvent::text("cli", format!("client {c} input {n}"));
                        let id = input.request_id.clone();
                        let offered = offered.clone();
                        let seen_tx = seen_tx.clone();
                        let reader = reader.clone();
                        let offer: Offer = Box::new(move |input: InputEvent| {
                            let durable_now = reader
                                .lock()
                                .journal_get(&input.request_id)
                                .expect("read")
                                .is_some();
                            let _ = seen_tx.send((id, durable_now));
                            offered.fetch_add(1, Ordering::Relaxed);
                            None
                        });
                        durable.accept_then(input, "input", offer).expect("queued");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("client");
        }
        assert!(durable.flush(LIMIT));
        drop(seen_tx);
        let seen: Vec<(String, bool)> = seen_rx.iter().collect();
        assert_eq!(seen.len(), CLIENTS * EACH);
        assert!(
            seen.iter().all(|(_, durable)| *durable),
            "an input was offered before its commit"
        );
        assert_eq!(pending_ids(&db).len(), CLIENTS * EACH);
        assert!(durable.close(WAIT));
        let _ = std::fs::remove_dir_all(dir);
    });
}

/// A full disk when the answer is journaled: the caller gets an error, not the answer, and the
/// input is still pending after a restart (it runs again, answered once).
#[test]
fn a_reply_the_journal_cannot_take_is_not_sent_and_its_input_stays_pending() {
    within(LIMIT, || {
        let dir = fresh_dir("durable-full");
        let db = dir.join("memory.db");
        let (durable, _) = open(&db);
        let mut input = InputEvent::text("cli", "what is the answer?");
        let replies = input.reply_channel();
        let id = input.request_id.clone();
        durable.accept(&input, "input").expect("accepted");
        // The disk fills up mid-answer.
        let cap = durable.with_store(|s| s.cap_pages(0)).expect("owner");
        assert!(cap.expect("capped") > 0);
        let answer = "forty-two ".repeat(8 * 1024);
        durable.reply(
            input.take_reply(),
            Reply {
                content: answer.clone(),
                ..Reply::default()
            },
            Vec::new(),
        );
        let got = replies.recv_timeout(WAIT).expect("the caller is answered");
        assert!(got.error, "an error, not the answer: {got:?}");
        assert_ne!(got.content, answer, "the unrecorded answer was sent");
        assert!(got.content.contains("not sent"), "{}", got.content);
        assert!(durable.close(WAIT));
        let (_, recovered) = open(&db);
        let pending: Vec<&str> = recovered
            .pending
            .iter()
            .map(|e| e.request_id.as_str())
            .collect();
        assert_eq!(
            pending,
            [id.as_str()],
            "the input runs again after a restart"
        );
        let _ = std::fs::remove_dir_all(dir);
    });
}

/// An accept the journal cannot take is answered with an error and never offered.
#[test]
fn an_input_the_journal_cannot_take_is_refused_and_never_offered() {
    within(LIMIT, || {
        let dir = fresh_dir("durable-accept-full");
        let db = dir.join("memory.db");
        let (durable, _) = open(&db);
        durable
            .with_store(|s| s.cap_pages(0))
            .expect("owner")
            .expect("capped");
        let mut input = InputEvent::text("cli", "x".repeat(64 * 1024));
        let replies = input.reply_channel();
        let offered = Arc::new(AtomicUsize::new(0));
        let counted = offered.clone();
        let offer: Offer = Box::new(move |_| {
            counted.fetch_add(1, Ordering::Relaxed);
            None
        });
        durable.accept_then(input, "input", offer).expect("queued");
        let got = replies.recv_timeout(WAIT).expect("answered");
        assert!(got.error && got.content.contains("not accepted"), "{got:?}");
        assert!(durable.flush(WAIT));
        assert_eq!(offered.load(Ordering::Relaxed), 0);
        assert!(pending_ids(&db).is_empty());
        assert!(durable.close(WAIT));
        let _ = std::fs::remove_dir_all(dir);
    });
}

/// A flood of clients fills the shared lane while the owner is busy: the kernel's writes still
/// go in at once, and a flush sent after them finds them in the store.
#[test]
fn the_kernel_never_waits_behind_a_flood_of_acceptances() {
    within(LIMIT, || {
        let dir = fresh_dir("durable-lanes");
        let db = dir.join("memory.db");
        let (durable, _) = open(&db);
        // Hold the owner inside one op until released.
        let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
        let (held_tx, held_rx) = crossbeam_channel::bounded::<()>(1);
        let holder = {
            let durable = durable.clone();
            std::thread::spawn(move || {
                durable.with_store(move |_| {
                    let _ = held_tx.send(());
                    let _ = release_rx.recv();
                })
            })
        };
        held_rx.recv_timeout(WAIT).expect("the owner is held");
        // More acceptances than the shared lane holds: the flood's sender ends up waiting.
        let flood = {
            let durable = durable.clone();
            std::thread::spawn(move || {
                for n in 0..STORE_QUEUE + 64 {
                    let input = InputEvent::text("cli", format!("flood {n}"));
                    let offer: Offer = Box::new(|_| None);
                    durable.accept_then(input, "input", offer).expect("queued");
                }
            })
        };
        let full_by = std::time::Instant::now() + WAIT;
        while durable.lanes.shared_len() < STORE_QUEUE {
            assert!(std::time::Instant::now() < full_by, "the shared lane fills");
            std::thread::sleep(Duration::from_millis(5));
        }
        // The kernel's writes do not wait for the owner to drain the flood.
        let started = std::time::Instant::now();
        for n in 0..32 {
            durable.record_event(ContextEvent::new(n, "cli", format!("kernel event {n}")));
        }
        let took = started.elapsed();
        assert!(
            took < Duration::from_millis(500),
            "the kernel's writes waited {took:?} behind client acceptances"
        );
        assert!(!flood.is_finished(), "the flood is still held back");
        release_tx.send(()).expect("release the owner");
        holder.join().expect("holder");
        flood.join().expect("flood");
        assert!(durable.flush(LIMIT));
        let reader = StoreReader::open(&db).expect("reader");
        let events = reader.events_window().expect("events");
        assert_eq!(events.len(), 32, "every kernel write is in the store");
        assert_eq!(pending_ids(&db).len(), STORE_QUEUE + 64);
        assert!(durable.close(WAIT));
        let _ = std::fs::remove_dir_all(dir);
    });
}

/// After a close, handles are refused at once: nothing waits on a lane nobody reads any more.
#[test]
fn a_closed_store_refuses_handles_at_once() {
    within(LIMIT, || {
        let dir = fresh_dir("durable-closed");
        let db = dir.join("memory.db");
        let (durable, _) = open(&db);
        let other = durable.clone();
        assert!(durable.close(WAIT));
        let started = std::time::Instant::now();
        assert!(other.close(WAIT), "a second close is done at once");
        assert!(!other.flush(WAIT), "nothing to flush into");
        assert!(other.with_store(|_| ()).is_none());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "a closed store kept a handle waiting {:?}",
            started.elapsed()
        );
        let _ = std::fs::remove_dir_all(dir);
    });
}
