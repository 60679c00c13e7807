//! The segment across real processes: children spawned with the segment at fd 3 and a
//! doorbell at fd 4, attaching exactly as plugins do.

use std::time::{Duration, Instant};

use hearth_ipc::{
    Doorbell, EventKind, KERNEL_OWNER, Publisher, Segment, SegmentConfig, StageField,
};

use crate::support::Peer;
use crate::with_watchdog;

const ROUNDS: u64 = 3_000;

/// A kernel side: a segment, one plugin's doorbell, and the ring's publisher ringing it.
fn kernel(config: SegmentConfig) -> (Segment, Doorbell, Publisher) {
    let mut segment = Segment::create(config).expect("segment");
    let bell = Doorbell::new().expect("doorbell");
    let mut publisher = segment.take_publisher().expect("publisher");
    publisher.add_doorbell(bell.try_clone().expect("dup"));
    (segment, bell, publisher)
}

#[test]
fn two_plugins_writing_different_fields_lose_no_update() {
    with_watchdog(Duration::from_secs(120), || {
        let segment = Segment::create(SegmentConfig::default()).expect("segment");
        let bell = Doorbell::new().expect("doorbell");
        let context = segment.context();
        context
            .write(StageField::Phase, Some(b"llm"))
            .expect("phase");
        let rounds = ROUNDS.to_string();
        let a = StageField::FinalText as usize;
        let b = StageField::Response as usize;
        let first = Peer::spawn(&segment, &bell, &["count-field", &a.to_string(), &rounds]);
        let second = Peer::spawn(&segment, &bell, &["count-field", &b.to_string(), &rounds]);
        // The kernel keeps rewriting a third field meanwhile.
        let mut kernel_writes = 0u64;
        let mut buf = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(300);
        while Instant::now() < deadline {
            kernel_writes += 1;
            context
                .write(
                    StageField::LlmText,
                    Some(kernel_writes.to_string().as_bytes()),
                )
                .expect("only the kernel writes LLMText");
        }
        assert_eq!(first.finish(), vec!["done FinalText"]);
        assert_eq!(second.finish(), vec!["done Response"]);
        for field in [StageField::FinalText, StageField::Response] {
            assert!(context.read(field, &mut buf).expect("stable"));
            assert_eq!(buf, rounds.as_bytes(), "{} lost updates", field.name());
        }
        assert!(context.read(StageField::LlmText, &mut buf).expect("stable"));
        assert_eq!(buf, kernel_writes.to_string().as_bytes());
        assert!(context.read(StageField::Phase, &mut buf).expect("stable"));
        assert_eq!(buf, b"llm", "an untouched field changed");
        let dirty = context.take_dirty();
        assert!(dirty.contains(StageField::FinalText) && dirty.contains(StageField::Response));
        assert!(!dirty.contains(StageField::ToolCalls));
    });
}

#[test]
fn a_tagged_plugin_reader_sleeps_on_its_doorbell_and_sees_only_its_stream() {
    with_watchdog(Duration::from_secs(60), || {
        let (segment, bell, mut publisher) = kernel(SegmentConfig::default());
        let mut peer = Peer::spawn(&segment, &bell, &["ring", "50", "7"]);
        assert_eq!(peer.line(), "ready");
        for i in 0..100u64 {
            let tag = if i % 2 == 0 { 7 } else { 8 };
            let text = format!("tag{tag}:{i}");
            publisher
                .publish_tagged(EventKind::ContentDelta, tag, text.as_bytes())
                .expect("fits");
            // Let the reader fall asleep between some events, so doorbell wakes are exercised.
            if i % 10 == 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        assert_eq!(peer.finish(), vec!["received 50 missed 0"]);
        assert!(
            publisher.wake_syscalls() > 0,
            "the sleeping reader was rung"
        );
    });
}

#[test]
fn a_plugin_that_falls_behind_is_told_how_many_it_missed() {
    with_watchdog(Duration::from_secs(60), || {
        let config = SegmentConfig {
            ring: hearth_ipc::RingConfig::new(16, 4096),
            ..SegmentConfig::default()
        };
        let (segment, bell, mut publisher) = kernel(config);
        let mut peer = Peer::spawn(&segment, &bell, &["ring", "40", "1", "gate"]);
        assert_eq!(peer.line(), "ready");
        // The child reads only once all 40 are out: the 16-slot ring has overrun it by 24.
        let mut seq = 0;
        for i in 0..40u64 {
            seq = publisher
                .publish_tagged(EventKind::ContentDelta, 1, format!("tag1:{i}").as_bytes())
                .expect("fits");
        }
        assert_eq!(seq, 39);
        peer.send("go");
        let lines = peer.finish();
        let summary = lines.last().expect("summary");
        let (received, missed) = parse_summary(summary);
        assert_eq!(received + missed, 40, "{lines:?}");
        let lagged: u64 = lines
            .iter()
            .filter_map(|l| l.strip_prefix("lagged "))
            .map(|n| n.parse::<u64>().expect("count"))
            .sum();
        assert_eq!(lagged, missed, "every loss was reported: {lines:?}");
        assert_eq!((received, missed), (16, 24), "{lines:?}");
    });
}

fn parse_summary(line: &str) -> (u64, u64) {
    let words: Vec<&str> = line.split(' ').collect();
    assert_eq!(words[0], "received", "{line}");
    (
        words[1].parse().expect("received"),
        words[3].parse().expect("missed"),
    )
}

#[test]
fn tool_calls_round_trip_through_the_arena_with_no_bytes_in_the_pipe() {
    with_watchdog(Duration::from_secs(60), || {
        let (mut segment, bell, mut publisher) = kernel(SegmentConfig::default());
        const OWNER: u32 = 1;
        let calls = 20u32;
        let mut peer = Peer::spawn(&segment, &bell, &["echo", &calls.to_string()]);
        assert_eq!(peer.line(), "ready");
        let mut result = Vec::new();
        for i in 0..calls {
            let args: Vec<u8> = (0..(i * 997 + 3)).map(|b| (b * 7 + i) as u8).collect();
            let arena = segment.arena();
            let call = arena
                .alloc_call(&args, args.len() as u32, OWNER)
                .expect("frame");
            publisher
                .publish(EventKind::ToolCall, &call.encode())
                .expect("fits");
            let deadline = Instant::now() + Duration::from_secs(20);
            while !arena
                .call_result(&call, OWNER, &mut result)
                .expect("valid frame")
            {
                assert!(Instant::now() < deadline, "call {i} never completed");
                std::hint::spin_loop();
            }
            let mut expected = args.clone();
            expected.reverse();
            assert_eq!(result, expected, "call {i}");
            arena.free(&call.frame, OWNER).expect("free");
            assert!(
                arena.call_result(&call, OWNER, &mut result).is_err(),
                "a freed frame is stale"
            );
        }
        assert_eq!(peer.finish(), vec![format!("answered {calls}")]);
        assert_eq!(
            segment.arena().free_blocks(),
            segment.arena().config().block_count
        );
        assert_eq!(segment.arena().reclaim_owner(KERNEL_OWNER), 0);
    });
}

#[test]
fn a_plugin_forging_references_gets_errors_and_breaks_nothing() {
    with_watchdog(Duration::from_secs(60), || {
        let mut segment = Segment::create(SegmentConfig::default()).expect("segment");
        let bell = Doorbell::new().expect("doorbell");
        let arena = segment.arena();
        let other = arena.alloc(64, 2).expect("another plugin's block");
        arena.write(&other, 2, 0, b"not yours").expect("write");
        let valid = arena.alloc(24, 1).expect("frame");
        arena
            .write(&valid, 1, 0, b"issued to plugin one....")
            .expect("write");
        let mut peer = Peer::spawn(&segment, &bell, &["forge"]);
        peer.send(&serde_json::to_string(&valid).expect("json"));
        let lines = peer.finish();
        for name in [
            "outside",
            "before",
            "unaligned",
            "stale",
            "too-long",
            "overlong-write",
        ] {
            let line = lines
                .iter()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no line for {name}: {lines:?}"));
            assert!(line.contains("refused"), "{line}");
        }
        assert!(
            lines.contains(&"still-works issued to plugin one....".to_string()),
            "{lines:?}"
        );
        // Kernel side: a reference forged from another owner's block is refused too, and that
        // block is intact.
        let arena = segment.arena();
        assert!(matches!(
            arena.resolve(&other, 1),
            Err(hearth_ipc::ArenaError::NotOwner {
                owner: 1,
                holder: 2
            })
        ));
        let mut buf = Vec::new();
        arena.read(&other.prefix(9), 2, &mut buf).expect("intact");
        assert_eq!(buf, b"not yours");
    });
}

#[test]
fn a_plugin_outlives_the_kernels_mapping_and_cannot_shrink_the_file() {
    with_watchdog(Duration::from_secs(60), || {
        let segment = Segment::create(SegmentConfig::default()).expect("segment");
        let bell = Doorbell::new().expect("doorbell");
        segment
            .context()
            .write(StageField::FinalText, Some(b"written before unmap"))
            .expect("write");
        let mut peer = Peer::spawn(&segment, &bell, &["outlive"]);
        assert_eq!(peer.line(), "ready");
        drop(segment);
        peer.send("go");
        let lines = peer.finish();
        assert_eq!(lines[0], "read written before unmap");
        assert!(
            lines[1].starts_with("shrink ") && lines[1] != "shrink allowed",
            "{lines:?}"
        );
    });
}

#[test]
fn the_kernel_unmaps_after_its_children_stopped() {
    with_watchdog(Duration::from_secs(60), || {
        let segment = Segment::create(SegmentConfig::default()).expect("segment");
        let bell = Doorbell::new().expect("doorbell");
        let peers: Vec<Peer> = (0..3)
            .map(|i| {
                let field = (StageField::ToolCalls as usize + i).to_string();
                Peer::spawn(&segment, &bell, &["count-field", &field, "10"])
            })
            .collect();
        for peer in peers {
            assert_eq!(peer.finish().len(), 1);
        }
        let mut buf = Vec::new();
        assert!(
            segment
                .context()
                .read(StageField::Memory, &mut buf)
                .expect("read")
        );
        assert_eq!(buf, b"10");
        // Dropping the last handle unmaps; nothing maps the file any more.
        drop(segment);
    });
}
