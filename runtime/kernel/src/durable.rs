//! Durability (DESIGN §4.2–§4.3): every accepted input is journaled before it is acknowledged,
//! every reply before it is emitted, every context event and every suspended frame as it happens,
//! all in one SQLite file (`<data_dir>/memory.db`, WAL, synchronous=FULL).
//!
//! The file has one owner: the `hearth-store` thread holds its only read-write connection (the
//! [`Store`] is not `Clone`, and a second read-write open of the file in this process is refused
//! with [`StoreError::AlreadyOpen`]). [`Durable`] and the memory service are typed handles that
//! send it work on one bounded queue ([`STORE_QUEUE`] ops). The owner takes whatever is queued
//! (acceptances from many clients, replies, context events, frames, memory passes) into one
//! transaction with one fsync — a group commit — and answers each caller only after the commit
//! that holds its write: an input is offered to the kernel (and its client told `accepted`)
//! only once it is journaled, a reply is sent only once it is journaled. A reply whose journal
//! write fails (a full disk) is not sent: the caller gets an error and the input stays pending,
//! so it runs again after a restart instead of being both answered and re-run.

mod lanes;
pub(crate) mod media;
mod op;
mod owner;
pub(crate) mod then;

use crate::KernelError;
use crate::events::EventBus;
use crate::input::{InputEvent, Reply, ReplyHandle};
use hearth_ipc::EventKind;
use hearth_memory::{ContextEvent, FrameRecord, JournalEntry, Store, StoreError};
use lanes::LaneSenders;
use op::{Acceptance, Op};
use owner::Owner;

pub use lanes::KERNEL_LANE;
pub use media::MAX_MEDIA_BYTES;

pub use op::Offer;
pub use owner::GROUP_MAX;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The bound of the owner's shared lane (acceptances, flushes, maintenance), in ops. A sender
/// waits while it is full: the store is then the bottleneck, and waiting is the back-pressure
/// that reaches the clients (their `accepted` comes later). The kernel's own writes go on a lane
/// of their own ([`KERNEL_LANE`]), read first, so a flood of clients never holds the kernel.
pub const STORE_QUEUE: usize = 1024;

/// What the kernel found in the store at start-up.
#[derive(Debug, Default)]
pub struct Recovered {
    /// Context events of the working window, oldest first.
    pub events: Vec<ContextEvent>,
    /// Inputs accepted but never answered, in acceptance order.
    pub pending: Vec<JournalEntry>,
    /// Frames of tasks that were suspended, bottom of the stack first.
    pub frames: Vec<FrameRecord>,
}

/// A handle on the store's owner thread: journal, replies, timeline and frames, written off the
/// caller's thread and grouped into shared commits. Clones share the one owner.
#[derive(Clone)]
pub struct Durable {
    lanes: LaneSenders,
    path: PathBuf,
}

impl std::fmt::Debug for Durable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durable").field("path", &self.path).finish()
    }
}

impl Durable {
    /// Opens (or creates) the store and starts its owner thread, `hearth-store`.
    pub fn open(path: &Path, events: EventBus) -> Result<(Self, Recovered), StoreError> {
        let store = Store::open(path)?;
        let recovered = Recovered {
            events: store
                .events_window()?
                .into_iter()
                .map(|e| e.record.event)
                .collect(),
            pending: store.journal_pending()?,
            frames: store.frames_load()?,
        };
        let (lanes, rx) = lanes::lanes(STORE_QUEUE);
        let owner = Owner::new(store, events);
        std::thread::Builder::new()
            .name("hearth-store".into())
            .spawn(move || owner.run(&rx))
            .map_err(|source| StoreError::Io {
                op: "start the store owner",
                path: path.to_path_buf(),
                source,
            })?;
        let path = path.to_path_buf();
        Ok((Self { lanes, path }, recovered))
    }

    /// Journals an input and waits for the commit that holds it; only after this returns `Ok`
    /// may its caller be told it was accepted.
    pub fn accept(&self, input: &InputEvent, kind: &'static str) -> Result<(), StoreError> {
        let (done, rx) = crossbeam_channel::bounded(1);
        let gone = || StoreError::Sqlite {
            op: "journal_accept",
            path: self.path.clone(),
            detail: "the store owner has stopped".into(),
        };
        self.lanes
            .shared(Op::Accept {
                entry: op::Entry::of(input, kind),
                then: Acceptance::Wait(done),
            })
            .map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())?
    }

    /// Journals an input without waiting; once the commit holding it is done, `offer` hands it
    /// on. If it cannot be journaled its caller is answered with an error and it goes nowhere.
    /// `Err` only when the owner has stopped (the input was answered with the error).
    pub fn accept_then(
        &self,
        input: InputEvent,
        kind: &'static str,
        offer: Offer,
    ) -> Result<(), KernelError> {
        let entry = op::Entry::of(&input, kind);
        let op = Op::Accept {
            entry,
            then: Acceptance::Offer { input, offer },
        };
        let Err(unsent) = self.lanes.shared(op) else {
            return Ok(());
        };
        if let Op::Accept {
            then: Acceptance::Offer { mut input, .. },
            ..
        } = unsent.into_inner()
        {
            owner::refuse_unrecorded(&mut input, &KernelError::StoreStopped.to_string());
        }
        Err(KernelError::StoreStopped)
    }

    /// Hands a reply over: it is journaled, then sent, then each of `outputs` is published, in
    /// order. If the journal cannot take it, an error is sent instead, nothing is published and
    /// the input stays pending.
    pub fn reply(&self, handle: ReplyHandle, reply: Reply, outputs: Vec<(EventKind, Value)>) {
        if let Err(e) = self.lanes.kernel(Op::Reply {
            handle,
            reply,
            outputs,
        }) {
            // The owner is gone (shutdown): answer directly rather than never.
            if let Op::Reply { handle, reply, .. } = e.into_inner() {
                handle.send(reply);
            }
        }
    }

    /// Journals `reply` as the input's end and sends it: for an input refused right after it
    /// was journaled. Like [`reply`](Self::reply), it never waits.
    pub fn reply_now(&self, handle: ReplyHandle, reply: Reply) {
        self.reply(handle, reply, Vec::new());
    }

    /// Waits until every op handed over so far is committed, or `timeout` passed.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.lanes.shared(Op::Flush(tx)).is_ok() && rx.recv_timeout(timeout).is_ok()
    }

    /// Commits everything handed over so far and closes the store (releasing its file for a
    /// next open in this process), whatever handles remain; later ops find the owner gone.
    /// A stopping daemon calls it so the answers of its last moments are journaled before it
    /// exits. False when that did not happen within `timeout`; true at once when the store is
    /// already closed.
    pub fn close(&self, timeout: Duration) -> bool {
        if self.lanes.is_closed() {
            return true;
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        match self.lanes.shared(Op::Close(tx)) {
            Ok(()) => rx.recv_timeout(timeout).is_ok(),
            Err(_) => true,
        }
    }

    /// Appends an event to the durable timeline.
    pub fn record_event(&self, event: ContextEvent) {
        let _ = self.lanes.kernel(Op::Event(event));
    }

    /// Saves (or replaces) a suspended task's frame.
    pub fn save_frame(&self, frame: FrameRecord) {
        let _ = self.lanes.kernel(Op::SaveFrame(frame));
    }

    /// Removes a task's frame once the task has ended.
    pub fn remove_frame(&self, task_id: u64) {
        let _ = self.lanes.kernel(Op::RemoveFrame(task_id));
    }

    /// Runs `work` on the owner's connection, inside the current group, and waits for its
    /// result (`None` when the owner has stopped). For maintenance (a page cap on a small
    /// device, a checkpoint) and for tests that must reach the one connection there is.
    pub fn with_store<R: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Store) -> R + Send + 'static,
    ) -> Option<R> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let run = Box::new(move |store: &mut Store| {
            let _ = tx.send(work(store));
        });
        self.lanes.shared(Op::Run(run)).ok()?;
        rx.recv().ok()
    }

    /// Sends a memory service op to the owner (false when it has stopped).
    pub(crate) fn memory(&self, op: crate::memory_state::MemoryOp) -> bool {
        self.lanes.kernel(Op::Memory(op)).is_ok()
    }

    /// Stores the inline media items of `blocks` (a tool's result's content blocks) and gives
    /// the blocks back referencing them, or why they could not be stored. Blocking: for a
    /// tool's thread, never the kernel's worker.
    pub(crate) fn keep_media(&self, blocks: Vec<Value>) -> Result<Vec<Value>, media::MediaRefusal> {
        const STOPPED: media::MediaRefusal =
            media::MediaRefusal::Unavailable("the media store's owner has stopped");
        let (reply, rx) = crossbeam_channel::bounded(1);
        if !self.memory(crate::memory_state::MemoryOp::KeepMedia { blocks, reply }) {
            return Err(STOPPED);
        }
        rx.recv().map_err(|_| STOPPED)?
    }

    /// The store's file.
    pub fn path(&self) -> PathBuf {
        self.path.clone()
    }
}

#[cfg(test)]
#[path = "durable_tests.rs"]
mod tests;
