//! `Publisher::publish` never allocates and, while no reader is parked, makes no syscall.
//!
//! A counting global allocator lives in this file alone (it is process-wide); it counts only
//! on threads that opted in, so the test harness's own allocations do not interfere.
#![cfg(not(loom))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use hearth_ipc::{EventKind, EventRing, KindMask, ReadResult, RingConfig};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    // Per thread, so another test allocating concurrently is never counted here.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn counted<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    let value = f();
    COUNTING.with(|c| c.set(false));
    (value, ALLOCATIONS.with(Cell::get) - before)
}

#[test]
fn counting_allocator_sees_allocations() {
    // Guards the test below against a counter that never counts.
    let (v, n) = counted(|| vec![1u8; 100]);
    assert_eq!(v.len(), 100);
    assert!(n >= 1);
}

#[test]
fn publish_neither_allocates_nor_wakes_without_parked_readers() {
    let (mut publisher, subscriber) = EventRing::new(RingConfig::new(256, 16 * 1024))
        .expect("valid config")
        .split();
    // Readers exist but are not parked: they must cost the publisher nothing.
    let mut reader = subscriber.reader(KindMask::ALL);
    let _idle = subscriber.reader(KindMask::of(&[EventKind::System]));
    let payload = [7u8; 64];
    let big = vec![1u8; 4096];
    let (last, allocations) = counted(|| {
        let mut last = 0;
        for i in 0..100_000u32 {
            let kind = EventKind::from_code(i % 12);
            let p: &[u8] = if i % 1000 == 0 {
                &big
            } else {
                &payload[..(i % 65) as usize]
            };
            last = publisher.publish(kind, p).expect("fits");
        }
        assert!(publisher.publish(EventKind::System, &[]).is_ok());
        last
    });
    assert_eq!(allocations, 0, "publish allocated");
    assert_eq!(last, 99_999);
    assert_eq!(publisher.next_seq(), 100_001);
    assert_eq!(publisher.wake_syscalls(), 0, "publish made a wake syscall");

    let too_big = vec![0u8; publisher.max_event_len() + 1];
    let (refused, allocations) = counted(|| publisher.publish(EventKind::System, &too_big));
    assert!(refused.is_err());
    assert_eq!(allocations, 0, "a refused publish allocated");

    let mut buf = Vec::new();
    assert!(matches!(
        reader.try_next(&mut buf),
        ReadResult::Lagged { .. }
    ));
}
