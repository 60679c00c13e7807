//! The exchange arena's allocator and its checks, kernel side and plugin side.

use std::time::Duration;

use hearth_ipc::{
    ArenaConfig, ArenaError, ArenaRef, CallFrame, PluginSegment, Segment, SegmentConfig,
};

use crate::support::attached;
use crate::with_watchdog;

fn pair(blocks: u32) -> (Segment, PluginSegment) {
    let config = SegmentConfig {
        arena: ArenaConfig {
            block_len: 256,
            block_count: blocks,
        },
        ..SegmentConfig::default()
    };
    attached(config)
}

#[test]
fn blocks_round_trip_and_freed_references_turn_stale() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut segment, plugin) = pair(8);
        let arena = segment.arena();
        let r = arena.alloc(600, 1).expect("three blocks");
        assert_eq!(arena.free_blocks(), 5);
        arena.write(&r, 1, 0, &[5u8; 600]).expect("write");
        let mut buf = Vec::new();
        plugin.arena().read(&r, &mut buf).expect("plugin reads");
        assert_eq!(buf, vec![5u8; 600]);

        arena.free(&r, 1).expect("free");
        assert_eq!(arena.free_blocks(), 8);
        assert!(matches!(
            plugin.arena().read(&r, &mut buf),
            Err(ArenaError::Stale { .. })
        ));
        assert!(buf.is_empty());
        assert!(
            matches!(arena.free(&r, 1), Err(ArenaError::Stale { .. })),
            "double free"
        );
        // Reuse of the same blocks: the old reference still reads nothing.
        let again = arena.alloc(16, 1).expect("alloc");
        assert_eq!(again.offset, r.offset);
        assert_ne!(again.generation, r.generation);
        assert!(matches!(
            plugin.arena().read(&r, &mut buf),
            Err(ArenaError::Stale { .. })
        ));
        assert!(matches!(
            arena.resolve(&r, 1),
            Err(ArenaError::Stale { .. })
        ));
    });
}

#[test]
fn allocation_limits_are_explicit_errors() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut segment, _plugin) = pair(4);
        let arena = segment.arena();
        assert_eq!(
            arena.alloc(4 * 256 + 1, 1),
            Err(ArenaError::TooLarge {
                len: 1025,
                room: 1024
            })
        );
        let a = arena.alloc(256, 1).expect("a");
        let b = arena.alloc(256, 1).expect("b");
        let _c = arena.alloc(512, 1).expect("c");
        assert_eq!(
            arena.alloc(1, 1),
            Err(ArenaError::Full { needed: 1, free: 0 })
        );
        arena.free(&a, 1).expect("free a");
        // One free block, but not two contiguous ones.
        assert_eq!(
            arena.alloc(300, 1),
            Err(ArenaError::Full { needed: 2, free: 1 })
        );
        arena.free(&b, 1).expect("free b");
        arena.alloc(300, 1).expect("two contiguous blocks now");
    });
}

#[test]
fn a_result_too_large_for_its_frame_is_refused_then_expanded() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut segment, plugin) = pair(16);
        let frame = segment.arena().alloc(64, 1).expect("frame");
        let result = vec![7u8; 1000];
        assert_eq!(
            plugin.arena().write(&frame, 8, &result),
            Err(ArenaError::TooLarge {
                len: 1000,
                room: 56
            })
        );
        // What the control plane's `arena.alloc` does for the plugin: an expansion block.
        let expansion = segment
            .arena()
            .alloc(1000, 1)
            .expect("expansion")
            .with_flags(ArenaRef::EXPAND | ArenaRef::BINARY);
        plugin.arena().write(&expansion, 0, &result).expect("fits");
        let mut buf = Vec::new();
        segment
            .arena()
            .read(&expansion, 1, &mut buf)
            .expect("kernel reads");
        assert_eq!(buf, result);
        assert_eq!(segment.arena().reclaim_owner(1), 2, "frame and expansion");
        assert_eq!(segment.arena().free_blocks(), 16);
    });
}

#[test]
fn forged_references_are_refused_by_both_sides() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut segment, plugin) = pair(8);
        let mine = segment.arena().alloc(100, 1).expect("mine");
        let theirs = segment.arena().alloc(100, 2).expect("theirs");
        let forged = [
            ArenaRef { offset: 0, ..mine },
            ArenaRef {
                offset: mine.offset + 4,
                ..mine
            },
            ArenaRef {
                offset: u32::MAX,
                ..mine
            },
            ArenaRef {
                len: 100_000,
                ..mine
            },
            ArenaRef {
                generation: 0,
                ..mine
            },
        ];
        let mut buf = Vec::new();
        for r in forged {
            assert!(
                segment.arena().read(&r, 1, &mut buf).is_err(),
                "kernel accepted {r:?}"
            );
            assert!(
                plugin.arena().read(&r, &mut buf).is_err(),
                "view accepted {r:?}"
            );
        }
        assert_eq!(
            segment.arena().resolve(&theirs, 1),
            Err(ArenaError::NotOwner {
                owner: 1,
                holder: 2
            })
        );
        // A plugin that scribbles over the shared block headers fools only its own view; the
        // kernel's table still refuses the stale reference.
        segment.arena().free(&mine, 1).expect("free");
        assert!(matches!(
            segment.arena().resolve(&mine, 1),
            Err(ArenaError::Stale { .. })
        ));
        segment
            .arena()
            .resolve(&theirs, 2)
            .expect("the other block is untouched");
    });
}

#[test]
fn completion_is_checked_against_the_frame() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut segment, plugin) = pair(8);
        let frame = segment.arena().alloc(64, 1).expect("frame");
        assert_eq!(segment.arena().completion(&frame, 1), Ok(None));
        assert!(matches!(
            plugin.arena().complete(&frame, 65),
            Err(ArenaError::TooLarge { .. })
        ));
        plugin.arena().write(&frame, 0, b"done").expect("write");
        plugin.arena().complete(&frame, 4).expect("complete");
        assert_eq!(segment.arena().completion(&frame, 1), Ok(Some(4)));
        // A completion of an earlier allocation of the same block does not count for the next.
        segment.arena().free(&frame, 1).expect("free");
        let next = segment.arena().alloc(64, 1).expect("next");
        assert_eq!(segment.arena().completion(&next, 1), Ok(None));
    });
}

#[test]
fn call_frames_encode_place_the_result_after_the_arguments_and_check_its_length() {
    with_watchdog(Duration::from_secs(30), || {
        let (mut segment, plugin) = pair(8);
        let call = segment
            .arena()
            .alloc_call(b"{\"q\":1}", 32, 1)
            .expect("frame");
        assert_eq!(call.args_len, 7);
        assert_eq!(call.result_offset(), 8);
        assert_eq!(call.result_room(), 32);
        let wire = call.encode();
        assert_eq!(CallFrame::decode(&wire), Some(call));
        assert_eq!(CallFrame::decode(&wire[..19]), None);

        let mut buf = Vec::new();
        plugin.arena().read_args(&call, &mut buf).expect("args");
        assert_eq!(buf, b"{\"q\":1}");
        assert!(
            !segment
                .arena()
                .call_result(&call, 1, &mut buf)
                .expect("pending")
        );
        assert!(matches!(
            plugin.arena().answer(&call, &[0u8; 33]),
            Err(ArenaError::TooLarge { len: 33, room: 32 })
        ));
        // A plugin announcing more than the room (a forged completion) is refused.
        plugin
            .arena()
            .complete(&call.frame, 39)
            .expect("within the frame");
        assert!(matches!(
            segment.arena().call_result(&call, 1, &mut buf),
            Err(ArenaError::OutOfBounds { .. })
        ));
        plugin.arena().answer(&call, b"ok").expect("fits");
        assert!(
            segment
                .arena()
                .call_result(&call, 1, &mut buf)
                .expect("done")
        );
        assert_eq!(buf, b"ok");
    });
}
