//! The one shared segment every plugin process maps: a memfd holding a superblock, the
//! stage-context area, the event ring and the exchange arena (`ipc/DESIGN.md` §2).
//!
//! The kernel [`Segment::create`]s it once for all plugins (the original measured 35–37 % lost
//! updates with a region per plugin) and hands each child the fd as fd 3
//! ([`SEGMENT_FD`]) with its own [`Doorbell`](crate::Doorbell) as fd 4 ([`DOORBELL_FD`]);
//! [`PluginSegment::attach`] on the other side validates every offset and size against the
//! file before touching anything. Handles keep the mapping alive: it is unmapped when the
//! last one drops.

mod arena;
mod inherit;
mod mapping;
mod stage_context;
mod stage_json;
mod superblock;

use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

pub use arena::{Arena, ArenaConfig, ArenaRef, ArenaView, CallFrame, KERNEL_OWNER};
pub use inherit::inherit_plugin_fds;
pub use stage_context::{FieldCapacities, FieldSet, StageContext, StageField, default_capacities};
pub use stage_json::NO_MEMORY;

use crate::{EventRing, IpcError, Publisher, RingConfig, Subscriber};
use mapping::Mapping;
use superblock::{Geometry, SUPERBLOCK_LEN, Superblock};

/// The fd number a plugin child finds its segment at.
pub const SEGMENT_FD: i32 = 3;
/// The fd number a plugin child finds its doorbell (eventfd) at.
pub const DOORBELL_FD: i32 = 4;

/// What a segment holds; fixed at creation (the file is sealed at that size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentConfig {
    /// The event ring's geometry.
    pub ring: RingConfig,
    /// The exchange arena's geometry.
    pub arena: ArenaConfig,
    /// Bytes reserved for each stage-context field.
    pub fields: FieldCapacities,
}

impl Default for SegmentConfig {
    fn default() -> Self {
        SegmentConfig {
            ring: RingConfig::default(),
            arena: ArenaConfig::default(),
            fields: default_capacities(),
        }
    }
}

impl SegmentConfig {
    fn geometry(&self) -> Result<Geometry, IpcError> {
        Ok(Geometry::plan(
            stage_context::area_len(&self.fields),
            self.ring.region_len()?,
            self.arena.area_len()?,
        ))
    }

    /// Total bytes of a segment with this config.
    pub fn segment_len(&self) -> Result<usize, IpcError> {
        Ok(self.geometry()?.total_len)
    }
}

/// Check an area header's magic (Acquire: it is stored last, Release, by the area's `init`)
/// and version; the refusal says what was found.
fn check_header(
    magic: &AtomicU32,
    version: &AtomicU32,
    expected_magic: u32,
    expected_version: u32,
) -> Result<(), String> {
    // SYNC: pairs with the Release store of `magic` in the area's `init`.
    let found = magic.load(Ordering::Acquire);
    let found_version = version.load(Ordering::Relaxed);
    if found != expected_magic || found_version != expected_version {
        return Err(format!(
            "magic {found:#010x} version {found_version}, expected {expected_magic:#010x} \
             version {expected_version}"
        ));
    }
    Ok(())
}

fn superblock(map: &Mapping) -> &Superblock {
    map.at(0)
}

/// A generation no other kernel instance of this machine is likely to share: the clock's
/// nanoseconds mixed with the pid, never 0.
fn instance_generation() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ (u64::from(std::process::id()) << 40)).max(1)
}

/// The kernel's side of the shared segment.
pub struct Segment {
    map: Arc<Mapping>,
    generation: u64,
    publisher: Option<Publisher>,
    subscriber: Subscriber,
    context: StageContext,
    arena: Arena,
}

impl Segment {
    /// Create, size, seal and lay out a new segment.
    pub fn create(config: SegmentConfig) -> Result<Segment, IpcError> {
        let geometry = config.geometry()?;
        let map = Arc::new(Mapping::create(geometry.total_len)?);
        let context = StageContext::init(Arc::clone(&map), geometry.context.offset, &config.fields);
        let arena = Arena::init(Arc::clone(&map), geometry.arena.offset, config.arena);
        // SAFETY: the ring area lies inside the fresh mapping, page-aligned, and nobody else
        // can see the file yet; `map` (held by every handle) keeps it mapped.
        let ring = unsafe {
            EventRing::init_in_kept(
                map.base().add(geometry.ring.offset),
                geometry.ring.len,
                config.ring,
                Arc::clone(&map) as crate::event_ring::KeepAlive,
            )?
        };
        let (publisher, subscriber) = ring.split();
        let generation = instance_generation();
        superblock(&map).write(&geometry, generation);
        Ok(Segment {
            map,
            generation,
            publisher: Some(publisher),
            subscriber,
            context,
            arena,
        })
    }

    /// The segment's fd, to hand to a child (see [`inherit_plugin_fds`]).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.map.fd()
    }

    /// Total bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Always false: a segment has at least its superblock page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// This kernel instance's generation, as recorded in the superblock.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The ring's only publisher (once; `None` after it was taken).
    pub fn take_publisher(&mut self) -> Option<Publisher> {
        self.publisher.take()
    }

    /// The doorbell list of the ring's publisher (while it has not been taken), to add each
    /// plugin child's doorbell to after the publisher has moved elsewhere.
    pub fn doorbells(&self) -> Option<crate::Doorbells> {
        self.publisher.as_ref().map(Publisher::doorbells)
    }

    /// A subscriber to the segment's ring, for in-kernel readers.
    pub fn subscriber(&self) -> Subscriber {
        self.subscriber.clone()
    }

    /// The stage-context area.
    pub fn context(&self) -> &StageContext {
        &self.context
    }

    /// The exchange arena's allocator.
    pub fn arena(&mut self) -> &mut Arena {
        &mut self.arena
    }
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("len", &self.map.len())
            .field("generation", &self.generation)
            .finish()
    }
}

/// A plugin's side of the shared segment.
pub struct PluginSegment {
    map: Arc<Mapping>,
    generation: u64,
    kernel_pid: u32,
    subscriber: Subscriber,
    context: StageContext,
    arena: ArenaView,
}

impl PluginSegment {
    /// Map and validate a segment fd (a plugin's inherited fd 3). Refused unless the file is
    /// sealed against shrinking, the superblock's magic, version and size match the file, and
    /// every area, descriptor and ring header lies inside it: a hostile layout gets a clear
    /// [`IpcError::BadSegment`] (or the ring's `BadMagic`/`BadVersion`/`BadRegion`).
    pub fn attach(fd: OwnedFd) -> Result<PluginSegment, IpcError> {
        let map = Mapping::attach(fd)?;
        if map.len() < SUPERBLOCK_LEN {
            return Err(IpcError::BadSegment {
                area: "superblock",
                reason: format!(
                    "the file has {} bytes, fewer than the superblock",
                    map.len()
                ),
            });
        }
        let map = Arc::new(map);
        let (geometry, generation) = superblock(&map).read(map.len())?;
        let kernel_pid = superblock(&map).kernel_pid.load(Ordering::Relaxed);
        let context = StageContext::attach(
            Arc::clone(&map),
            geometry.context.offset,
            geometry.context.len,
        )?;
        let arena = ArenaView::attach(Arc::clone(&map), geometry.arena.offset, geometry.arena.len)?;
        // SAFETY: the ring area was checked to lie inside the mapping; `map` (held by every
        // handle made from the subscriber) keeps it mapped.
        let subscriber = unsafe {
            EventRing::attach_kept(
                map.base().add(geometry.ring.offset),
                geometry.ring.len,
                Arc::clone(&map) as crate::event_ring::KeepAlive,
            )?
        };
        Ok(PluginSegment {
            map,
            generation,
            kernel_pid,
            subscriber,
            context,
            arena,
        })
    }

    /// The kernel instance's generation (compare with the handshake's).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Pid of the kernel that created the segment.
    pub fn kernel_pid(&self) -> u32 {
        self.kernel_pid
    }

    /// Total bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Always false: a segment has at least its superblock page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// A subscriber to the kernel's event ring.
    pub fn subscriber(&self) -> Subscriber {
        self.subscriber.clone()
    }

    /// The stage-context area.
    pub fn context(&self) -> &StageContext {
        &self.context
    }

    /// The exchange arena.
    pub fn arena(&self) -> &ArenaView {
        &self.arena
    }
}

impl std::fmt::Debug for PluginSegment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginSegment")
            .field("len", &self.map.len())
            .field("generation", &self.generation)
            .finish()
    }
}
