//! Property test: any sequence of publishes and reads by one reader matches a simple model of
//! what the ring retains (the last `slot_count` events, each with its payload until the
//! wrapping payload cursor reclaims the bytes), including exact lag counts and mask filtering.

use std::collections::VecDeque;

use hearth_ipc::{EventKind, EventRing, KindMask, PublishError, ReadResult, RingConfig};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Publish { kind: u8, len: usize },
    Read,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..13, 0usize..80).prop_map(|(kind, len)| Op::Publish { kind, len }),
        2 => Just(Op::Read),
    ]
}

fn kind_of(k: u8) -> EventKind {
    EventKind::ALL
        .get(k as usize)
        .copied()
        .unwrap_or(EventKind::Unknown)
}

fn bytes(seq: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (seq as usize ^ (i * 131)) as u8).collect()
}

struct Retained {
    seq: u64,
    kind: EventKind,
    pos: u64,
    payload: Vec<u8>,
}

/// The model: published events with their payload cursor positions.
struct Model {
    slots: u64,
    capacity: u64,
    max: usize,
    events: VecDeque<Retained>,
    written: u64,
    head: u64,
    next: u64,
    mask: KindMask,
}

impl Model {
    fn publish(&mut self, kind: EventKind, payload: Vec<u8>) -> Result<u64, PublishError> {
        if payload.len() > self.max {
            return Err(PublishError::TooLarge {
                len: payload.len(),
                max: self.max,
            });
        }
        let seq = self.written;
        let pos = self.head;
        self.head += payload.len().div_ceil(8) as u64 * 8;
        self.written += 1;
        self.events.push_back(Retained {
            seq,
            kind,
            pos,
            payload,
        });
        if self.events.len() as u64 > self.slots {
            self.events.pop_front();
        }
        Ok(seq)
    }

    fn intact(&self, e: &Retained) -> bool {
        e.pos + self.capacity >= self.head
    }

    /// The oldest retained, payload-intact event at or after `from` (else `written`).
    fn oldest_intact(&self, from: u64) -> u64 {
        self.events
            .iter()
            .find(|e| e.seq >= from && self.intact(e))
            .map_or(self.written, |e| e.seq)
    }

    fn lag_to(&mut self, target: u64) -> (ReadResult, Vec<u8>) {
        let missed = target - self.next;
        self.next = target;
        (ReadResult::Lagged { missed }, Vec::new())
    }

    /// Rules: an event whose slot was reused is lost; an unwanted kind is skipped (not lost,
    /// even if its payload is gone: the kind is still known); a wanted event whose payload
    /// bytes were reclaimed is lost. A loss jumps to the oldest intact event and counts
    /// everything jumped over, whatever its kind.
    fn read(&mut self) -> (ReadResult, Vec<u8>) {
        loop {
            if self.next >= self.written {
                return (ReadResult::Empty, Vec::new());
            }
            if self.next < self.written.saturating_sub(self.slots) {
                return self.lag_to(self.oldest_intact(self.next));
            }
            let e = self
                .events
                .iter()
                .find(|e| e.seq == self.next)
                .expect("an event within the last `slots` is retained");
            if !self.mask.contains(e.kind) {
                self.next += 1;
                continue;
            }
            if !self.intact(e) {
                let target = self.oldest_intact(self.next + 1).max(self.next + 1);
                return self.lag_to(target);
            }
            let delivered = (
                ReadResult::Event {
                    seq: e.seq,
                    kind: e.kind,
                },
                e.payload.clone(),
            );
            self.next += 1;
            return delivered;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn ring_matches_model(
        slots_log in 1u32..5,
        cap_log in 6u32..9,
        mask_kinds in proptest::collection::vec(0u8..13, 0..4),
        ops in proptest::collection::vec(op(), 1..300),
    ) {
        let config = RingConfig {
            slot_count: 1 << slots_log,
            payload_capacity: 1 << cap_log,
            max_event_len: 64,
        };
        let mask = KindMask::of(&mask_kinds.iter().map(|&k| kind_of(k)).collect::<Vec<_>>());
        // A mask made only of Unknown would be empty, i.e. "all"; the model shares KindMask.
        let (mut publisher, subscriber) = EventRing::new(config).expect("valid").split();
        let mut reader = subscriber.reader(mask);
        let mut model = Model {
            slots: u64::from(config.slot_count),
            capacity: u64::from(config.payload_capacity),
            max: 64,
            events: VecDeque::new(),
            written: 0,
            head: 0,
            next: 0,
            mask,
        };
        let mut buf = Vec::new();
        let mut missed = 0;
        for op in ops {
            match op {
                Op::Publish { kind, len } => {
                    let kind = kind_of(kind);
                    let seq = publisher.next_seq();
                    let payload = bytes(seq, len);
                    prop_assert_eq!(publisher.publish(kind, &payload), model.publish(kind, payload));
                }
                Op::Read => {
                    let got = reader.try_next(&mut buf);
                    let (want, want_payload) = model.read();
                    prop_assert_eq!(got, want);
                    if let ReadResult::Lagged { missed: m } = got {
                        missed += m;
                    }
                    prop_assert_eq!(&buf, &want_payload);
                    prop_assert_eq!(reader.position(), model.next);
                }
            }
        }
        prop_assert_eq!(reader.missed_total(), missed);
    }
}
