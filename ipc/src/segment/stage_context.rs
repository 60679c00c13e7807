//! The stage-context area: one descriptor and one fixed byte range per field, so a plugin that
//! changes one field never touches another's bytes (the original's one-region-per-plugin copy
//! model lost 35–37 % of updates; per-field ranges lose none).
//!
//! Each field is its own seqlock (`version`, odd while written). Writers take a field by moving
//! its version from even to odd with a compare-exchange, which also refuses a second writer of
//! the same field (writers of one field serialise through the control plane's stage lock; this
//! is the guard against one that did not). Readers copy and re-check the version, so they never
//! accept a torn value. Layout: `ipc/DESIGN.md` §2.2.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use crate::sync::spin_hint;
use crate::{FieldError, IpcError, words};

use super::check_header;
use super::mapping::Mapping;

/// "HASH" read big-endian, the original's stage-context magic.
const MAGIC: u32 = 0x4841_5348;
/// Version 2: the original's was 1 (8-byte descriptors into an append-only arena).
const VERSION: u32 = 2;
const HEADER_LEN: usize = 64;
const DESCRIPTOR_LEN: usize = 64;
/// A reader gives up (`Busy`) after this many attempts that found the field being written.
const READ_ATTEMPTS: u32 = 100_000;

macro_rules! stage_fields {
    ($($variant:ident = $name:literal, $capacity:expr;)*) => {
        /// The fields of a stage context, in the original's descriptor order. Values are bytes:
        /// text as UTF-8, the list fields as JSON.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum StageField { $(
            #[doc = concat!("`", $name, "`")]
            $variant
        ),* }

        impl StageField {
            /// Every field, in descriptor order.
            pub const ALL: [StageField; StageField::COUNT] = [$(StageField::$variant),*];

            /// The field's name (the original's Go field name, dotted for `Extra` entries).
            pub const fn name(self) -> &'static str {
                match self { $(StageField::$variant => $name),* }
            }

            /// Capacity a segment gives this field unless configured otherwise.
            pub const fn default_capacity(self) -> u32 {
                match self { $(StageField::$variant => $capacity),* }
            }
        }
    };
}

stage_fields! {
    RawMessage = "RawMessage", 16 * 1024;
    UserId = "UserID", 256;
    GroupId = "GroupID", 256;
    LlmText = "LLMText", 32 * 1024;
    ReasoningContent = "ReasoningContent", 32 * 1024;
    FinalText = "FinalText", 32 * 1024;
    Response = "Response", 32 * 1024;
    Phase = "Phase", 64;
    ContextMsgs = "ContextMsgs", 64 * 1024;
    ToolCalls = "ToolCalls", 16 * 1024;
    ToolResults = "ToolResults", 32 * 1024;
    Memory = "Memory", 16 * 1024;
    TokenUsage = "TokenUsage", 512;
    Errors = "Errors", 4 * 1024;
    MediaBlocks = "Extra.media_blocks", 16 * 1024;
    MediaType = "Extra.media_type", 64;
    InputSource = "Extra.input_source", 256;
    OutputChannel = "Extra.output_channel", 256;
}

impl StageField {
    /// Number of fields.
    pub const COUNT: usize = 18;

    /// This field's bit in a [`FieldSet`].
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// A set of fields (bit `1 << field` each), e.g. the fields written since the kernel last looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FieldSet(pub u32);

impl FieldSet {
    /// Whether `field` is in the set.
    pub fn contains(self, field: StageField) -> bool {
        self.0 & field.bit() != 0
    }

    /// The fields in the set, in descriptor order.
    pub fn iter(self) -> impl Iterator<Item = StageField> {
        StageField::ALL
            .into_iter()
            .filter(move |f| self.contains(*f))
    }
}

/// Byte capacity of every field, chosen by the segment's creator.
pub type FieldCapacities = [u32; StageField::COUNT];

/// The default capacities ([`StageField::default_capacity`]).
pub fn default_capacities() -> FieldCapacities {
    StageField::ALL.map(StageField::default_capacity)
}

crate::shm_layout! {
/// Header of the stage-context area (64 bytes).
struct ContextHeader {
    magic: AtomicU32,          // 0
    version: AtomicU32,        // 4
    field_count: AtomicU32,    // 8
    descriptor_len: AtomicU32, // 12
    /// Bumped by the kernel each time it loads a new stage's context.
    stage_seq: AtomicU64,      // 16
    /// Fields written since the kernel last took the set (bit per field).
    dirty: AtomicU32,          // 24
    /// Bit 0: NoMemory.
    flags: AtomicU32,          // 28
    _reserved: [u64; 4],       // 32..64
}
}

crate::shm_layout! {
/// One field's descriptor (64 bytes, a cache line of its own, so writers of different fields
/// never share a line).
struct Descriptor {
    /// Seqlock: even = stable, odd = being written.
    version: AtomicU64,  // 0
    /// Data offset from the area start (fixed at init, multiple of 8).
    offset: AtomicU32,   // 8
    /// Data capacity in bytes (fixed at init, multiple of 8).
    capacity: AtomicU32, // 12
    /// Low 32 bits: value length; bit 32: value present (a set empty value differs from unset).
    meta: AtomicU64,     // 16
    /// Pid of the process that holds (or last held) the field for writing.
    writer: AtomicU32,   // 24
    _reserved0: u32,     // 28
    _reserved1: [u64; 4], // 32..64
}
}

const _: () = {
    use std::mem::size_of;
    assert!(size_of::<ContextHeader>() == HEADER_LEN);
    assert!(size_of::<Descriptor>() == DESCRIPTOR_LEN);
};

const PRESENT: u64 = 1 << 32;
const NO_MEMORY: u32 = 1;

/// Bytes the area needs for these capacities (each rounded up to whole words).
pub(crate) fn area_len(capacities: &FieldCapacities) -> usize {
    let data: usize = capacities
        .iter()
        .map(|&c| words::count(c as usize) * 8)
        .sum();
    HEADER_LEN + DESCRIPTOR_LEN * StageField::COUNT + data
}

#[derive(Debug, Clone, Copy)]
struct FieldGeometry {
    offset: usize,
    capacity: usize,
}

/// A handle on the stage-context area, on either side of the segment.
#[derive(Clone)]
pub struct StageContext {
    map: Arc<Mapping>,
    /// Area offset from the mapping start.
    area: usize,
    /// Cached at init/attach; a peer rewriting descriptors later cannot move an access.
    fields: [FieldGeometry; StageField::COUNT],
}

fn bad(reason: String) -> IpcError {
    IpcError::BadSegment {
        area: "stage context",
        reason,
    }
}

impl StageContext {
    /// Lay the area out (kernel side) over `area_len` zeroed bytes at `area`.
    pub(crate) fn init(
        map: Arc<Mapping>,
        area: usize,
        capacities: &FieldCapacities,
    ) -> StageContext {
        let mut offset = HEADER_LEN + DESCRIPTOR_LEN * StageField::COUNT;
        let fields = capacities.map(|c| {
            let geometry = FieldGeometry {
                offset,
                capacity: words::count(c as usize) * 8,
            };
            offset += geometry.capacity;
            geometry
        });
        let context = StageContext { map, area, fields };
        for (field, geometry) in StageField::ALL.iter().zip(&fields) {
            let d = context.descriptor(*field);
            d.offset.store(geometry.offset as u32, Ordering::Relaxed);
            d.capacity
                .store(geometry.capacity as u32, Ordering::Relaxed);
        }
        let header = context.header();
        header
            .field_count
            .store(StageField::COUNT as u32, Ordering::Relaxed);
        header
            .descriptor_len
            .store(DESCRIPTOR_LEN as u32, Ordering::Relaxed);
        header.version.store(VERSION, Ordering::Relaxed);
        // SYNC: pairs with the Acquire load of `magic` in `StageContext::attach`.
        header.magic.store(MAGIC, Ordering::Release);
        context
    }

    /// Validate an area someone else laid out (plugin side): header, field count, and every
    /// descriptor's range aligned, in order, non-overlapping and inside `len` bytes.
    pub(crate) fn attach(
        map: Arc<Mapping>,
        area: usize,
        len: usize,
    ) -> Result<StageContext, IpcError> {
        let table = HEADER_LEN + DESCRIPTOR_LEN * StageField::COUNT;
        if len < table {
            return Err(bad(format!("{len} bytes cannot hold the descriptor table")));
        }
        let mut context = StageContext {
            map,
            area,
            fields: [FieldGeometry {
                offset: 0,
                capacity: 0,
            }; StageField::COUNT],
        };
        let header = context.header();
        // SYNC: `check_header`'s Acquire load of `magic` pairs with its Release store in
        // `StageContext::init`.
        check_header(&header.magic, &header.version, MAGIC, VERSION).map_err(bad)?;
        let count = header.field_count.load(Ordering::Relaxed);
        let dlen = header.descriptor_len.load(Ordering::Relaxed);
        if count as usize != StageField::COUNT || dlen as usize != DESCRIPTOR_LEN {
            return Err(bad(format!(
                "{count} descriptors of {dlen} bytes, expected {} of {DESCRIPTOR_LEN}",
                StageField::COUNT
            )));
        }
        let mut floor = table;
        for (i, field) in StageField::ALL.iter().enumerate() {
            let d = context.descriptor(*field);
            let offset = d.offset.load(Ordering::Relaxed) as usize;
            let capacity = d.capacity.load(Ordering::Relaxed) as usize;
            let in_bounds = offset >= floor
                && offset.is_multiple_of(8)
                && capacity.is_multiple_of(8)
                && offset + capacity <= len;
            if !in_bounds {
                return Err(bad(format!(
                    "field {} at {offset} with capacity {capacity} is misaligned, overlaps the \
                     previous field or leaves the {len}-byte area",
                    field.name()
                )));
            }
            floor = offset + capacity;
            context.fields[i] = FieldGeometry { offset, capacity };
        }
        Ok(context)
    }

    fn header(&self) -> &ContextHeader {
        self.map.at(self.area)
    }

    fn descriptor(&self, field: StageField) -> &Descriptor {
        self.map
            .at(self.area + HEADER_LEN + DESCRIPTOR_LEN * field as usize)
    }

    fn data(&self, field: StageField) -> &[AtomicU64] {
        let g = self.fields[field as usize];
        self.map.words(self.area + g.offset, g.capacity / 8)
    }

    /// The byte capacity of `field`.
    pub fn capacity(&self, field: StageField) -> usize {
        self.fields[field as usize].capacity
    }

    /// Set `field` to `value` (`None` unsets it; `Some(b"")` is a set, empty value). Touches
    /// only this field's descriptor and bytes, then marks it dirty.
    ///
    /// # Errors
    /// [`FieldError::TooLarge`] (never truncated) or [`FieldError::Busy`] if another process
    /// is writing this field; either way nothing was written.
    pub fn write(&self, field: StageField, value: Option<&[u8]>) -> Result<(), FieldError> {
        let bytes = value.unwrap_or_default();
        let capacity = self.capacity(field);
        if bytes.len() > capacity {
            return Err(FieldError::TooLarge {
                field: field.name(),
                len: bytes.len(),
                capacity,
            });
        }
        let d = self.descriptor(field);
        let busy = FieldError::Busy {
            field: field.name(),
        };
        let stable = d.version.load(Ordering::Relaxed);
        if stable & 1 == 1 {
            return Err(busy);
        }
        // SYNC: Acquire pairs with the Release compare-exchange that ended the previous write
        // (in `write` or `recover`), so this write is ordered after it.
        if d.version
            .compare_exchange(stable, stable + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(busy);
        }
        d.writer.store(std::process::id(), Ordering::Relaxed);
        // SYNC: pairs with `fence(Acquire)` in `read`: a reader whose copy saw any store below
        // also sees the odd version, and retries.
        fence(Ordering::Release);
        let present = if value.is_some() { PRESENT } else { 0 };
        d.meta
            .store(present | bytes.len() as u64, Ordering::Relaxed);
        words::store(self.data(field), bytes);
        // SYNC: pairs with the Acquire version load in `read` and the Acquire compare-exchange
        // of the next `write`. A compare-exchange, not a store: if the kernel recovered the
        // field from under this writer (it was presumed dead), the write is refused.
        d.version
            .compare_exchange(stable + 1, stable + 2, Ordering::Release, Ordering::Relaxed)
            .map_err(|_| busy)?;
        // SYNC: pairs with the Acquire swap in `take_dirty`.
        self.header().dirty.fetch_or(field.bit(), Ordering::Release);
        Ok(())
    }

    /// Copy `field`'s value into `buf` (replacing its contents); `Ok(false)` if it is unset.
    ///
    /// # Errors
    /// [`FieldError::Busy`] if no stable copy could be taken (a writer held the field for the
    /// whole attempt, e.g. it died mid-write; the kernel then calls [`recover`](Self::recover)).
    pub fn read(&self, field: StageField, buf: &mut Vec<u8>) -> Result<bool, FieldError> {
        let d = self.descriptor(field);
        let capacity = self.capacity(field);
        for _ in 0..READ_ATTEMPTS {
            buf.clear();
            // SYNC: pairs with the Release compare-exchange that ends a `write`.
            let before = d.version.load(Ordering::Acquire);
            if before & 1 == 1 {
                spin_hint();
                continue;
            }
            let meta = d.meta.load(Ordering::Relaxed);
            let len = (meta & u64::from(u32::MAX)) as usize;
            // A length beyond the capacity is a torn or forged value: never copy it.
            if len <= capacity {
                words::load(self.data(field), len, buf);
            }
            // SYNC: pairs with `fence(Release)` in `write`.
            fence(Ordering::Acquire);
            if d.version.load(Ordering::Relaxed) == before && len <= capacity {
                return Ok(meta & PRESENT != 0);
            }
        }
        buf.clear();
        Err(FieldError::Busy {
            field: field.name(),
        })
    }

    /// Kernel side, after the process writing `field` died mid-write: clear the field (its
    /// bytes may be torn) and release it. Returns whether it was held. Calling it while the
    /// writer lives makes that writer's write fail with `Busy`, never corrupt the field.
    pub fn recover(&self, field: StageField) -> bool {
        let d = self.descriptor(field);
        let held = d.version.load(Ordering::Relaxed);
        if held & 1 == 0 {
            return false;
        }
        d.meta.store(0, Ordering::Relaxed);
        // SYNC: pairs with the Acquire version load in `read` and the Acquire compare-exchange
        // in `write`, as the end of a write does.
        d.version
            .compare_exchange(held, held + 1, Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// Pid of the process that holds (or last held) `field` for writing.
    pub fn writer(&self, field: StageField) -> u32 {
        self.descriptor(field).writer.load(Ordering::Relaxed)
    }

    /// Kernel side: the fields written since the last call, clearing the set.
    pub fn take_dirty(&self) -> FieldSet {
        // SYNC: pairs with the Release `fetch_or` in `write`.
        FieldSet(self.header().dirty.swap(0, Ordering::Acquire))
    }

    /// The NoMemory flag of the stage context.
    pub fn no_memory(&self) -> bool {
        self.header().flags.load(Ordering::Relaxed) & NO_MEMORY != 0
    }

    /// Set or clear the NoMemory flag (one atomic bit; other flags are untouched).
    pub fn set_no_memory(&self, on: bool) {
        let flags = &self.header().flags;
        if on {
            flags.fetch_or(NO_MEMORY, Ordering::Relaxed);
        } else {
            flags.fetch_and(!NO_MEMORY, Ordering::Relaxed);
        }
    }

    /// The stage sequence number (the kernel bumps it per stage it loads).
    pub fn stage_seq(&self) -> u64 {
        self.header().stage_seq.load(Ordering::Relaxed)
    }

    /// Kernel side: start a new stage; returns its sequence number.
    pub fn begin_stage(&self) -> u64 {
        self.header().stage_seq.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl std::fmt::Debug for StageContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StageContext")
            .field("area", &self.area)
            .field("stage_seq", &self.stage_seq())
            .finish()
    }
}
