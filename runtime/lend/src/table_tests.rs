//! The table's answers, one move at a time, against a peer with a fixed room.

use super::*;

/// A peer that takes up to `room` bytes in all, then would block; or fails every write.
#[derive(Debug, Default)]
struct Peer {
    took: Vec<u8>,
    room: usize,
    broken: bool,
}

fn peer(room: usize) -> Option<Peer> {
    Some(Peer {
        room,
        ..Peer::default()
    })
}

/// The owner writes it; nothing comes back.
const OWNERS: Claim = Claim {
    written: false,
    rest: None,
};

/// A table with request "r" lent from item 0 over a peer with `room` bytes.
fn lent(room: usize) -> LendTable<Peer> {
    let table = LendTable::new();
    table.lend("r", 0, || 0, || peer(room)).expect("lent");
    table
}

/// Publishes item `seq` ("<seq>\n") of request "r".
fn publish(table: &LendTable<Peer>, seq: u64) -> Wrote {
    table.publish(
        "r",
        |_| Some(seq),
        |peer, line| {
            line.extend_from_slice(format!("{seq}\n").as_bytes());
            if peer.broken {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = line.len().min(peer.room - peer.took.len());
            peer.took.extend_from_slice(&line[..n]);
            Ok(n)
        },
    )
}

#[test]
fn a_writer_is_lent_once_and_only_when_the_owner_has_read_everything() {
    let table = LendTable::new();
    assert!(table.lend("r", 2, || 3, || peer(64)).is_none(), "behind");
    assert!(!table.is_writing("r"));
    assert!(table.lend("r", 3, || 3, || peer(64)).is_some());
    assert!(table.is_writing("r"));
    assert!(
        table.lend("r", 3, || 3, || peer(64)).is_none(),
        "lent already"
    );
    assert!(
        table.lend("s", 3, || 3, || None).is_none(),
        "no writer to lend"
    );
    assert!(!table.is_writing("s"));
}

#[test]
fn items_written_whole_are_the_borrowers_and_the_writer_comes_back_at_the_last() {
    let table = LendTable::new();
    let mark = table.lend("r", 0, || 0, || peer(64)).unwrap();
    for seq in 0..3 {
        assert_eq!(publish(&table, seq), Wrote::Whole);
    }
    assert!(mark.passed(0) && mark.passed(1) && !mark.passed(2));
    assert_eq!(table.claim("r", 1), Claim::WRITTEN);
    assert!(
        table.is_writing("r"),
        "a claim before the last keeps it lent"
    );
    // The last one written, and the borrower still writing: it stays lent.
    assert_eq!(table.claim("r", 2), Claim::WRITTEN);
    assert!(table.is_writing("r"));
    assert_eq!(table.forget("r"), Some(Vec::new()));
    assert_eq!(publish(&table, 3), Wrote::No, "not lent any more");
}

#[test]
fn a_short_write_stops_the_borrower_and_its_rest_comes_back_first() {
    let table = lent(3);
    assert_eq!(publish(&table, 0), Wrote::Whole);
    // "1\n" finds one byte of room.
    assert_eq!(publish(&table, 1), Wrote::Short);
    assert!(!table.is_writing("r"));
    assert_eq!(publish(&table, 2), Wrote::No, "nothing after a short write");
    assert_eq!(table.claim("r", 0), Claim::WRITTEN);
    assert_eq!(
        table.claim("r", 1),
        Claim {
            written: true,
            rest: Some(b"\n".to_vec())
        }
    );
    assert_eq!(table.claim("r", 2), OWNERS, "the owner writes the rest");
}

#[test]
fn a_failed_write_is_handed_back_for_the_owner_to_write() {
    let table = LendTable::new();
    table
        .lend(
            "r",
            0,
            || 0,
            || {
                Some(Peer {
                    broken: true,
                    ..Peer::default()
                })
            },
        )
        .unwrap();
    assert_eq!(publish(&table, 0), Wrote::Failed);
    assert_eq!(
        table.claim("r", 0),
        Claim {
            written: false,
            rest: Some(Vec::new())
        }
    );
    assert!(!table.is_writing("r"));
}

#[test]
fn taken_back_mid_run_the_written_items_stay_the_borrowers() {
    let table = lent(64);
    assert_eq!(publish(&table, 0), Wrote::Whole);
    assert_eq!(publish(&table, 1), Wrote::Whole);
    // The owner has claimed nothing yet and takes the writer back (to write a notice).
    assert_eq!(table.end("r"), Some(Vec::new()));
    assert_eq!(publish(&table, 2), Wrote::No);
    assert_eq!(table.claim("r", 0), Claim::WRITTEN);
    assert_eq!(
        table.claim("r", 1),
        Claim {
            written: true,
            rest: None
        },
        "written, and the writer came back already"
    );
    assert_eq!(table.claim("r", 2), OWNERS);
    // Taken back before anything was written, the entry goes at once.
    table.lend("r", 3, || 3, || peer(64)).unwrap();
    assert_eq!(table.end("r"), Some(Vec::new()));
    assert!(table.end("r").is_none());
}

/// With nothing lent, the owner learns an item is its own to write, and that nothing comes
/// back, without the lock the borrower holds while it publishes.
#[test]
fn with_nothing_lent_the_owner_takes_no_lock() {
    let table: std::sync::Arc<LendTable<Peer>> = std::sync::Arc::new(LendTable::new());
    let held = table.lent.lock();
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::sync::Arc::clone(&table);
    std::thread::spawn(move || {
        let claim = owner.claim("r", 1);
        let writing = owner.is_writing("r");
        let back = (owner.end("r"), owner.forget("r"));
        let _ = tx.send((claim, writing, back));
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("answered while the borrower holds the lock");
    drop(held);
    assert_eq!(got, (OWNERS, false, (None, None)));

    // Once one request is lent, every other's claim asks under the lock, and the count
    // follows the table back to empty.
    assert!(table.lend("r", 0, || 0, || peer(8)).is_some());
    assert!(table.any_lent());
    assert_eq!(table.forget("r"), Some(Vec::new()));
    assert!(!table.any_lent());
}

/// A claim behind the mark is answered by the mark alone, while the borrower holds the lock;
/// the mark's own item asks under it.
#[test]
fn a_claim_behind_the_mark_takes_no_lock() {
    let table = std::sync::Arc::new(lent(64));
    let mark = table.lend("s", 0, || 0, || peer(64)).expect("lent");
    for seq in 0..3 {
        table.publish(
            "s",
            |_| Some(seq),
            |peer, line| {
                line.extend_from_slice(b"x\n");
                peer.took.extend_from_slice(line);
                Ok(line.len())
            },
        );
    }
    let held = table.lent.lock();
    let (tx, rx) = std::sync::mpsc::channel();
    let owner = std::sync::Arc::clone(&table);
    let behind = mark.clone();
    std::thread::spawn(move || {
        let _ = tx.send(owner.claim_by(Some(&behind), "s", 1));
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("answered while the borrower holds the lock");
    drop(held);
    assert_eq!(got, Claim::WRITTEN);
    assert_eq!(table.claim_by(Some(&mark), "s", 2), Claim::WRITTEN);
    assert!(table.is_writing("s"), "the last one written keeps it lent");
}
