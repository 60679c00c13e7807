//! Attaching to a segment validates everything before touching anything: a truncated file, an
//! unsealed file or a hostile superblock / area header is refused with a clear error.

use std::os::fd::{AsFd, OwnedFd};

use std::time::Duration;

use hearth_ipc::{IpcError, PluginSegment, Segment, SegmentConfig};
use nix::fcntl::{FcntlArg, SealFlag, fcntl};
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::support::Mapping;
use crate::with_watchdog;

fn small() -> SegmentConfig {
    SegmentConfig {
        ring: hearth_ipc::RingConfig::new(64, 4096),
        arena: hearth_ipc::ArenaConfig {
            block_len: 1024,
            block_count: 16,
        },
        ..SegmentConfig::default()
    }
}

fn dup(segment: &Segment) -> OwnedFd {
    segment.fd().try_clone_to_owned().expect("dup")
}

/// The message of a refused attach (panics if it was accepted).
fn refusal(fd: OwnedFd) -> String {
    match PluginSegment::attach(fd) {
        Ok(_) => panic!("a bad segment was accepted"),
        Err(err) => err.to_string(),
    }
}

/// Write `value` at byte `at` of the segment, attach, restore, and return the refusal.
fn refused_with(segment: &Segment, map: &Mapping, at: usize, value: &[u8]) -> String {
    let target = map.base.as_ptr().wrapping_add(at);
    let mut saved = vec![0u8; value.len()];
    // SAFETY: `at + value.len()` lies inside the mapping (callers pass header offsets), and no
    // other handle reads these bytes while the test scribbles on them.
    unsafe {
        std::ptr::copy_nonoverlapping(target, saved.as_mut_ptr(), value.len());
        std::ptr::copy_nonoverlapping(value.as_ptr(), target, value.len());
    }
    let message = refusal(dup(segment));
    // SAFETY: as above.
    unsafe { std::ptr::copy_nonoverlapping(saved.as_ptr(), target, value.len()) };
    message
}

#[test]
fn a_fresh_segment_attaches_with_its_generation() {
    with_watchdog(Duration::from_secs(30), || {
        let segment = Segment::create(small()).expect("segment");
        let plugin = PluginSegment::attach(dup(&segment)).expect("attach");
        assert_eq!(plugin.generation(), segment.generation());
        assert_eq!(plugin.kernel_pid(), std::process::id());
        assert_eq!(plugin.len(), segment.len());
        assert_eq!(plugin.len(), small().segment_len().expect("valid"));
        assert_eq!(plugin.subscriber().config(), small().ring);
        assert_eq!(plugin.arena().config(), small().arena);
    });
}

#[test]
fn a_hostile_superblock_is_refused_field_by_field() {
    with_watchdog(Duration::from_secs(30), || {
        let segment = Segment::create(small()).expect("segment");
        let len = segment.len();
        let map = Mapping::of_file(&dup(&segment), len);
        let u64le = |v: u64| v.to_le_bytes();
        let cases: [(&str, usize, Vec<u8>, &str); 8] = [
            ("magic", 0, b"EVIL".to_vec(), "magic"),
            (
                "version",
                4,
                9u32.to_le_bytes().to_vec(),
                "layout version 9",
            ),
            ("generation", 8, u64le(0).to_vec(), "generation 0"),
            (
                "total_len",
                16,
                u64le(len as u64 * 2).to_vec(),
                "but the file has",
            ),
            // The context area pointed past the end of the file.
            (
                "context_offset",
                24,
                u64le(len as u64).to_vec(),
                "context area",
            ),
            // A ring area of absurd length.
            ("ring_len", 48, u64le(u64::MAX - 4095).to_vec(), "ring area"),
            // An arena area not on a page boundary.
            ("arena_offset", 56, u64le(4097).to_vec(), "arena area"),
            // The ring moved onto the context area.
            ("ring_offset", 40, u64le(4096).to_vec(), "overlap"),
        ];
        for (name, at, value, expected) in cases {
            let message = refused_with(&segment, &map, at, &value);
            assert!(message.contains(expected), "{name}: {message}");
        }
        // Restored: attaches again.
        PluginSegment::attach(dup(&segment)).expect("restored superblock attaches");
    });
}

#[test]
fn hostile_area_headers_are_refused() {
    with_watchdog(Duration::from_secs(30), || {
        let segment = Segment::create(small()).expect("segment");
        let len = segment.len();
        let map = Mapping::of_file(&dup(&segment), len);
        // The stage-context area starts at 4096; descriptor 0's offset word is at 4096 + 64 + 8.
        let message = refused_with(&segment, &map, 4096 + 64 + 8, &u32::MAX.to_le_bytes());
        assert!(
            message.contains("stage context") && message.contains("RawMessage"),
            "{message}"
        );
        // Descriptor 3 (LLMText) moved onto descriptor 2's bytes.
        let message = refused_with(
            &segment,
            &map,
            4096 + 64 + 3 * 64 + 8,
            &1216u32.to_le_bytes(),
        );
        assert!(message.contains("LLMText"), "{message}");
        // The ring's header (at the ring area) with a non-power-of-two slot count.
        let ring_offset = superblock_word(&map, 40);
        let message = refused_with(&segment, &map, ring_offset + 16, &7u32.to_le_bytes());
        assert!(message.contains("event ring"), "{message}");
        // The arena header claiming more blocks than its area holds.
        let arena_offset = superblock_word(&map, 56);
        let message = refused_with(
            &segment,
            &map,
            arena_offset + 12,
            &1_000_000u32.to_le_bytes(),
        );
        assert!(message.contains("exchange arena"), "{message}");
        PluginSegment::attach(dup(&segment)).expect("restored headers attach");
    });
}

/// A u64 of the superblock (offsets of the areas: ring at 40, arena at 56).
fn superblock_word(map: &Mapping, at: usize) -> usize {
    // SAFETY: `at + 8` lies inside the superblock, the mapping's first 128 bytes.
    let bytes = unsafe { std::ptr::read_unaligned(map.base.as_ptr().add(at).cast::<[u8; 8]>()) };
    u64::from_le_bytes(bytes) as usize
}

#[test]
fn a_truncated_or_unsealed_file_is_refused() {
    with_watchdog(Duration::from_secs(30), || {
        let segment = Segment::create(small()).expect("segment");
        let map = Mapping::of_file(&dup(&segment), segment.len());

        // An unsealed copy of the first page (a file anyone could shrink under the plugin).
        let unsealed = memfd_create(c"unsealed", MFdFlags::MFD_CLOEXEC).expect("memfd");
        copy_prefix(&map, &unsealed, 4096);
        let message = refusal(unsealed);
        assert!(message.contains("F_SEAL_SHRINK"), "{message}");

        // A sealed copy of only the first page: the superblock describes a longer file.
        let truncated = memfd_create(
            c"truncated",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )
        .expect("memfd");
        copy_prefix(&map, &truncated, 4096);
        fcntl(
            truncated.as_fd(),
            FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK),
        )
        .expect("seal");
        let message = refusal(truncated);
        assert!(message.contains("but the file has 4096"), "{message}");

        // A sealed file shorter than the superblock.
        let tiny = memfd_create(c"tiny", MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING)
            .expect("memfd");
        nix::unistd::ftruncate(&tiny, 16).expect("size");
        fcntl(tiny.as_fd(), FcntlArg::F_ADD_SEALS(SealFlag::F_SEAL_SHRINK)).expect("seal");
        assert!(matches!(
            PluginSegment::attach(tiny),
            Err(IpcError::BadSegment {
                area: "superblock",
                ..
            })
        ));
    });
}

fn copy_prefix(map: &Mapping, fd: &OwnedFd, len: usize) {
    // SAFETY: the mapping holds at least `len` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(map.base.as_ptr(), len) };
    nix::unistd::write(fd, bytes).expect("write the copy");
}

#[test]
fn a_segment_is_sealed_against_resizing() {
    with_watchdog(Duration::from_secs(30), || {
        let segment = Segment::create(small()).expect("segment");
        let fd = dup(&segment);
        assert!(
            nix::unistd::ftruncate(&fd, 0).is_err(),
            "shrinking must be refused"
        );
        assert!(
            nix::unistd::ftruncate(&fd, segment.len() as i64 * 2).is_err(),
            "so must growing"
        );
    });
}

#[test]
fn a_doorbell_must_be_an_eventfd() {
    with_watchdog(Duration::from_secs(30), || {
        let segment = Segment::create(small()).expect("segment");
        match hearth_ipc::Doorbell::from_fd(dup(&segment)) {
            Err(IpcError::NotADoorbell { found, .. }) => {
                assert!(found.contains("memfd"), "{found}")
            }
            other => panic!("a memfd was accepted as a doorbell: {other:?}"),
        }
        let bell = hearth_ipc::Doorbell::new().expect("eventfd");
        let copy = hearth_ipc::Doorbell::from_fd(
            std::os::fd::AsFd::as_fd(&bell)
                .try_clone_to_owned()
                .expect("dup"),
        )
        .expect("an eventfd is a doorbell");
        assert!(!copy.drain(), "nothing rung yet");
        bell.ring();
        assert!(copy.drain(), "the copy shares the counter");
        assert!(!bell.wait(Duration::from_millis(1)), "drained by the copy");
    });
}
