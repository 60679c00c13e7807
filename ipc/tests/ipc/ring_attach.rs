//! A ring laid out in a memfd and attached through a second, independent mapping of the same
//! file: what a plugin process does. The two mappings have different addresses, so this also
//! proves that nothing in the region is a pointer and that wakes use process-shared futexes.

use std::ptr::NonNull;
use std::thread;
use std::time::Duration;

use hearth_ipc::{EventKind, EventRing, IpcError, KindMask, ReadResult, RingConfig};

use crate::support::{Mapping, memfd_of};
use crate::with_watchdog;

#[test]
fn reader_through_a_second_mapping_reads_and_is_woken() {
    with_watchdog(Duration::from_secs(30), || {
        let config = RingConfig::new(16, 1024);
        let len = config.region_len().expect("valid");
        let fd = memfd_of(len);
        let kernel_side = Mapping::of_file(&fd, len);
        let plugin_side = Mapping::of_file(&fd, len);
        assert_ne!(kernel_side.base, plugin_side.base);
        {
            // SAFETY: fresh mapping of `len` bytes, kept alive until the end of this block,
            // where every handle is dropped first.
            let ring =
                unsafe { EventRing::init_in(kernel_side.base, len, config) }.expect("init_in");
            let (mut publisher, _local) = ring.split();
            // SAFETY: the same file, mapped for `len` bytes, initialised just above, outlives
            // the subscriber (dropped at the end of this block).
            let subscriber = unsafe { EventRing::attach(plugin_side.base, len) }.expect("attach");
            assert_eq!(subscriber.config(), config);

            let mut reader = subscriber.reader(KindMask::ALL);
            reader.set_spin(Duration::ZERO);
            let waiter = thread::spawn(move || {
                let mut buf = Vec::new();
                let first = reader.next_timeout(&mut buf, Duration::from_secs(20));
                let first_payload = buf.clone();
                let mut rest = Vec::new();
                for _ in 0..40 {
                    match reader.next_timeout(&mut buf, Duration::from_secs(20)) {
                        ReadResult::Event { seq, .. } => rest.push((seq, buf.clone())),
                        other => panic!("unexpected {other:?}"),
                    }
                }
                (first, first_payload, rest)
            });
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while publisher.parked_readers() == 0 {
                assert!(std::time::Instant::now() < deadline, "reader never parked");
                thread::sleep(Duration::from_millis(1));
            }
            publisher
                .publish(EventKind::ToolCall, b"across mappings")
                .expect("fits");
            // 40 more, wrapping the 1 KiB payload area through the other mapping.
            for i in 1..=40u64 {
                let payload = vec![i as u8; 20 + i as usize];
                publisher
                    .publish(EventKind::ContentDelta, &payload)
                    .expect("fits");
                thread::sleep(Duration::from_micros(200));
            }
            let (first, first_payload, rest) = waiter.join().expect("reader thread");
            assert_eq!(
                first,
                ReadResult::Event {
                    seq: 0,
                    kind: EventKind::ToolCall
                }
            );
            assert_eq!(first_payload, b"across mappings");
            for (i, (seq, payload)) in rest.into_iter().enumerate() {
                let n = i as u64 + 1;
                assert_eq!(seq, n);
                assert_eq!(payload, vec![n as u8; 20 + n as usize]);
            }
            assert!(publisher.wake_syscalls() >= 1);
        }
    });
}

#[test]
fn attach_validates_the_header() {
    let config = RingConfig::new(8, 256);
    let len = config.region_len().expect("valid");
    let map = Mapping::anonymous(4096);

    // SAFETY (all blocks below): `map` is 4096 writable bytes, alive for the whole test;
    // no ring handle outlives its statement, and header bytes are only scribbled on while
    // no handle exists.
    let zeroed = unsafe { EventRing::attach(map.base, len) };
    assert!(matches!(zeroed, Err(IpcError::BadMagic { found: 0, .. })));

    drop(unsafe { EventRing::init_in(map.base, len, config) }.expect("init_in"));
    assert!(unsafe { EventRing::attach(map.base, len) }.is_ok());
    assert!(
        unsafe { EventRing::attach(map.base, 4096) }.is_ok(),
        "longer mapping is fine"
    );

    let short = unsafe { EventRing::attach(map.base, len - 1) };
    assert!(
        matches!(short, Err(IpcError::BadRegion { .. })),
        "{short:?}"
    );
    let tiny = unsafe { EventRing::attach(map.base, 16) };
    assert!(matches!(tiny, Err(IpcError::BadRegion { .. })), "{tiny:?}");

    let misaligned = NonNull::new(map.base.as_ptr().wrapping_add(4)).expect("non-null");
    let odd = unsafe { EventRing::attach(misaligned, len) };
    assert!(matches!(odd, Err(IpcError::BadRegion { .. })), "{odd:?}");

    // version field at byte 4
    let version = map.base.as_ptr().wrapping_add(4).cast::<u32>();
    unsafe { version.write(1) };
    let old = unsafe { EventRing::attach(map.base, len) };
    assert!(
        matches!(
            old,
            Err(IpcError::BadVersion {
                found: 1,
                expected: 3
            })
        ),
        "{old:?}"
    );
    unsafe { version.write(3) };

    // slot_count at byte 16: a non-power-of-two geometry is refused.
    let slot_count = map.base.as_ptr().wrapping_add(16).cast::<u32>();
    unsafe { slot_count.write(7) };
    let bent = unsafe { EventRing::attach(map.base, len) };
    assert!(matches!(bent, Err(IpcError::BadRegion { .. })), "{bent:?}");
    // A valid geometry that no longer fits the recorded region length is refused too.
    unsafe { slot_count.write(64) };
    let grown = unsafe { EventRing::attach(map.base, 4096) };
    assert!(
        matches!(grown, Err(IpcError::BadRegion { .. })),
        "{grown:?}"
    );

    let too_small = unsafe { EventRing::init_in(map.base, len - 8, config) };
    assert!(matches!(too_small, Err(IpcError::BadRegion { .. })));
}
