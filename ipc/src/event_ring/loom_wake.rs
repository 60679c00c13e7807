//! Model check of the wake handshake with loom: a reader that found nothing and goes to sleep
//! (on the ring's futex, or announced on its doorbell) while the publisher publishes or
//! closes is always woken, in every interleaving up to the preemption bound. The futex is
//! `notify`'s simulation under loom, so a lost wake leaves the reader asleep with nobody to
//! wake it and loom reports a deadlock; the doorbell is a real eventfd, checked once both
//! threads are done.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p hearth-ipc --release --lib loom_wake`

use std::time::Duration;

use loom::thread;

use crate::{Doorbell, EventKind, EventRing, KindMask, ReadResult, RingConfig};

/// Room for a few small events; the handshake, not the slot protocol, is under test here.
fn config() -> RingConfig {
    RingConfig {
        slot_count: 2,
        payload_capacity: 32,
        max_event_len: 16,
    }
}

/// Explore with at most `preemptions` forced context switches per execution;
/// `LOOM_MAX_PREEMPTIONS` overrides it.
fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    builder.check(f);
}

/// `Reader::next_timeout`'s loop without its spin and clock: read, and park on the futex
/// until something changes. Returns what ended the wait.
fn read_parking(reader: &mut crate::Reader) -> ReadResult {
    let mut buf = Vec::new();
    loop {
        match reader.try_next(&mut buf) {
            ReadResult::Empty => reader.park(Duration::MAX),
            other => return other,
        }
    }
}

#[test]
fn a_reader_parked_on_the_futex_is_woken_by_the_publish() {
    model(3, || {
        let (mut publisher, subscriber) = EventRing::new(config()).expect("valid").split();
        let mut reader = subscriber.reader(KindMask::ALL);
        let writer = thread::spawn(move || {
            assert_eq!(publisher.publish(EventKind::ContentDelta, b"token"), Ok(0));
            // Returned, not dropped: the close would wake the reader too and hide a lost wake.
            publisher
        });
        match read_parking(&mut reader) {
            ReadResult::Event { seq: 0, .. } => {}
            other => panic!("expected event 0, got {other:?}"),
        }
        drop(writer.join().expect("writer"));
    });
}

#[test]
fn a_reader_parked_on_the_futex_is_woken_by_the_close() {
    model(3, || {
        let (publisher, subscriber) = EventRing::new(config()).expect("valid").split();
        let mut reader = subscriber.reader(KindMask::ALL);
        let writer = thread::spawn(move || drop(publisher));
        assert!(matches!(read_parking(&mut reader), ReadResult::Closed));
        writer.join().expect("writer");
    });
}

#[test]
fn a_reader_announced_on_its_doorbell_is_rung_whenever_it_would_sleep() {
    model(3, || {
        let (mut publisher, subscriber) = EventRing::new(config()).expect("valid").split();
        let bell = Doorbell::new().expect("eventfd");
        publisher.add_doorbell(bell.try_clone().expect("dup"));
        let reader = subscriber.reader(KindMask::ALL);
        let writer = thread::spawn(move || {
            assert_eq!(publisher.publish(EventKind::ContentDelta, b"token"), Ok(0));
            publisher
        });
        // The reactor's order: announce, look, and sleep in its poll set only if nothing is
        // there, with the announcement standing until it wakes (here: until the writer is done).
        let armed = reader.arm();
        let sleeps = !armed.ready();
        let publisher = writer.join().expect("writer");
        drop(armed);
        if sleeps {
            assert!(
                bell.drain(),
                "the reader went to sleep on its doorbell and the publish never rang it"
            );
        }
        drop(publisher);
    });
}
