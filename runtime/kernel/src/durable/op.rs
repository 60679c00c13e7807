//! The work the store's owner takes from its lanes, and what is told once it is journaled.

use crate::input::{InputEvent, Reply, ReplyHandle};
use crate::memory_state::MemoryOp;
use crossbeam_channel::Sender;
use hearth_ipc::EventKind;
use hearth_memory::{FrameRecord, Store, StoreError};
use serde_json::Value;

/// What becomes of an input once its acceptance is durable: `None` when the kernel's queue took
/// it, or its handle with the reply to journal as its end (a `queue_full` or `shutdown` skip).
pub type Offer = Box<dyn FnOnce(InputEvent) -> Option<(ReplyHandle, Reply)> + Send>;

/// What is journaled for an accepted input.
pub(super) struct Entry {
    pub(super) request_id: String,
    pub(super) source: String,
    pub(super) kind: &'static str,
    pub(super) trust: &'static str,
    pub(super) payload: Value,
    pub(super) received_at_ms: i64,
}

impl Entry {
    pub(super) fn of(input: &InputEvent, kind: &'static str) -> Self {
        Self {
            request_id: input.request_id.clone(),
            source: input.source.clone(),
            kind,
            trust: input.trust.as_str(),
            payload: Value::Object(input.payload.clone()),
            received_at_ms: input.received_at_ms,
        }
    }
}

/// Who learns that an acceptance is durable.
pub(super) enum Acceptance {
    /// A caller blocked in [`Durable::accept`](super::Durable::accept).
    Wait(Sender<Result<(), StoreError>>),
    /// The input itself, handed on by `offer` once it is journaled.
    Offer { input: InputEvent, offer: Offer },
}

/// Work for the owner.
pub(super) enum Op {
    Accept {
        entry: Entry,
        then: Acceptance,
    },
    /// Journal the reply; once committed, send it and publish `outputs`, in order.
    Reply {
        handle: ReplyHandle,
        reply: Reply,
        outputs: Vec<(EventKind, Value)>,
    },
    Event(hearth_memory::ContextEvent),
    SaveFrame(FrameRecord),
    RemoveFrame(u64),
    Memory(MemoryOp),
    Run(Box<dyn FnOnce(&mut Store) + Send>),
    /// Answered once every earlier op is committed.
    Flush(Sender<()>),
    /// Commit, close the store, answer, stop.
    Close(Sender<()>),
}

impl Op {
    /// Writes nobody is answered about (the working window's appends, a prune or recall
    /// pass): a group of only these commits without an fsync, made durable by the next synced
    /// commit — the reply that always follows a turn's append — or within the owner's
    /// `SYNC_LATER`.
    pub(super) fn may_sync_later(&self) -> bool {
        matches!(
            self,
            Op::Event(_) | Op::Memory(MemoryOp::Append(_) | MemoryOp::Pass(_))
        )
    }

    /// Ops that must find every write sent before them already in the store.
    pub(super) fn is_barrier(&self) -> bool {
        matches!(self, Op::Run(_) | Op::Flush(_) | Op::Close(_))
    }
}
