//! What may live in memory that another process maps.
//!
//! The model is iceoryx2's `ZeroCopySend`: an `unsafe` marker trait that a type implements only
//! when its bytes mean the same thing in every process that maps them. Every layout type of this
//! crate is declared through [`shm_layout!`](crate::shm_layout), which adds `#[repr(C)]` and checks
//! the rules the compiler can check (every field is itself `ShmSafe`, no padding); the rules it
//! cannot check are the `# Safety` contract below.

#[cfg(not(loom))]
use std::sync::atomic::{AtomicU32, AtomicU64};

/// A type whose values may be placed in a region shared with other processes.
///
/// # Safety
///
/// An implementor must be:
/// - `#[repr(C)]` (or a primitive), so its layout is the one `ipc/DESIGN.md` documents;
/// - free of pointers, references, file descriptors and any other process-local handle: a
///   cross-reference is a byte offset from the region start, a handle travels out of band
///   (fds are inherited at spawn, never written into the region);
/// - free of padding bytes, so no uninitialised byte is ever exposed to a peer;
/// - valid for **every** bit pattern, because a peer (buggy or hostile) may write any bytes:
///   a reader validates values on read and never trusts them for memory safety.
///
/// Declare such types with [`shm_layout!`](crate::shm_layout) rather than implementing this
/// by hand: it checks the field and padding rules at compile time.
///
/// A pointer field does not pass the check:
///
/// ```compile_fail
/// hearth_ipc::shm_layout! {
///     /// A header that points into its own process: meaningless in a peer.
///     pub struct Leaky { len: u64, data: *const u8 }
/// }
/// ```
///
/// Nor does a layout with padding (an uninitialised byte a peer could read):
///
/// ```compile_fail
/// hearth_ipc::shm_layout! {
///     pub struct Padded { flag: u32, value: u64 }
/// }
/// ```
///
/// Plain fixed-size integers, atomics and arrays of them do:
///
/// ```
/// hearth_ipc::shm_layout! {
///     /// Offsets, never pointers.
///     pub struct Span { offset: u32, len: u32, generation: std::sync::atomic::AtomicU64 }
/// }
/// fn shared<T: hearth_ipc::ShmSafe>() {}
/// shared::<Span>();
/// ```
pub unsafe trait ShmSafe: Sized {}

// SAFETY: fixed-size integers have no padding, no pointers, and every bit pattern is a value.
unsafe impl ShmSafe for u8 {}
// SAFETY: as for `u8`.
unsafe impl ShmSafe for u16 {}
// SAFETY: as for `u8`.
unsafe impl ShmSafe for u32 {}
// SAFETY: as for `u8`.
unsafe impl ShmSafe for u64 {}
// SAFETY: as for `u8`.
unsafe impl ShmSafe for i32 {}
// SAFETY: as for `u8`.
unsafe impl ShmSafe for i64 {}
// SAFETY: `AtomicU32` has the size, alignment and bit validity of `u32`; it is how shared
// words are accessed without a data race.
#[cfg(not(loom))]
unsafe impl ShmSafe for AtomicU32 {}
// SAFETY: as for `AtomicU32`, with `u64`.
#[cfg(not(loom))]
unsafe impl ShmSafe for AtomicU64 {}
// SAFETY: an array of `ShmSafe` elements has no padding between them (size is a multiple of
// alignment) and is valid for every bit pattern its elements are.
unsafe impl<T: ShmSafe, const N: usize> ShmSafe for [T; N] {}

/// Declare a struct that lives in shared memory: it becomes `#[repr(C)]`, and compilation fails
/// unless every field type is [`ShmSafe`] and the struct has no padding. Then it implements
/// [`ShmSafe`]. Field and struct attributes (docs) pass through.
///
/// Under `cfg(loom)` the atomics are loom's (heap objects with model state, never mapped), so
/// the checks and the impl are left out there.
#[macro_export]
macro_rules! shm_layout {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        $vis struct $name {
            $($(#[$fmeta])* $fvis $field: $ty),*
        }

        #[cfg(not(loom))]
        const _: () = {
            const fn field_is_shm_safe<T: $crate::ShmSafe>() {}
            $(field_is_shm_safe::<$ty>();)*
            assert!(
                ::core::mem::size_of::<$name>() == 0 $(+ ::core::mem::size_of::<$ty>())*,
                "a shared layout must have no padding bytes"
            );
        };

        // SAFETY: `#[repr(C)]` by construction; every field is `ShmSafe` and there is no
        // padding (both checked at compile time just above), so the struct has no pointer, no
        // uninitialised byte, and every bit pattern is a value.
        #[cfg(not(loom))]
        unsafe impl $crate::ShmSafe for $name {}
    };
}
