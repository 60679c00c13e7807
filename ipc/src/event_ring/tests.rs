//! Single-threaded behaviour of the ring: round trips, masks, wrapping, lag, close.

use super::*;
use crate::{EventKind, KindMask, PublishError};

fn ring(slots: u32, payload: u32, max: u32) -> (Publisher, Subscriber) {
    EventRing::new(RingConfig {
        slot_count: slots,
        payload_capacity: payload,
        max_event_len: max,
    })
    .expect("valid config")
    .split()
}

fn payload_for(seq: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seq as usize * 31 + i * 7) as u8)
        .collect()
}

#[test]
fn every_kind_round_trips_with_its_payload() {
    let (mut publisher, subscriber) = ring(64, 4096, 1024);
    let mut reader = subscriber.reader(KindMask::ALL);
    let mut kinds = EventKind::ALL.to_vec();
    kinds.push(EventKind::Unknown);
    for (i, &kind) in kinds.iter().enumerate() {
        let payload = payload_for(i as u64, i * 5 + 1);
        let seq = publisher.publish(kind, &payload).expect("fits");
        assert_eq!(seq, i as u64);
    }
    let mut buf = Vec::new();
    for (i, &kind) in kinds.iter().enumerate() {
        assert_eq!(
            reader.try_next(&mut buf),
            ReadResult::Event {
                seq: i as u64,
                kind
            }
        );
        assert_eq!(buf, payload_for(i as u64, i * 5 + 1));
    }
    assert_eq!(reader.try_next(&mut buf), ReadResult::Empty);
    assert!(buf.is_empty());
    assert_eq!(reader.missed_total(), 0);
}

#[test]
fn empty_payloads_are_events_too() {
    let (mut publisher, subscriber) = ring(4, 64, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    publisher.publish(EventKind::System, b"").expect("fits");
    let mut buf = vec![1, 2, 3];
    assert_eq!(
        reader.try_next(&mut buf),
        ReadResult::Event {
            seq: 0,
            kind: EventKind::System
        }
    );
    assert!(buf.is_empty());
}

#[test]
fn mask_delivers_only_wanted_kinds_and_skips_are_not_misses() {
    let (mut publisher, subscriber) = ring(64, 4096, 256);
    let mut deltas = subscriber.reader(KindMask::of(&[EventKind::ContentDelta]));
    let mut all = subscriber.reader(KindMask::ALL);
    let kinds = [
        EventKind::Stage,
        EventKind::ContentDelta,
        EventKind::ReasoningDelta,
        EventKind::ContentDelta,
        EventKind::Unknown,
    ];
    for kind in kinds {
        publisher
            .publish(kind, kind.as_str().as_bytes())
            .expect("fits");
    }
    let mut buf = Vec::new();
    assert_eq!(
        deltas.try_next(&mut buf),
        ReadResult::Event {
            seq: 1,
            kind: EventKind::ContentDelta
        }
    );
    assert_eq!(buf, b"content_delta");
    assert_eq!(
        deltas.try_next(&mut buf),
        ReadResult::Event {
            seq: 3,
            kind: EventKind::ContentDelta
        }
    );
    assert_eq!(deltas.try_next(&mut buf), ReadResult::Empty);
    assert_eq!(deltas.position(), 5);
    assert_eq!(deltas.missed_total(), 0);
    for (seq, kind) in kinds.into_iter().enumerate() {
        assert_eq!(
            all.try_next(&mut buf),
            ReadResult::Event {
                seq: seq as u64,
                kind
            }
        );
    }
}

#[test]
fn too_large_is_refused_and_uses_no_sequence_number() {
    let (mut publisher, subscriber) = ring(8, 256, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    assert_eq!(
        publisher.publish(EventKind::AgentOutput, &[0u8; 65]),
        Err(PublishError::TooLarge { len: 65, max: 64 })
    );
    assert_eq!(publisher.next_seq(), 0);
    assert_eq!(publisher.publish(EventKind::AgentOutput, &[9u8; 64]), Ok(0));
    let mut buf = Vec::new();
    assert!(matches!(
        reader.try_next(&mut buf),
        ReadResult::Event { seq: 0, .. }
    ));
    assert_eq!(buf, [9u8; 64]);
}

#[test]
fn payload_wraps_correctly_across_many_laps() {
    // 256-byte payload area, odd sizes so payloads straddle the wrap point at every offset.
    let (mut publisher, subscriber) = ring(16, 256, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    let mut buf = Vec::new();
    let mut total_bytes = 0u64;
    for seq in 0..5_000u64 {
        let len = (seq as usize * 13) % 61 + 1;
        total_bytes += len as u64;
        publisher
            .publish(EventKind::ContentDelta, &payload_for(seq, len))
            .expect("fits");
        assert_eq!(
            reader.try_next(&mut buf),
            ReadResult::Event {
                seq,
                kind: EventKind::ContentDelta
            }
        );
        assert_eq!(buf, payload_for(seq, len), "seq {seq}");
    }
    assert!(
        total_bytes > 256 * 100,
        "the test must lap the payload area many times"
    );
    assert_eq!(reader.missed_total(), 0);
}

#[test]
fn slot_overrun_reports_the_exact_count_and_resumes_at_the_oldest() {
    let (mut publisher, subscriber) = ring(8, 4096, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    for seq in 0..20u64 {
        publisher
            .publish(EventKind::ContentDelta, &payload_for(seq, 8))
            .expect("fits");
    }
    let mut buf = Vec::new();
    // 20 published, 8 slots: events 12..20 remain.
    assert_eq!(reader.try_next(&mut buf), ReadResult::Lagged { missed: 12 });
    for seq in 12..20u64 {
        assert_eq!(
            reader.try_next(&mut buf),
            ReadResult::Event {
                seq,
                kind: EventKind::ContentDelta
            }
        );
        assert_eq!(buf, payload_for(seq, 8));
    }
    assert_eq!(reader.try_next(&mut buf), ReadResult::Empty);
    assert_eq!(reader.missed_total(), 12);
}

#[test]
fn payload_overrun_lags_even_when_slots_remain() {
    // 64 slots but only 256 payload bytes: 64-byte events keep just 4 payloads alive.
    let (mut publisher, subscriber) = ring(64, 256, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    for seq in 0..10u64 {
        publisher
            .publish(EventKind::ToolCall, &payload_for(seq, 64))
            .expect("fits");
    }
    let mut buf = Vec::new();
    assert_eq!(reader.try_next(&mut buf), ReadResult::Lagged { missed: 6 });
    for seq in 6..10u64 {
        assert_eq!(
            reader.try_next(&mut buf),
            ReadResult::Event {
                seq,
                kind: EventKind::ToolCall
            }
        );
        assert_eq!(buf, payload_for(seq, 64));
    }
    assert_eq!(reader.missed_total(), 6);
}

#[test]
fn reader_from_oldest_sees_retained_history_only() {
    let (mut publisher, subscriber) = ring(4, 4096, 64);
    for seq in 0..6u64 {
        publisher
            .publish(EventKind::Reasoning, &payload_for(seq, 3))
            .expect("fits");
    }
    let mut late = subscriber.reader_from_oldest(KindMask::ALL);
    let mut now = subscriber.reader(KindMask::ALL);
    assert_eq!(late.position(), 2);
    assert_eq!(now.position(), 6);
    let mut buf = Vec::new();
    assert!(matches!(
        late.try_next(&mut buf),
        ReadResult::Event { seq: 2, .. }
    ));
    assert_eq!(now.try_next(&mut buf), ReadResult::Empty);
}

#[test]
fn dropping_the_publisher_closes_after_the_backlog() {
    let (mut publisher, subscriber) = ring(8, 256, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    publisher.publish(EventKind::System, b"bye").expect("fits");
    assert!(!subscriber.is_closed());
    drop(publisher);
    assert!(subscriber.is_closed());
    let mut buf = Vec::new();
    assert!(matches!(
        reader.try_next(&mut buf),
        ReadResult::Event { seq: 0, .. }
    ));
    assert_eq!(reader.try_next(&mut buf), ReadResult::Closed);
    assert_eq!(
        reader.next_timeout(&mut buf, std::time::Duration::from_secs(5)),
        ReadResult::Closed
    );
}

#[test]
fn no_wake_syscall_while_no_reader_is_parked() {
    let (mut publisher, subscriber) = ring(8, 256, 64);
    let mut reader = subscriber.reader(KindMask::ALL);
    let mut buf = Vec::new();
    for _ in 0..1000 {
        publisher
            .publish(EventKind::ContentDelta, b"token")
            .expect("fits");
        let _ = reader.try_next(&mut buf);
    }
    assert_eq!(publisher.parked_readers(), 0);
    assert_eq!(publisher.wake_syscalls(), 0);
}

#[test]
fn publisher_is_send_not_sync_and_readers_are_send() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Publisher>();
    send::<Reader>();
    send_sync::<Subscriber>();
    // `Publisher: !Sync` and `!Clone` are checked by the compile-fail doc test on `Publisher`.
}

#[test]
fn a_tagged_reader_skips_other_streams_without_counting_them_missed() {
    let (mut publisher, subscriber) = ring(64, 4096, 256);
    let mut mine = subscriber.reader(KindMask::ALL).with_tag(42);
    let mut deltas_of_mine = subscriber
        .reader(KindMask::of(&[EventKind::ContentDelta]))
        .with_tag(42);
    let mut all = subscriber.reader(KindMask::ALL);
    publisher
        .publish_tagged(EventKind::ContentDelta, 7, b"other")
        .expect("fits");
    publisher
        .publish_tagged(EventKind::ContentDelta, 42, b"mine")
        .expect("fits");
    publisher
        .publish(EventKind::ContentDelta, b"untagged")
        .expect("fits");
    publisher
        .publish_tagged(EventKind::Stage, 42, b"my stage")
        .expect("fits");
    let mut buf = Vec::new();
    assert_eq!(
        mine.try_next(&mut buf),
        ReadResult::Event {
            seq: 1,
            kind: EventKind::ContentDelta
        }
    );
    assert_eq!(buf, b"mine");
    assert_eq!(
        mine.try_next(&mut buf),
        ReadResult::Event {
            seq: 3,
            kind: EventKind::Stage
        }
    );
    assert_eq!(mine.try_next(&mut buf), ReadResult::Empty);
    assert_eq!(mine.missed_total(), 0);
    assert!(matches!(
        deltas_of_mine.try_next(&mut buf),
        ReadResult::Event { seq: 1, .. }
    ));
    assert_eq!(deltas_of_mine.try_next(&mut buf), ReadResult::Empty);
    for seq in 0..4 {
        assert!(matches!(all.try_next(&mut buf), ReadResult::Event { seq: s, .. } if s == seq));
    }
}

#[test]
fn a_tagged_reader_that_lags_is_told_the_total_jumped_over() {
    let (mut publisher, subscriber) = ring(8, 4096, 64);
    let mut mine = subscriber.reader(KindMask::ALL).with_tag(1);
    for i in 0..20u64 {
        publisher
            .publish_tagged(EventKind::ContentDelta, i % 2 + 1, &payload_for(i, 8))
            .expect("fits");
    }
    let mut buf = Vec::new();
    // 12 events of both tags were overwritten; the reader cannot tell which were its own.
    assert_eq!(mine.try_next(&mut buf), ReadResult::Lagged { missed: 12 });
    let mut seen = Vec::new();
    while let ReadResult::Event { seq, .. } = mine.try_next(&mut buf) {
        assert_eq!(buf, payload_for(seq, 8));
        seen.push(seq);
    }
    assert_eq!(seen, vec![12, 14, 16, 18]);
}

#[test]
fn a_reader_parked_on_a_doorbell_is_rung_and_an_armed_reader_sees_a_ready_event() {
    let (mut publisher, subscriber) = ring(8, 256, 64);
    let bell = crate::Doorbell::new().expect("eventfd");
    publisher.add_doorbell(bell.try_clone().expect("dup"));
    let mut reader = subscriber.reader(KindMask::ALL);
    reader.set_spin(std::time::Duration::ZERO);
    let waiter = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let got = reader.next_with_doorbell(&mut buf, &bell, std::time::Duration::from_secs(20));
        (got, buf)
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while publisher.parked_readers() == 0 {
        assert!(std::time::Instant::now() < deadline, "reader never armed");
        std::thread::yield_now();
    }
    publisher.publish(EventKind::System, b"ding").expect("fits");
    let (got, buf) = waiter.join().expect("reader");
    assert_eq!(
        got,
        ReadResult::Event {
            seq: 0,
            kind: EventKind::System
        }
    );
    assert_eq!(buf, b"ding");
    assert_eq!(
        publisher.wake_syscalls(),
        1,
        "one eventfd write, no futex wake"
    );

    let other = subscriber.reader(KindMask::ALL);
    let armed = other.arm();
    assert!(!armed.ready());
    publisher.publish(EventKind::System, b"dong").expect("fits");
    assert!(
        armed.ready(),
        "an armed reader must not sleep past a publish"
    );
    drop(armed);
    assert_eq!(publisher.parked_readers(), 0);
    assert!(publisher.remove_doorbell(0).is_some());
    assert!(publisher.remove_doorbell(0).is_none());
}

/// A publish that spares one doorbell rings every other one while a reader is armed, and
/// not the spared one.
#[test]
fn a_spared_doorbell_is_not_rung_and_the_others_are() {
    let (mut publisher, subscriber) = ring(8, 256, 64);
    let spared = crate::Doorbell::new().expect("eventfd");
    let other = crate::Doorbell::new().expect("eventfd");
    let spared_id = publisher.add_doorbell(spared.try_clone().expect("dup"));
    publisher.add_doorbell(other.try_clone().expect("dup"));
    let reader = subscriber.reader(KindMask::ALL);
    let armed = reader.arm();
    publisher
        .publish_sparing(EventKind::System, 0, b"quiet", Some(spared_id))
        .expect("fits");
    let instant = std::time::Duration::ZERO;
    assert!(!spared.wait(instant), "the spared doorbell stays silent");
    assert!(other.wait(instant), "every other doorbell rings");
    publisher
        .publish_tagged(EventKind::System, 0, b"loud")
        .expect("fits");
    assert!(spared.wait(instant), "an ordinary publish rings it");
    drop(armed);
}

#[test]
fn a_tag_filtered_reader_takes_only_the_tags_it_accepts() {
    let (mut publisher, subscriber) = ring(64, 4096, 256);
    let followed = std::sync::Arc::new(std::sync::Mutex::new(vec![42u64]));
    let view = followed.clone();
    let mut pump = subscriber
        .reader(KindMask::of(&[EventKind::ContentDelta]))
        .with_tag_filter(move |tag| view.lock().expect("lock").contains(&tag));
    for (tag, payload) in [(7u64, b"other"), (42, b"mine!"), (0, b"untag")] {
        publisher
            .publish_tagged(EventKind::ContentDelta, tag, payload)
            .expect("fits");
    }
    let mut buf = Vec::new();
    assert_eq!(
        pump.try_next(&mut buf),
        ReadResult::Event {
            seq: 1,
            kind: EventKind::ContentDelta
        }
    );
    assert_eq!(buf, b"mine!");
    assert_eq!(pump.try_next(&mut buf), ReadResult::Empty);
    // A stream followed later is taken from then on; nothing skipped counts as missed.
    followed.lock().expect("lock").push(7);
    publisher
        .publish_tagged(EventKind::ContentDelta, 7, b"later")
        .expect("fits");
    assert!(matches!(
        pump.try_next(&mut buf),
        ReadResult::Event { seq: 3, .. }
    ));
    assert_eq!(buf, b"later");
    assert_eq!(pump.missed_total(), 0);
}
