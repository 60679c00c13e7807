//! One writer, four readers (three fast, one deliberately slow), self-checking payloads.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hearth_ipc::{EventKind, EventRing, KindMask, ReadResult, Reader, RingConfig};

use crate::with_watchdog;

const SLOTS: u32 = 1024;
const PAYLOAD: u32 = 32 * 1024;
/// The writer stays at most this many events ahead of the slowest *fast* reader: with
/// payloads of at most 208 bytes, 128 events fit the 32 KiB payload area, so a fast reader
/// can never be overrun and must receive everything.
const FAST_WINDOW: u64 = 128;
const RUN_FOR: Duration = Duration::from_secs(2);

fn kind_for(seq: u64) -> EventKind {
    EventKind::ALL[(seq % EventKind::ALL.len() as u64) as usize]
}

/// Deterministic bytes for `seq`: its number, then a seq-seeded xorshift stream of a
/// seq-derived length (8..=207). Any mix of two events' bytes, or a short copy, mismatches.
fn fill(seq: u64, out: &mut Vec<u8>) {
    out.clear();
    let len = 8 + (seq.wrapping_mul(2_654_435_761) % 200) as usize;
    out.extend_from_slice(&seq.to_le_bytes());
    let mut x = seq ^ 0x9E37_79B9_7F4A_7C15;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push(x as u8);
    }
}

#[derive(Debug, Default)]
struct Tally {
    received: u64,
    missed: u64,
    lag_reports: u64,
}

/// Read until the ring closes, checking order, lag arithmetic and every payload.
fn drain(mut reader: Reader, mode: Mode, progress: Option<Arc<AtomicU64>>) -> Tally {
    let mut tally = Tally::default();
    let mut buf = Vec::new();
    let mut expected_buf = Vec::new();
    let mut expected_seq = reader.position();
    loop {
        let result = match mode {
            Mode::Parking { spin } => {
                reader.set_spin(spin);
                reader.next_timeout(&mut buf, Duration::from_millis(100))
            }
            Mode::Polling => match reader.try_next(&mut buf) {
                ReadResult::Empty => {
                    thread::yield_now();
                    continue;
                }
                other => other,
            },
            Mode::Slow => match reader.try_next(&mut buf) {
                ReadResult::Empty => {
                    thread::sleep(Duration::from_micros(200));
                    continue;
                }
                other => other,
            },
        };
        match result {
            ReadResult::Event { seq, kind } => {
                assert_eq!(seq, expected_seq, "events out of order");
                assert_eq!(kind, kind_for(seq), "kind of seq {seq}");
                fill(seq, &mut expected_buf);
                assert_eq!(buf, expected_buf, "torn or wrong payload for seq {seq}");
                expected_seq = seq + 1;
                tally.received += 1;
                if let Some(progress) = &progress {
                    progress.store(expected_seq, Ordering::Relaxed);
                }
                if matches!(mode, Mode::Slow) && tally.received % 64 == 0 {
                    // Far slower than the writer: guarantees overruns.
                    thread::sleep(Duration::from_millis(2));
                }
            }
            ReadResult::Lagged { missed } => {
                assert!(missed > 0, "a lag report must count at least one event");
                expected_seq += missed;
                tally.missed += missed;
                tally.lag_reports += 1;
            }
            ReadResult::Empty => {}
            ReadResult::Closed => break,
        }
    }
    assert_eq!(reader.missed_total(), tally.missed);
    tally
}

#[derive(Clone, Copy)]
enum Mode {
    Parking { spin: Duration },
    Polling,
    Slow,
}

#[test]
fn slow_reader_lags_fast_readers_get_everything_and_nothing_is_torn() {
    with_watchdog(Duration::from_secs(60), || {
        let ring = EventRing::new(RingConfig {
            slot_count: SLOTS,
            payload_capacity: PAYLOAD,
            max_event_len: 256,
        })
        .expect("valid config");
        let (mut publisher, subscriber) = ring.split();

        let fast_modes = [
            Mode::Parking {
                spin: Duration::from_micros(10),
            },
            Mode::Parking {
                spin: Duration::ZERO,
            },
            Mode::Polling,
        ];
        let progress: Vec<Arc<AtomicU64>> = fast_modes
            .iter()
            .map(|_| Arc::new(AtomicU64::new(0)))
            .collect();
        let fast: Vec<_> = fast_modes
            .iter()
            .zip(&progress)
            .map(|(&mode, progress)| {
                let reader = subscriber.reader(KindMask::ALL);
                let progress = Arc::clone(progress);
                thread::spawn(move || drain(reader, mode, Some(progress)))
            })
            .collect();
        let slow_reader = subscriber.reader(KindMask::ALL);
        let slow = thread::spawn(move || drain(slow_reader, Mode::Slow, None));

        let started = Instant::now();
        let mut payload = Vec::new();
        while started.elapsed() < RUN_FOR {
            let seq = publisher.next_seq();
            let slowest_fast = progress
                .iter()
                .map(|p| p.load(Ordering::Relaxed))
                .min()
                .expect("three fast readers");
            if seq - slowest_fast >= FAST_WINDOW {
                thread::yield_now();
                continue;
            }
            fill(seq, &mut payload);
            assert_eq!(publisher.publish(kind_for(seq), &payload), Ok(seq));
        }
        let published = publisher.next_seq();
        drop(publisher);

        for handle in fast {
            let tally = handle.join().expect("fast reader");
            assert_eq!(tally.missed, 0, "a fast reader was overrun: {tally:?}");
            assert_eq!(tally.received, published);
        }
        let tally = slow.join().expect("slow reader");
        eprintln!("stress: {published} events published; slow reader {tally:?}");
        assert!(tally.missed > 0, "the slow reader never lagged: {tally:?}");
        assert!(
            tally.received > 0,
            "the slow reader received nothing: {tally:?}"
        );
        assert_eq!(tally.received + tally.missed, published, "{tally:?}");
        assert!(
            published > 10 * u64::from(SLOTS),
            "too few events to lap the ring: {published}"
        );
    });
}
