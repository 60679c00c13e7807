//! Model-checks the lending protocol with loom: an owner reading a request's items in order
//! and a borrower publishing and writing them, over a peer with little room, deliver every
//! item once and in order under every interleaving loom explores; a notice the owner writes
//! after taking the writer back lands after every item the borrower wrote and before every
//! item it did not.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p hearth-lend --release --test loom_lend`
//! (`make loom`).

#![cfg(loom)]

use hearth_lend::{LendTable, WrittenMark};
use loom::sync::atomic::{AtomicU64, Ordering};
use loom::sync::{Arc, Mutex};

/// Items per run: enough for a claim behind the mark, the mark's own claim, and one after.
const ITEMS: u64 = 3;
const NOTICE: &[u8] = b"!\n";

fn item(seq: u64) -> Vec<u8> {
    format!("{seq}\n").into_bytes()
}

/// The connection: what the peer received, in order. The borrower's writes find only `room`
/// bytes in all (the peer reads nothing during a run); the owner's go to its own queue, which
/// drains into the connection in order, modelled as appended at once.
#[derive(Clone)]
struct Conn {
    got: Arc<Mutex<Vec<u8>>>,
    room: usize,
}

impl Conn {
    fn owner_writes(&self, bytes: &[u8]) {
        self.got.lock().unwrap().extend_from_slice(bytes);
    }

    fn borrower_writes(&self, bytes: &[u8]) -> usize {
        let mut got = self.got.lock().unwrap();
        let n = bytes.len().min(self.room.saturating_sub(got.len()));
        got.extend_from_slice(&bytes[..n]);
        n
    }
}

/// One run: the borrower publishes `ITEMS` items on its thread; the owner reads them, claims
/// each, writes what is its own, lends again whenever it has caught up, and, with
/// `notice_after = Some(k)`, takes the writer back after item `k` to write a notice. Returns
/// what the peer received.
fn run(room: usize, notice_after: Option<u64>) -> Vec<u8> {
    let table: Arc<LendTable<Conn>> = Arc::new(LendTable::new());
    let conn = Conn {
        got: Arc::new(Mutex::new(Vec::new())),
        room,
    };
    // The ring's head: items published so far, stored under the table's lock.
    let published = Arc::new(AtomicU64::new(0));

    let borrower = {
        let (table, published) = (Arc::clone(&table), Arc::clone(&published));
        loom::thread::spawn(move || {
            for seq in 0..ITEMS {
                table.publish(
                    "r",
                    |_| {
                        published.store(seq + 1, Ordering::Release);
                        Some(seq)
                    },
                    |conn: &mut Conn, line| {
                        line.extend_from_slice(&item(seq));
                        Ok(conn.borrower_writes(line))
                    },
                );
            }
        })
    };

    let head = || published.load(Ordering::Acquire);
    let mut mark: Option<WrittenMark> = table.lend("r", 0, head, || Some(conn.clone()));
    for seq in 0..ITEMS {
        while head() <= seq {
            loom::thread::yield_now();
        }
        let claim = table.claim_by(mark.as_ref(), "r", seq);
        if let Some(rest) = claim.rest {
            mark = None;
            conn.owner_writes(&rest);
        }
        if !claim.written {
            conn.owner_writes(&item(seq));
        }
        if notice_after == Some(seq) {
            if mark.is_some()
                && let Some(rest) = table.end("r")
            {
                mark = None;
                conn.owner_writes(&rest);
            }
            conn.owner_writes(NOTICE);
        } else if mark.is_none() && !table.is_writing("r") && notice_after.is_none() {
            mark = table.lend("r", seq + 1, head, || Some(conn.clone()));
        }
    }
    if let Some(rest) = table.forget("r") {
        conn.owner_writes(&rest);
    }
    borrower.join().unwrap();
    conn.got.lock().unwrap().clone()
}

fn all_items() -> Vec<u8> {
    (0..ITEMS).flat_map(item).collect()
}

#[test]
fn every_item_reaches_the_peer_once_and_in_order() {
    // No room, room that ends inside the second item, and room for everything.
    for room in [0, 3, 64] {
        loom::model(move || {
            assert_eq!(run(room, None), all_items(), "room {room}");
        });
    }
}

#[test]
fn a_notice_after_taking_the_writer_back_falls_between_items_never_inside_one() {
    for room in [3, 64] {
        loom::model(move || {
            let got = run(room, Some(0));
            // The notice follows item 0 and perhaps items the borrower wrote before the
            // writer came back; the rest follow it. Nothing is lost, doubled or split.
            let at = got
                .windows(NOTICE.len())
                .position(|w| w == NOTICE)
                .expect("the notice is written");
            let mut without = got[..at].to_vec();
            without.extend_from_slice(&got[at + NOTICE.len()..]);
            assert_eq!(without, all_items(), "room {room}: {got:?}");
            assert!(at >= item(0).len(), "after the item it followed: {got:?}");
            assert!(got[..at].ends_with(b"\n"), "not inside an item: {got:?}");
        });
    }
}
