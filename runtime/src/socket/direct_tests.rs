//! The lending protocol between the publisher and the reactor: who writes each delta, what
//! comes back, and both writers on their own threads against a slow client.

use super::*;
use std::io::Read;
use std::sync::Arc;

fn publish(streams: &DirectStreams, request_id: &str, content: &str, seq: u64) {
    let delta = Delta {
        content,
        channel: "cli",
        request_id,
        reset: false,
    };
    streams.around(EventKind::ContentDelta, &delta, &mut |_| Some(seq));
}

/// A connected pair, both ends non-blocking as the reactor's sockets are.
fn pair() -> (UnixStream, UnixStream) {
    let (ours, peer) = UnixStream::pair().expect("pair");
    ours.set_nonblocking(true).expect("non-blocking");
    peer.set_nonblocking(true).expect("non-blocking");
    (ours, peer)
}

fn streams() -> DirectStreams {
    DirectStreams::new((7, Doorbell::new().expect("eventfd")))
}

fn line(content: &str) -> Vec<u8> {
    let mut buf = Vec::new();
    DeltaLine {
        content,
        reasoning: false,
        reset: false,
    }
    .write_to(&mut buf);
    buf
}

fn read_all(peer: &mut UnixStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match peer.read(&mut chunk) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return got,
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// A socket is lent only when the feed has read everything published, and only once; the
/// publisher then writes the lent request's deltas and no other's, and the reactor is told
/// it need not.
#[test]
fn a_lent_socket_gets_its_requests_deltas_from_the_publisher() {
    let (ours, mut peer) = pair();
    let streams = streams();
    assert!(
        streams.lend("r", &ours, 4, || 5).is_none(),
        "one delta not read yet"
    );
    assert!(streams.lend("r", &ours, 5, || 5).is_some());
    assert!(streams.lend("r", &ours, 5, || 5).is_none(), "lent already");

    publish(&streams, "r", "hello", 5);
    publish(&streams, "other", "not yours", 6);
    assert_eq!(read_all(&mut peer), line("hello"));
    let mine = Claim {
        written: true,
        rest: None,
    };
    assert_eq!(streams.claim(None, "r", 5), mine);
    let not_lent = Claim {
        written: false,
        rest: None,
    };
    assert_eq!(streams.claim(None, "other", 6), not_lent);
    assert_eq!(streams.end("r"), Some(Vec::new()));
    publish(&streams, "r", "after", 7);
    assert!(
        read_all(&mut peer).is_empty(),
        "taken back: nothing written"
    );
    assert_eq!(streams.claim(None, "r", 7), not_lent);
}

/// A peer that stops reading ends the publisher's turn mid-line: the part it took and the
/// rest handed back make the whole line, and nothing after it is written by the publisher.
#[test]
fn a_full_peer_ends_the_publishers_turn_and_the_rest_comes_back() {
    let (ours, mut peer) = pair();
    let streams = streams();
    assert!(streams.lend("r", &ours, 0, || 0).is_some());
    let big = "y".repeat(48 * 1024);
    let mut seq = 0;
    let rest = loop {
        publish(&streams, "r", &big, seq);
        let claim = streams.claim(None, "r", seq);
        assert!(claim.written, "the publisher began delta {seq}");
        if let Some(rest) = claim.rest {
            break rest;
        }
        seq += 1;
        assert!(seq < 10_000, "a socket buffer is not that large");
    };
    assert!(!rest.is_empty(), "the peer stopped mid-line");
    publish(&streams, "r", "later", seq + 1);
    let not_lent = Claim {
        written: false,
        rest: None,
    };
    assert_eq!(streams.claim(None, "r", seq + 1), not_lent);
    let mut got = read_all(&mut peer);
    got.extend_from_slice(&rest);
    assert_eq!(got, line(&big).repeat(seq as usize + 1));
}

/// The reactor reads deltas long after the publisher wrote them: every one up to the last
/// the publisher wrote stays the publisher's, even after the socket was taken back, so
/// none goes out twice; the rest of a half-written line comes back exactly once.
#[test]
fn a_reactor_that_reads_late_writes_nothing_twice() {
    let (ours, mut peer) = pair();
    let streams = streams();
    let mark = streams.lend("r", &ours, 10, || 10).expect("lent");
    for seq in 10..15 {
        publish(&streams, "r", "word", seq);
    }
    assert_eq!(read_all(&mut peer), line("word").repeat(5));
    // Taken back (a lag notice) before the reactor read any of them.
    assert_eq!(streams.end("r"), Some(Vec::new()));
    assert!(!streams.is_writing("r"));
    publish(&streams, "r", "mine", 15);
    assert!(read_all(&mut peer).is_empty());
    let written = Claim {
        written: true,
        rest: None,
    };
    for seq in 10..15 {
        // The mark answers for every delta but the last without the lock, as the lock would.
        assert_eq!(mark.passed(seq), seq < 14, "delta {seq}");
        assert_eq!(streams.claim(None, "r", seq), written, "delta {seq}");
    }
    let not_lent = Claim {
        written: false,
        rest: None,
    };
    assert_eq!(streams.claim(None, "r", 15), not_lent);
    let mark = streams
        .lend("r", &ours, 16, || 16)
        .expect("lent again once read");

    // A full peer: the publisher stops mid-line; the reactor, reading late, skips what was
    // written and gets the rest at the half-written delta.
    let big = "z".repeat(48 * 1024);
    let mut seq = 16;
    while streams.is_writing("r") {
        publish(&streams, "r", &big, seq);
        seq += 1;
        assert!(seq < 10_000, "a socket buffer is not that large");
    }
    let stopped_at = seq - 1;
    for early in 16..stopped_at {
        assert!(mark.passed(early), "delta {early}");
        assert_eq!(streams.claim(None, "r", early), written, "delta {early}");
    }
    assert!(
        !mark.passed(stopped_at),
        "the half-written delta asks under the lock"
    );
    let claim = streams.claim(None, "r", stopped_at);
    assert!(claim.written);
    let rest = claim.rest.expect("the socket comes back");
    assert!(!rest.is_empty());
    assert_eq!(streams.claim(None, "r", stopped_at + 1), not_lent);
    let mut got = read_all(&mut peer);
    got.extend_from_slice(&rest);
    assert_eq!(got, line(&big).repeat((stopped_at - 15) as usize));
}

/// The publisher and the reactor on their own threads, as in the daemon: the publisher
/// writes each delta while lent and stops at a full socket; the reactor claims every delta
/// after it is published (by the mark when it can, under the lock otherwise), writes what
/// is its own after any rest that comes back, and lends the socket again once it has caught
/// up. Deltas come in bursts (the reactor falls behind, as when it is woken late) with
/// pauses (it catches up and lends), and a slow peer fills the socket. The peer must receive
/// every line exactly once, in order, whoever wrote it.
#[test]
fn two_writers_deliver_every_delta_once_and_in_order() {
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    const DELTAS: u64 = 1_200;
    const BURST: u64 = 24;
    let content = |seq: u64| {
        let pad = "x".repeat(1_000 + (seq as usize * 37) % 3_000);
        format!("{seq:05}{pad}")
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let (ours, mut peer) = pair();
    let streams = Arc::new(streams());
    let published = Arc::new(AtomicU64::new(0));
    // How many deltas the reactor has handled (lend attempt included).
    let handled = Arc::new(AtomicU64::new(0));
    let (seqs_tx, seqs_rx) = mpsc::channel::<u64>();

    let publisher = {
        let streams = Arc::clone(&streams);
        let (published, handled) = (Arc::clone(&published), Arc::clone(&handled));
        std::thread::spawn(move || {
            for seq in 0..DELTAS {
                let text = content(seq);
                let delta = Delta {
                    content: &text,
                    channel: "cli",
                    request_id: "r",
                    reset: false,
                };
                streams.around(EventKind::ContentDelta, &delta, &mut |_| {
                    published.store(seq + 1, Ordering::SeqCst);
                    seqs_tx.send(seq).expect("reactor alive");
                    Some(seq)
                });
                if seq % BURST == BURST - 1 {
                    while handled.load(Ordering::SeqCst) <= seq {
                        assert!(Instant::now() < deadline, "reactor stalled");
                        std::thread::sleep(Duration::from_micros(100));
                    }
                }
            }
        })
    };

    let reactor = {
        let streams = Arc::clone(&streams);
        let (published, handled) = (Arc::clone(&published), Arc::clone(&handled));
        let mut ours = ours;
        std::thread::spawn(move || {
            let mut mark: Option<WrittenMark> = None;
            let (mut by_mark, mut rests) = (0u64, 0u64);
            let flush = |ours: &mut UnixStream, bytes: &[u8]| {
                let mut sent = 0;
                while sent < bytes.len() {
                    match ours.write(&bytes[sent..]) {
                        Ok(n) => sent += n,
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            assert!(Instant::now() < deadline, "peer stalled");
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        Err(e) => panic!("reactor write: {e}"),
                    }
                }
            };
            for seq in 0..DELTAS {
                assert_eq!(seqs_rx.recv().expect("publisher alive"), seq);
                // Counted here; the claim itself answers by the mark as the reactor's does.
                if mark.as_ref().is_some_and(|m| m.passed(seq)) {
                    by_mark += 1;
                }
                let claim = streams.claim(mark.as_ref(), "r", seq);
                if let Some(rest) = claim.rest {
                    mark = None;
                    rests += 1;
                    flush(&mut ours, &rest);
                }
                if !claim.written {
                    flush(&mut ours, &line(&content(seq)));
                }
                // Caught up and nothing owed: lend again, as `lend_clear` does.
                if mark.is_none() && !streams.is_writing("r") {
                    let at = || published.load(Ordering::SeqCst);
                    mark = streams.lend("r", &ours, seq + 1, at);
                }
                handled.store(seq + 1, Ordering::SeqCst);
            }
            if let Some(rest) = streams.forget("r") {
                flush(&mut ours, &rest);
            }
            (by_mark, rests)
        })
    };

    let expected: Vec<u8> = (0..DELTAS).flat_map(|seq| line(&content(seq))).collect();
    let mut got = Vec::with_capacity(expected.len());
    let mut chunk = vec![0u8; 8 * 1024];
    while got.len() < expected.len() {
        assert!(Instant::now() < deadline, "stalled at {} bytes", got.len());
        match peer.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("peer read: {e}"),
        }
        // A slow client: the socket fills and the publisher's writes come up short.
        std::thread::sleep(Duration::from_micros(500));
    }
    publisher.join().expect("publisher");
    let (by_mark, rests) = reactor.join().expect("reactor");
    assert!(
        got == expected,
        "{} bytes received, {} expected",
        got.len(),
        expected.len()
    );
    let counts = streams.counts();
    // Every path was taken: the publisher wrote, the reactor knew it by the mark, and a
    // full socket handed a half-written line back.
    assert!(
        counts["publisher"].as_u64().is_some_and(|n| n > 0),
        "{counts}"
    );
    assert!(
        by_mark > 0 && rests > 0,
        "by the mark {by_mark}, rests {rests}"
    );
}
