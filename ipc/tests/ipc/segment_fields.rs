//! Stage-context fields: set / unset / empty are distinct, nothing is truncated, a second
//! writer of one field is refused, a dead writer is recovered, and a reader racing a writer
//! never accepts a torn value.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hearth_ipc::{FieldError, PluginSegment, Segment, SegmentConfig, StageField};

use crate::support::attached;
use crate::with_watchdog;

fn pair() -> (Segment, PluginSegment) {
    attached(SegmentConfig::default())
}

#[test]
fn unset_empty_and_set_are_three_different_values() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = pair();
        let (kernel, plugin) = (segment.context(), plugin.context());
        let mut buf = vec![9];
        assert!(!kernel.read(StageField::Response, &mut buf).expect("read"));
        assert!(buf.is_empty());
        plugin
            .write(StageField::Response, Some(b""))
            .expect("write");
        assert!(kernel.read(StageField::Response, &mut buf).expect("read"));
        assert!(buf.is_empty());
        plugin
            .write(StageField::Response, Some(b"hello"))
            .expect("write");
        assert!(kernel.read(StageField::Response, &mut buf).expect("read"));
        assert_eq!(buf, b"hello");
        plugin.write(StageField::Response, None).expect("unset");
        assert!(!kernel.read(StageField::Response, &mut buf).expect("read"));
        assert_eq!(
            kernel.take_dirty().iter().collect::<Vec<_>>(),
            vec![StageField::Response]
        );
        assert_eq!(kernel.take_dirty().0, 0, "taking the dirty set clears it");
    });
}

#[test]
fn a_value_larger_than_its_field_is_refused_not_truncated() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = pair();
        let context = plugin.context();
        let capacity = context.capacity(StageField::Phase);
        assert_eq!(capacity, 64);
        context
            .write(StageField::Phase, Some(b"tools"))
            .expect("fits");
        let long = vec![b'x'; capacity + 1];
        assert_eq!(
            context.write(StageField::Phase, Some(&long)),
            Err(FieldError::TooLarge {
                field: "Phase",
                len: 65,
                capacity: 64
            })
        );
        let mut buf = Vec::new();
        segment
            .context()
            .read(StageField::Phase, &mut buf)
            .expect("read");
        assert_eq!(buf, b"tools", "the refused write left the old value");
        context
            .write(StageField::Phase, Some(&long[..capacity]))
            .expect("exactly the capacity fits");
    });
}

#[test]
fn neighbouring_fields_keep_their_bytes_when_one_is_rewritten() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = pair();
        let kernel = segment.context();
        for field in StageField::ALL {
            kernel
                .write(field, Some(field.name().as_bytes()))
                .expect("write");
        }
        let context = plugin.context();
        let full = vec![0xFFu8; context.capacity(StageField::GroupId)];
        context
            .write(StageField::GroupId, Some(&full))
            .expect("fill");
        let mut buf = Vec::new();
        for field in StageField::ALL {
            kernel.read(field, &mut buf).expect("read");
            if field == StageField::GroupId {
                assert_eq!(buf, full);
            } else {
                assert_eq!(buf, field.name().as_bytes(), "{} was touched", field.name());
            }
        }
    });
}

#[test]
fn no_memory_flag_is_one_bit_and_stage_seq_counts() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = pair();
        assert!(!plugin.context().no_memory());
        plugin.context().set_no_memory(true);
        assert!(segment.context().no_memory());
        plugin.context().set_no_memory(false);
        assert!(!segment.context().no_memory());
        assert_eq!(segment.context().begin_stage(), 1);
        assert_eq!(segment.context().begin_stage(), 2);
        assert_eq!(plugin.context().stage_seq(), 2);
    });
}

#[test]
fn a_reader_racing_a_writer_never_accepts_a_torn_value() {
    with_watchdog(Duration::from_secs(60), || {
        let (segment, plugin) = pair();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let context = plugin.context().clone();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut i = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    // Every value: `len` copies of the byte `len`, so a torn copy shows.
                    let len = (i % 200) as usize + 1;
                    context
                        .write(StageField::ToolResults, Some(&vec![len as u8; len]))
                        .expect("sole writer");
                    i += 1;
                }
                i
            })
        };
        let mut buf = Vec::new();
        let mut checked = 0u32;
        while checked < 50_000 {
            match segment.context().read(StageField::ToolResults, &mut buf) {
                Ok(true) => {
                    assert!(
                        buf.iter().all(|&b| b as usize == buf.len()),
                        "torn value of {} bytes",
                        buf.len()
                    );
                    checked += 1;
                }
                Ok(false) => {}
                Err(FieldError::Busy { .. }) => {}
                Err(other) => panic!("{other}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        assert!(writer.join().expect("writer") > 0);
    });
}

#[test]
fn a_second_writer_of_one_field_is_refused_and_a_dead_one_recovered() {
    with_watchdog(Duration::from_secs(30), || {
        let (segment, plugin) = pair();
        let (kernel, context) = (segment.context(), plugin.context());
        context
            .write(StageField::Errors, Some(b"[]"))
            .expect("write");
        assert!(!kernel.recover(StageField::Errors), "nobody holds it");
        // A writer that died mid-write leaves the field's version odd. Simulate that by holding
        // the field from another process image: the raw descriptor version word at +0.
        hold_field(&segment, StageField::Errors);
        assert_eq!(
            context.write(StageField::Errors, Some(b"[\"x\"]")),
            Err(FieldError::Busy { field: "Errors" })
        );
        let mut buf = Vec::new();
        assert_eq!(
            kernel.read(StageField::Errors, &mut buf),
            Err(FieldError::Busy { field: "Errors" })
        );
        assert!(kernel.recover(StageField::Errors));
        assert!(
            !kernel
                .read(StageField::Errors, &mut buf)
                .expect("readable again")
        );
        context
            .write(StageField::Errors, Some(b"[]"))
            .expect("writable again");
    });
}

/// Make `field`'s seqlock odd, as a writer that died between its two version updates would.
fn hold_field(segment: &Segment, field: StageField) {
    let map = crate::support::Mapping::of_file(
        &segment.fd().try_clone_to_owned().expect("dup"),
        segment.len(),
    );
    // Stage-context area at 4096; 64-byte header; 64-byte descriptors; version word first.
    let at = 4096 + 64 + 64 * field as usize;
    // SAFETY: inside the mapping, 8-aligned; the descriptor's version is an AtomicU64.
    let version = unsafe {
        &*map
            .base
            .as_ptr()
            .add(at)
            .cast::<std::sync::atomic::AtomicU64>()
    };
    version.fetch_add(1, Ordering::SeqCst);
}
