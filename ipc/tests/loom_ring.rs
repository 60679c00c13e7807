//! Model check of the slot protocol with loom: every interleaving (up to a preemption bound)
//! of one writer and one or two readers on a 2-slot ring with a payload area that holds only
//! two events. Checks that no reader ever accepts a torn or foreign payload, that events
//! arrive in order, and that `received + missed == published` once a reader has drained.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p hearth-ipc --release --test loom_ring`
#![cfg(loom)]

use hearth_ipc::{EventKind, EventRing, KindMask, ReadResult, Reader, RingConfig};
use loom::thread;

/// Two words that both depend on `seq`: a copy mixing words of two events, or an old word
/// with a new one, fails the check.
fn payload(seq: u64) -> [u8; 16] {
    let word = (seq + 1).wrapping_mul(0x0101_0101_0101_0101);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&word.to_le_bytes());
    bytes[8..].copy_from_slice(&(!word).to_le_bytes());
    bytes
}

#[derive(Default)]
struct Seen {
    next: u64,
    received: u64,
    missed: u64,
}

impl Seen {
    /// Apply one read result, asserting the ring's promises.
    fn apply(&mut self, result: ReadResult, buf: &[u8]) -> bool {
        match result {
            ReadResult::Event { seq, kind } => {
                assert_eq!(seq, self.next, "out of order");
                assert_eq!(kind, EventKind::ContentDelta);
                assert_eq!(buf, payload(seq), "torn payload for seq {seq}");
                self.next = seq + 1;
                self.received += 1;
                true
            }
            ReadResult::Lagged { missed } => {
                assert!(missed > 0);
                self.next += missed;
                self.missed += missed;
                true
            }
            ReadResult::Empty | ReadResult::Closed => false,
        }
    }
}

/// 32 payload bytes hold two 16-byte events, so the third reclaims the first's bytes. With
/// 2 slots the third event also reuses the first's slot; with 4 slots the first event's slot
/// stays valid while its bytes are gone, so only the payload-cursor check can catch it.
fn config(slot_count: u32) -> RingConfig {
    RingConfig {
        slot_count,
        payload_capacity: 32,
        max_event_len: 16,
    }
}

/// A reader's concurrent attempts, then (after the writer is done) its drain.
fn read_concurrently(reader: &mut Reader, attempts: usize) -> Seen {
    let mut seen = Seen::default();
    let mut buf = Vec::new();
    for _ in 0..attempts {
        let result = reader.try_next(&mut buf);
        seen.apply(result, &buf);
    }
    seen
}

fn drain(reader: &mut Reader, seen: &mut Seen) {
    let mut buf = Vec::new();
    loop {
        let result = reader.try_next(&mut buf);
        if !seen.apply(result, &buf) {
            break;
        }
    }
    assert_eq!(reader.missed_total(), seen.missed);
}

/// Explore with at most `preemptions` forced context switches per execution (bounded
/// exhaustive search, as loom recommends); `LOOM_MAX_PREEMPTIONS` overrides it.
fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.check(f);
}

#[test]
fn one_writer_one_reader_payload_reclaimed_before_slot() {
    model(3, || {
        const EVENTS: u64 = 4;
        let (mut publisher, subscriber) = EventRing::new(config(4)).expect("valid").split();
        let mut reader = subscriber.reader(KindMask::ALL);
        let writer = thread::spawn(move || {
            for seq in 0..EVENTS {
                assert_eq!(
                    publisher.publish(EventKind::ContentDelta, &payload(seq)),
                    Ok(seq)
                );
            }
            publisher
        });
        let mut seen = read_concurrently(&mut reader, 3);
        let publisher = writer.join().expect("writer");
        drain(&mut reader, &mut seen);
        assert_eq!(seen.received + seen.missed, EVENTS);
        assert_eq!(seen.next, EVENTS);
        // Nobody parked, so the publisher never needed a wake.
        assert_eq!(publisher.wake_syscalls(), 0);
    });
}

#[test]
fn one_writer_two_readers_slot_reused() {
    model(2, || {
        const EVENTS: u64 = 3;
        let (mut publisher, subscriber) = EventRing::new(config(2)).expect("valid").split();
        let mut first = subscriber.reader(KindMask::ALL);
        let mut second = subscriber.reader(KindMask::ALL);
        let writer = thread::spawn(move || {
            for seq in 0..EVENTS {
                assert_eq!(
                    publisher.publish(EventKind::ContentDelta, &payload(seq)),
                    Ok(seq)
                );
            }
        });
        let other = thread::spawn(move || {
            let seen = read_concurrently(&mut second, 1);
            (second, seen)
        });
        let mut first_seen = read_concurrently(&mut first, 1);
        writer.join().expect("writer");
        let (mut second, mut second_seen) = other.join().expect("reader");
        drain(&mut first, &mut first_seen);
        drain(&mut second, &mut second_seen);
        for seen in [first_seen, second_seen] {
            assert_eq!(seen.received + seen.missed, EVENTS);
            assert_eq!(seen.next, EVENTS);
        }
    });
}
