//! The kernel's side of the data plane: the one shared segment every plugin child maps as fd 3,
//! a doorbell per child as fd 4, and the exchange arena through which large tool arguments and
//! results travel instead of the pipe (`ipc/PROTOCOL.md` §9).

use std::os::fd::{AsFd, OwnedFd};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use hearth_ipc::{
    ArenaError, ArenaRef, CallFrame, Doorbell, Doorbells, KERNEL_OWNER, Publisher, Segment,
    SegmentConfig, StageContext, Subscriber,
};
use parking_lot::{Mutex, MutexGuard};
use serde_json::{Value, json};

use crate::PluginError;
use crate::stage_lock::StageLocks;
use crate::supervisor::SpawnError;

/// Layout version of the `data_plane` offer in the handshake.
pub const DATA_PLANE_VERSION: u32 = 1;

/// JSON payloads at most this long travel inline on the pipe; longer ones through the arena.
/// Well under the 1 MiB frame limit, so the envelope around a payload always fits.
pub const INLINE_LIMIT: usize = 256 * 1024;

/// Room a call frame leaves for the result after large arguments: above the inline limit, so
/// a result too large for the pipe but not huge is answered in place; a longer one gets its
/// own block (`arena.alloc`).
pub const FRAME_RESULT_ROOM: u32 = 2 * INLINE_LIMIT as u32;

/// The segment and the doorbells, created once when the daemon starts and shared by every
/// plugin child.
pub struct DataPlane {
    /// A close-on-exec duplicate of the segment's memfd, what each child inherits as fd 3.
    fd: OwnedFd,
    len: usize,
    generation: u64,
    subscriber: Subscriber,
    doorbells: Doorbells,
    /// The segment, for its arena's allocator and its stage-context area.
    segment: Mutex<Segment>,
    /// Arena owner ids, one per child process start (the kernel is 0).
    next_owner: AtomicU32,
    /// Held by the kernel from loading a stage context into the area until it has read the
    /// handler's fields back: the area holds one context at a time, so plugin stage calls of
    /// concurrent turns take turns on it.
    stage_area: Mutex<()>,
    /// `stage.lock` / `stage.unlock`.
    pub(crate) locks: StageLocks,
}

impl DataPlane {
    /// Creates the segment. Take its ring's publisher with [`take_publisher`](Self::take_publisher)
    /// for the kernel's event bus: every event it publishes then reaches the plugins' readers.
    pub fn create(config: SegmentConfig) -> Result<Arc<DataPlane>, PluginError> {
        let segment = Segment::create(config).map_err(PluginError::DataPlane)?;
        let fd = segment.fd().try_clone_to_owned().map_err(|e| {
            PluginError::DataPlane(hearth_ipc::IpcError::Os {
                op: "dup of the segment fd",
                source: nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(0)),
            })
        })?;
        let doorbells = segment
            .doorbells()
            .expect("a fresh segment still holds its publisher");
        Ok(Arc::new(DataPlane {
            fd,
            len: segment.len(),
            generation: segment.generation(),
            subscriber: segment.subscriber(),
            doorbells,
            segment: Mutex::new(segment),
            next_owner: AtomicU32::new(KERNEL_OWNER + 1),
            stage_area: Mutex::new(()),
            locks: StageLocks::new(),
        }))
    }

    /// The ring's only publisher, once (`None` afterwards). Every plugin's doorbell is rung by
    /// it while that plugin's reader sleeps.
    pub fn take_publisher(&self) -> Option<Publisher> {
        self.segment.lock().take_publisher()
    }

    /// A subscriber to the segment's ring, for readers inside the kernel.
    pub fn subscriber(&self) -> Subscriber {
        self.subscriber.clone()
    }

    /// Total bytes of the segment.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a segment has at least its superblock page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Allocates a block owned by the kernel itself (for payloads the kernel writes for
    /// plugins to read); free it with [`free_for_kernel`](Self::free_for_kernel).
    pub fn alloc_for_kernel(&self, size: u32) -> Result<ArenaRef, ArenaError> {
        self.alloc(size, KERNEL_OWNER)
    }

    /// Frees a block from [`alloc_for_kernel`](Self::alloc_for_kernel).
    pub fn free_for_kernel(&self, r: &ArenaRef) -> Result<(), ArenaError> {
        self.free(r, KERNEL_OWNER)
    }

    /// Doorbells of the children alive now.
    pub fn doorbells(&self) -> usize {
        self.doorbells.len()
    }

    /// Runs `f` on the stage-context area.
    pub fn with_context<T>(&self, f: impl FnOnce(&StageContext) -> T) -> T {
        f(self.segment.lock().context())
    }

    /// How long `stage.lock` waits for its holder ([`STAGE_LOCK_WAIT`](crate::STAGE_LOCK_WAIT)
    /// unless set here).
    pub fn set_stage_lock_wait(&self, wait: std::time::Duration) {
        self.locks.set_wait(wait);
    }

    /// The plugin holding `stage`'s `stage.lock`, if any.
    pub fn stage_lock_holder(&self, stage: hearth_stages::Stage) -> Option<String> {
        self.locks.holder(stage)
    }

    /// The stage-context area for one plugin stage call, waiting up to `timeout` for the call
    /// using it now.
    pub(crate) fn stage_area(&self, timeout: std::time::Duration) -> Option<MutexGuard<'_, ()>> {
        self.stage_area.try_lock_for(timeout)
    }

    /// Blocks of the arena not allocated now.
    pub fn free_blocks(&self) -> u32 {
        self.segment.lock().arena().free_blocks()
    }

    /// Sets up one child start: a fresh arena owner id and a doorbell the publisher rings.
    pub(crate) fn child(&self) -> Result<ChildPlane, SpawnError> {
        let doorbell = |source| SpawnError::Doorbell { source };
        let bell = Doorbell::new().map_err(doorbell)?;
        let ring_copy = bell.try_clone().map_err(doorbell)?;
        let bell_id = self.doorbells.add(ring_copy);
        Ok(ChildPlane {
            owner: self.next_owner.fetch_add(1, Ordering::Relaxed),
            bell,
            bell_id,
        })
    }

    /// The child finds the segment at fd 3 and its doorbell at fd 4.
    pub(crate) fn inherit(&self, cmd: &mut Command, child: &ChildPlane) {
        hearth_ipc::inherit_plugin_fds(cmd, self.fd.as_fd(), child.bell.as_fd());
    }

    /// The `data_plane` object of the handshake offer.
    pub(crate) fn offer(&self, child: &ChildPlane) -> Value {
        json!({
            "version": DATA_PLANE_VERSION,
            "segment_fd": hearth_ipc::SEGMENT_FD,
            "doorbell_fd": hearth_ipc::DOORBELL_FD,
            "segment_len": self.len,
            "generation": self.generation,
            "owner": child.owner,
            "inline_limit": INLINE_LIMIT,
        })
    }

    /// The child exited: stop ringing its doorbell, release the stage locks it held and free
    /// every block it held.
    pub(crate) fn release(&self, child: ChildPlane) -> u32 {
        self.doorbells.remove(child.bell_id);
        let locks = self.locks.release_owner(child.owner);
        if locks > 0 {
            tracing::info!(
                owner = child.owner,
                locks,
                "stage locks of an exited plugin released"
            );
        }
        self.segment.lock().arena().reclaim_owner(child.owner)
    }

    /// Allocates a block of `size` bytes for `owner` (`arena.alloc`).
    pub(crate) fn alloc(&self, size: u32, owner: u32) -> Result<ArenaRef, ArenaError> {
        self.segment.lock().arena().alloc(size, owner)
    }

    /// Frees `owner`'s block `r` (`arena.free`); a forged or stale one is refused.
    pub(crate) fn free(&self, r: &ArenaRef, owner: u32) -> Result<(), ArenaError> {
        self.segment.lock().arena().free(r, owner)
    }

    /// A call frame for `owner` holding `args`, with [`FRAME_RESULT_ROOM`] after them.
    pub(crate) fn alloc_call(&self, args: &[u8], owner: u32) -> Result<CallFrame, ArenaError> {
        self.segment
            .lock()
            .arena()
            .alloc_call(args, FRAME_RESULT_ROOM, owner)
    }

    /// The result the plugin wrote into `call` (`None` if it never completed the frame), then
    /// frees the frame either way.
    pub(crate) fn finish_call(
        &self,
        call: &CallFrame,
        owner: u32,
    ) -> Result<Option<Vec<u8>>, ArenaError> {
        let mut segment = self.segment.lock();
        let arena = segment.arena();
        let mut buf = Vec::new();
        let done = arena.call_result(call, owner, &mut buf);
        // The frame goes back whatever the plugin claimed; a frame it already freed (or forged)
        // is refused here, and that refusal is the answer below.
        let freed = arena.free(&call.frame, owner);
        let done = done?;
        freed?;
        Ok(done.then_some(buf))
    }

    /// Reads `owner`'s block `r` (a result handed back by reference) and frees it. The
    /// reference is checked against the kernel's own table first: a forged, stale or foreign
    /// one is refused and nothing is read.
    pub(crate) fn take_block(&self, r: &ArenaRef, owner: u32) -> Result<Vec<u8>, ArenaError> {
        let mut segment = self.segment.lock();
        let arena = segment.arena();
        let mut buf = Vec::new();
        arena.read(r, owner, &mut buf)?;
        arena.free(r, owner)?;
        Ok(buf)
    }
}

impl std::fmt::Debug for DataPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataPlane")
            .field("len", &self.len)
            .field("generation", &self.generation)
            .field("doorbells", &self.doorbells.len())
            .finish()
    }
}

/// What one child process start holds of the data plane; given back on exit.
pub(crate) struct ChildPlane {
    pub(crate) owner: u32,
    /// Kept open until the child has been spawned with its copy at fd 4, then until it exits.
    bell: Doorbell,
    bell_id: u64,
}
