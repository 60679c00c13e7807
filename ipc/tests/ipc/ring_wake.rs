//! Parking: a parked reader is woken by a publish (all of them, by one publish), by the
//! publisher going away, and not by events its mask filters out.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use hearth_ipc::{EventKind, EventRing, KindMask, Publisher, ReadResult, RingConfig};

use crate::with_watchdog;

/// Far longer than any wake takes: a reader that returns well before it was woken.
const PARK_TIMEOUT: Duration = Duration::from_secs(20);

fn small_ring() -> (Publisher, hearth_ipc::Subscriber) {
    EventRing::new(RingConfig::new(64, 4096))
        .expect("valid config")
        .split()
}

fn wait_until_parked(publisher: &Publisher, readers: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while publisher.parked_readers() < readers {
        assert!(Instant::now() < deadline, "readers never parked");
        thread::sleep(Duration::from_millis(1));
    }
    // Parked means "about to sleep or asleep"; either way the publish below must wake it.
}

#[test]
fn parked_reader_is_woken_by_publish() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut publisher, subscriber) = small_ring();
        let mut reader = subscriber.reader(KindMask::ALL);
        reader.set_spin(Duration::ZERO);
        let waiter = thread::spawn(move || {
            let mut buf = Vec::new();
            let started = Instant::now();
            let result = reader.next_timeout(&mut buf, PARK_TIMEOUT);
            (result, buf, started.elapsed())
        });
        wait_until_parked(&publisher, 1);
        assert_eq!(publisher.wake_syscalls(), 0);
        publisher
            .publish(EventKind::ContentDelta, b"wake up")
            .expect("fits");
        let (result, buf, waited) = waiter.join().expect("reader thread");
        assert_eq!(
            result,
            ReadResult::Event {
                seq: 0,
                kind: EventKind::ContentDelta
            }
        );
        assert_eq!(buf, b"wake up");
        assert!(
            waited < PARK_TIMEOUT / 2,
            "reader slept through the wake: {waited:?}"
        );
        assert_eq!(publisher.wake_syscalls(), 1);
    });
}

#[test]
fn one_publish_wakes_every_parked_reader() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut publisher, subscriber) = small_ring();
        let (tx, rx) = mpsc::channel();
        for _ in 0..3 {
            let mut reader = subscriber.reader(KindMask::ALL);
            reader.set_spin(Duration::ZERO);
            let tx = tx.clone();
            thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = tx.send(reader.next_timeout(&mut buf, PARK_TIMEOUT));
            });
        }
        wait_until_parked(&publisher, 3);
        publisher.publish(EventKind::System, b"{}").expect("fits");
        for _ in 0..3 {
            let result = rx
                .recv_timeout(PARK_TIMEOUT / 2)
                .expect("a reader was not woken");
            assert!(matches!(result, ReadResult::Event { seq: 0, .. }));
        }
        assert_eq!(publisher.wake_syscalls(), 1, "one syscall wakes them all");
    });
}

#[test]
fn filtered_events_do_not_end_the_wait() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut publisher, subscriber) = small_ring();
        let mut reader = subscriber.reader(KindMask::of(&[EventKind::ContentDelta]));
        reader.set_spin(Duration::ZERO);
        let waiter = thread::spawn(move || {
            let mut buf = Vec::new();
            (reader.next_timeout(&mut buf, PARK_TIMEOUT), buf)
        });
        wait_until_parked(&publisher, 1);
        publisher.publish(EventKind::Stage, b"stage").expect("fits");
        // The reader wakes, finds only a filtered event, and parks again.
        wait_until_parked(&publisher, 1);
        publisher
            .publish(EventKind::ContentDelta, b"delta")
            .expect("fits");
        let (result, buf) = waiter.join().expect("reader thread");
        assert_eq!(
            result,
            ReadResult::Event {
                seq: 1,
                kind: EventKind::ContentDelta
            }
        );
        assert_eq!(buf, b"delta");
    });
}

#[test]
fn dropping_the_publisher_wakes_a_parked_reader_with_closed() {
    with_watchdog(Duration::from_secs(30), || {
        let (publisher, subscriber) = small_ring();
        let mut reader = subscriber.reader(KindMask::ALL);
        reader.set_spin(Duration::ZERO);
        let waiter = thread::spawn(move || {
            let mut buf = Vec::new();
            let started = Instant::now();
            (
                reader.next_timeout(&mut buf, PARK_TIMEOUT),
                started.elapsed(),
            )
        });
        wait_until_parked(&publisher, 1);
        drop(publisher);
        let (result, waited) = waiter.join().expect("reader thread");
        assert_eq!(result, ReadResult::Closed);
        assert!(waited < PARK_TIMEOUT / 2);
    });
}

#[test]
fn timeout_with_nothing_published_returns_empty_after_the_timeout() {
    with_watchdog(Duration::from_secs(30), || {
        let (_publisher, subscriber) = small_ring();
        let mut reader = subscriber.reader(KindMask::ALL);
        let mut buf = Vec::new();
        let timeout = Duration::from_millis(50);
        let started = Instant::now();
        assert_eq!(reader.next_timeout(&mut buf, timeout), ReadResult::Empty);
        let waited = started.elapsed();
        assert!(waited >= timeout, "returned early: {waited:?}");
        assert!(waited < Duration::from_secs(5), "overslept: {waited:?}");
        assert_eq!(
            reader.next_timeout(&mut buf, Duration::ZERO),
            ReadResult::Empty
        );
    });
}

/// A reader someone waits on (the socket pump) must report a skipped event at once: a terminal
/// line held until the pump's position passes the reply's would otherwise wait for the timeout.
#[test]
fn a_parked_filtering_reader_returns_as_soon_as_it_skips_an_event() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut publisher, subscriber) = small_ring();
        let mut reader = subscriber
            .reader(KindMask::ALL)
            .with_tag_filter(|tag| tag == 7);
        reader.set_spin(Duration::ZERO);
        let waiter = thread::spawn(move || {
            let mut buf = Vec::new();
            let started = Instant::now();
            let result = reader.next_or_skipped(&mut buf, PARK_TIMEOUT);
            (result, reader.position(), started.elapsed())
        });
        wait_until_parked(&publisher, 1);
        publisher
            .publish_tagged(EventKind::ContentDelta, 3, b"someone else's")
            .expect("fits");
        let (result, position, waited) = waiter.join().expect("reader thread");
        assert_eq!(result, ReadResult::Empty);
        assert_eq!(position, 1, "the skipped event is behind the reader");
        assert!(
            waited < PARK_TIMEOUT / 2,
            "the skip waited for the timeout: {waited:?}"
        );
    });
}

/// `next_timeout` keeps its promise: skipped events alone do not end the wait.
#[test]
fn next_timeout_waits_past_skipped_events_for_a_wanted_one() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut publisher, subscriber) = small_ring();
        let mut reader = subscriber
            .reader(KindMask::ALL)
            .with_tag_filter(|tag| tag == 7);
        let mut buf = Vec::new();
        publisher
            .publish_tagged(EventKind::ContentDelta, 3, b"skipped")
            .expect("fits");
        assert_eq!(
            reader.next_timeout(&mut buf, Duration::from_millis(30)),
            ReadResult::Empty
        );
        publisher
            .publish_tagged(EventKind::ContentDelta, 7, b"wanted")
            .expect("fits");
        assert_eq!(
            reader.next_or_skipped(&mut buf, PARK_TIMEOUT),
            ReadResult::Event {
                seq: 1,
                kind: EventKind::ContentDelta
            }
        );
        assert_eq!(buf, b"wanted");
    });
}
