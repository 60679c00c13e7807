//! Durability (DESIGN §4.2–§4.3): every accepted input is journaled before it is acknowledged,
//! every reply before it is emitted, every context event and every suspended frame as it happens,
//! all in one SQLite file (`<data_dir>/memory.db`, WAL, synchronous=FULL).
//!
//! Acceptance is synchronous in the caller's thread (the socket's admit thread, never a worker
//! and never its reactor): the caller may say "accepted" only after it returns. Everything the kernel writes goes to the
//! store writer thread instead, so the kernel's worker never waits on an fsync; a reply is handed
//! over with its input and is sent to the caller only once the journal holds it.

use crate::events::EventBus;
use crate::input::{InputEvent, Reply, ReplyHandle};
use crossbeam_channel::{Receiver, Sender};
use hearth_ipc::EventKind;
use hearth_memory::{ContextEvent, EventRecord, FrameRecord, JournalEntry, Store, StoreError};
use parking_lot::Mutex;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// Work for the store writer thread.
enum Op {
    /// Journal the reply, then send it, then publish `agent_output`.
    Reply {
        handle: ReplyHandle,
        reply: Reply,
        output: Option<Value>,
    },
    Event(ContextEvent),
    SaveFrame(FrameRecord),
    RemoveFrame(u64),
    /// Answered once every earlier op is written.
    Flush(Sender<()>),
}

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

/// The kernel's handle on its store: journal, replies, timeline and frames, written off the worker.
#[derive(Clone)]
pub struct Durable {
    store: Arc<Mutex<Store>>,
    tx: Sender<Op>,
}

impl std::fmt::Debug for Durable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durable")
            .field("path", &self.store.lock().path())
            .finish()
    }
}

impl Durable {
    /// Opens (or creates) the store and starts its writer thread.
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
        let store = Arc::new(Mutex::new(store));
        let (tx, rx) = crossbeam_channel::unbounded();
        let writer = store.clone();
        std::thread::Builder::new()
            .name("hearth-store".into())
            .spawn(move || write_loop(&writer, &rx, &events))
            .map_err(|source| StoreError::Io {
                op: "start store writer",
                path: path.to_path_buf(),
                source,
            })?;
        Ok((Self { store, tx }, recovered))
    }

    /// Journals an input; only after this returns may its caller be told it was accepted.
    pub fn accept(&self, input: &InputEvent, kind: &str) -> Result<(), StoreError> {
        let payload = Value::Object(input.payload.clone());
        self.store.lock().journal_accept_with_trust(
            &input.request_id,
            &input.source,
            kind,
            input.trust.as_str(),
            &payload,
            input.received_at_ms,
        )
    }

    /// Hands a reply over: it is journaled, then sent, then `output` is published.
    pub fn reply(&self, handle: ReplyHandle, reply: Reply, output: Option<Value>) {
        if let Err(e) = self.tx.send(Op::Reply {
            handle,
            reply,
            output,
        }) {
            // The writer is gone (shutdown): answer directly rather than never.
            if let Op::Reply { handle, reply, .. } = e.into_inner() {
                handle.send(reply);
            }
        }
    }

    /// Journals `reply` as the input's end and sends it, in the calling thread (which must be
    /// allowed to wait for an fsync): for an input refused right after it was journaled.
    pub fn reply_now(&self, handle: ReplyHandle, mut reply: Reply) {
        journal_then_send(&self.store, handle, &mut reply);
    }

    /// Waits until every op handed over so far is written, or `timeout` passed: a stopping
    /// daemon calls it so the answers of its last moments are journaled before it exits.
    pub fn flush(&self, timeout: std::time::Duration) -> bool {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.tx.send(Op::Flush(tx)).is_ok() && rx.recv_timeout(timeout).is_ok()
    }

    /// Appends an event to the durable timeline.
    pub fn record_event(&self, event: ContextEvent) {
        let _ = self.tx.send(Op::Event(event));
    }

    /// Saves (or replaces) a suspended task's frame.
    pub fn save_frame(&self, frame: FrameRecord) {
        let _ = self.tx.send(Op::SaveFrame(frame));
    }

    /// Removes a task's frame once the task has ended.
    pub fn remove_frame(&self, task_id: u64) {
        let _ = self.tx.send(Op::RemoveFrame(task_id));
    }

    /// The store's file.
    pub fn path(&self) -> std::path::PathBuf {
        self.store.lock().path().to_path_buf()
    }
}

/// Journals `reply` for its input, then sends it.
fn journal_then_send(store: &Mutex<Store>, handle: ReplyHandle, reply: &mut Reply) {
    reply.request_id = handle.request_id().to_string();
    let value = serde_json::to_value(&*reply).unwrap_or(Value::Null);
    let journaled =
        store
            .lock()
            .journal_reply(handle.request_id(), &value, hearth_engine::now_ms());
    // An input that was never journaled (a self-input, a test kernel) has nothing to update;
    // the reply still goes out. A real write failure is logged and the reply still goes out:
    // a caller waiting forever would be worse than a missing record.
    match journaled {
        Ok(()) | Err(StoreError::UnknownRequest { .. }) => {}
        Err(e) => tracing::error!(request = %handle.request_id(), "reply not journaled: {e}"),
    }
    handle.send(std::mem::take(reply));
}

fn write_loop(store: &Mutex<Store>, rx: &Receiver<Op>, events: &EventBus) {
    for op in rx.iter() {
        let result = match op {
            Op::Reply {
                handle,
                mut reply,
                output,
            } => {
                journal_then_send(store, handle, &mut reply);
                if let Some(output) = output {
                    events.publish(EventKind::AgentOutput, &output);
                }
                Ok(())
            }
            Op::Flush(done) => {
                let _ = done.send(());
                Ok(())
            }
            Op::Event(event) => store
                .lock()
                .event_append(&EventRecord::new(event))
                .map(|_| ()),
            Op::SaveFrame(frame) => store.lock().frames_save(&frame, hearth_engine::now_ms()),
            Op::RemoveFrame(id) => store.lock().frames_remove(id).map(|_| ()),
        };
        if let Err(e) = result {
            tracing::error!("store write failed: {e}");
        }
    }
}
