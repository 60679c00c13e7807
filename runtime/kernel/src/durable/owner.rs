//! The `hearth-store` thread: the one read-write connection of `memory.db` and the group commit
//! over it. Each round takes what is queued (up to [`GROUP_MAX`](super::GROUP_MAX) ops), runs
//! every op inside one transaction, commits it with one fsync, and only then answers the ops'
//! callers. A group of writes nobody is answered about commits without the fsync; the next
//! synced commit (or an idle [`SYNC_LATER`] later, a checkpoint) makes it durable. A write that fails rolls back alone (its savepoint); a group SQLite rolled back as a
//! whole (a full disk) fails every op that ran in it, and the ops not yet run go to the next.

use crate::events::EventBus;
use crate::graph_service::{GraphRequest, told_sentence};
use crate::input::{InputEvent, Reply, ReplyHandle};
use crate::memory_state::{MemoryOp, MemoryState};
use crate::{GraphMemoryError, MemoryError};
use crossbeam_channel::Sender;
use hearth_ipc::EventKind;
use hearth_memory::{ColdContext, EventRecord, Store, StoreError};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::lanes::{Lanes, Wait};
use super::media::{MediaIntake, media_dir};
use super::op::{Acceptance, Op};
use super::then::Then;

/// At most this many ops share one transaction; the rest wait for the next commit.
pub const GROUP_MAX: usize = 256;

/// How long an unsynced commit may wait for a synced one before the owner fsyncs the WAL.
const SYNC_LATER: Duration = Duration::from_millis(50);

/// What is done once the group's commit is known.
enum After {
    Accept {
        journaled: Result<(), StoreError>,
        then: Acceptance,
    },
    Reply {
        handle: ReplyHandle,
        reply: Reply,
        outputs: Vec<(EventKind, Value)>,
        journaled: Result<(), StoreError>,
    },
    Then(Then),
}

pub(super) struct Owner {
    /// `None` once closed.
    cold: Option<ColdContext>,
    /// The media store's one writer: inputs' media are stored before they are journaled.
    media: MediaIntake,
    memory: MemoryState,
    events: EventBus,
    /// Ops taken from the queue but left for the next group, and refusals to journal.
    carry: VecDeque<Op>,
    path: PathBuf,
}

impl Owner {
    pub(super) fn new(store: Store, events: EventBus) -> Self {
        Self {
            path: store.path().to_path_buf(),
            media: MediaIntake::new(media_dir(store.path())),
            cold: Some(ColdContext::new(store, None)),
            memory: MemoryState::default(),
            events,
            carry: VecDeque::new(),
        }
    }

    pub(super) fn run(mut self, lanes: &Lanes) {
        while let Some(first) = self.next(lanes) {
            let mut ops = vec![first];
            while ops.len() < GROUP_MAX {
                match lanes.try_next(&mut self.carry) {
                    Some(op) => ops.push(op),
                    None => break,
                }
            }
            if let Some(closed) = self.group(ops) {
                self.cold = None;
                lanes.mark_closed();
                let _ = closed.send(());
                break;
            }
        }
        // Closed (or every handle dropped): whatever is still queued is answered without the
        // journal rather than never.
        lanes.mark_closed();
        let rest: Vec<Op> = self.carry.drain(..).chain(lanes.drain()).collect();
        for op in rest {
            answer_unjournaled(&self.path, op);
        }
    }

    /// The next op: carried ones first; while idle, the memory service's back-fill.
    fn next(&mut self, lanes: &Lanes) -> Option<Op> {
        loop {
            let memory_idle = self.memory.idle_wait();
            let unsynced = self
                .cold
                .as_mut()
                .is_some_and(|c| c.journal_store().has_unsynced());
            let wait = match (memory_idle, unsynced) {
                (Some(idle), true) => Some(idle.min(SYNC_LATER)),
                (None, true) => Some(SYNC_LATER),
                (idle, false) => idle,
            };
            let started = Instant::now();
            match lanes.wait(wait, &mut self.carry) {
                Wait::Op(op) => return Some(*op),
                Wait::Closed => return None,
                Wait::Idle => {
                    let Some(cold) = self.cold.as_mut() else {
                        continue;
                    };
                    if let Err(e) = cold.journal_store().sync_wal() {
                        tracing::error!("cannot sync the store's log: {e}");
                    }
                    if memory_idle.is_some_and(|idle| started.elapsed() >= idle) {
                        self.memory.idle(cold);
                    }
                }
            }
        }
    }

    /// Runs `ops` in one transaction and answers them after its commit; the sender of a
    /// `Close` among them when the owner must stop.
    fn group(&mut self, ops: Vec<Op>) -> Option<Sender<()>> {
        let Some(cold) = self.cold.as_mut() else {
            for op in ops {
                answer_unjournaled(&self.path, op);
            }
            return None;
        };
        let unsynced = ops.iter().all(Op::may_sync_later);
        let begun = if unsynced {
            cold.journal_store().begin_group_unsynced()
        } else {
            cold.journal_store().begin_group()
        };
        let grouped = match begun {
            Ok(()) => true,
            Err(e) => {
                // Each write then commits alone: slower, still durable before it is answered.
                tracing::warn!("group commit unavailable, writing op by op: {e}");
                false
            }
        };
        let mut after = Vec::with_capacity(ops.len());
        let mut close = None;
        let mut unrun = None;
        let mut ops = ops.into_iter();
        while let Some(op) = ops.next() {
            match op {
                Op::Close(done) => {
                    close = Some(done);
                    break;
                }
                Op::Memory(MemoryOp::Install(install)) => {
                    let Some(old) = self.cold.take() else {
                        break;
                    };
                    let (fresh, deferred) = self.memory.install(old, *install);
                    self.cold = Some(fresh);
                    let rest: Vec<Op> = deferred.into_iter().map(Op::Memory).chain(ops).collect();
                    ops = rest.into_iter();
                }
                // An embedding pass takes milliseconds of ONNX: the acknowledgements already
                // in this group are committed and answered first, not kept waiting behind it.
                Op::Memory(m) if self.memory.embeds(&m) && has_acks(&after) => {
                    unrun = Some(Op::Memory(m));
                    break;
                }
                op => {
                    let Some(op) = self.take_media(op) else {
                        continue;
                    };
                    let Some(cold) = self.cold.as_mut() else {
                        break;
                    };
                    run_op(cold, &mut self.memory, op, &mut after);
                    if grouped && !cold.journal_store().group_intact() {
                        // SQLite dropped the transaction: what ran is lost, the rest waits.
                        break;
                    }
                }
            }
        }
        // Not run in this group (after a Close or a lost group): first in the next one.
        for op in ops.rev() {
            self.carry.push_front(op);
        }
        if let Some(op) = unrun {
            self.carry.push_front(op);
        }
        let cold = self.cold.as_mut()?;
        let committed = if grouped {
            cold.journal_store().commit_group()
        } else {
            Ok(())
        };
        if let Err(e) = &committed {
            tracing::error!("store commit failed, {} writes lost: {e}", after.len());
            // The vector indexes may hold entries the store does not: reload them.
            let _ = cold.store_mut();
        }
        for a in after {
            self.finish(a, &committed);
        }
        close
    }

    fn finish(&mut self, after: After, committed: &Result<(), StoreError>) {
        match after {
            After::Accept { journaled, then } => {
                let outcome = journaled.and_then(|()| committed.as_ref().map_err(again).copied());
                match (outcome, then) {
                    (outcome, Acceptance::Wait(tx)) => {
                        let _ = tx.send(outcome);
                    }
                    (Ok(()), Acceptance::Offer { input, offer }) => {
                        if let Some((handle, reply)) = offer(input) {
                            self.carry.push_back(Op::Reply {
                                handle,
                                reply,
                                outputs: Vec::new(),
                            });
                        }
                    }
                    (Err(e), Acceptance::Offer { mut input, .. }) => {
                        let message =
                            format!("the input could not be recorded, so it was not accepted: {e}");
                        refuse_unrecorded(&mut input, &message);
                    }
                }
            }
            After::Reply {
                handle,
                reply,
                outputs,
                journaled,
            } => {
                let outcome = match journaled {
                    // Nothing to record (a self-input, a kernel without a journal row), or
                    // the journal already holds its one terminal reply: it may go out.
                    Err(StoreError::UnknownRequest { .. } | StoreError::AlreadyReplied { .. }) => {
                        Ok(())
                    }
                    journaled => {
                        journaled.and_then(|()| committed.as_ref().map_err(again).copied())
                    }
                };
                match outcome {
                    Ok(()) => {
                        handle.send(reply);
                        for (kind, output) in &outputs {
                            self.events.publish(*kind, output);
                        }
                    }
                    Err(e) => {
                        tracing::error!(request = %handle.request_id(), "reply not journaled, not sent: {e}");
                        handle.send(unrecorded_reply(&e));
                    }
                }
            }
            After::Then(then) => then(committed),
        }
    }
}

impl Owner {
    /// `text` with a marker line for each item of the media store `media` names (digests or
    /// marker prefixes), or why one cannot be named.
    fn with_markers(&mut self, text: &str, media: &[String]) -> Result<String, MemoryError> {
        let refs = self.media.refs(media)?;
        Ok(crate::input_media::with_markers(text, &refs))
    }

    /// An acceptance with its input's media stored and referenced by digest (the input handed
    /// on gets the same payload as the journal), a note or a fact told directly with the
    /// markers of the media it names;
    /// `None` when they could not be stored or found, the caller already told why, and for a
    /// read of an item, answered here. Every other op as it is.
    fn take_media(&mut self, op: Op) -> Option<Op> {
        let (mut entry, then) = match op {
            Op::Accept { entry, then } => (entry, then),
            Op::Memory(MemoryOp::Commit {
                content,
                summary,
                media,
                reply,
            }) if !media.is_empty() => {
                return match self.with_markers(&content, &media) {
                    Ok(content) => Some(Op::Memory(MemoryOp::Commit {
                        content,
                        summary,
                        media: Vec::new(),
                        reply,
                    })),
                    Err(why) => {
                        let _ = reply.send(Err(why));
                        None
                    }
                };
            }
            Op::Memory(MemoryOp::Graph {
                request:
                    GraphRequest::Commit {
                        subject,
                        predicate,
                        object,
                        sentence,
                        media,
                    },
                turn,
                reply,
            }) if !media.is_empty() => {
                let sentence = told_sentence(&subject, &predicate, &object, sentence);
                return match self.with_markers(&sentence, &media) {
                    Ok(sentence) => Some(Op::Memory(MemoryOp::Graph {
                        request: GraphRequest::Commit {
                            sentence,
                            subject,
                            predicate,
                            object,
                            media: Vec::new(),
                        },
                        turn,
                        reply,
                    })),
                    Err(why) => {
                        let _ = reply.send(Err(GraphMemoryError::Media(why)));
                        None
                    }
                };
            }
            Op::Memory(MemoryOp::KeepMedia { blocks, reply }) => {
                let _ = reply.send(self.media.keep(blocks));
                return None;
            }
            Op::Memory(MemoryOp::Media { name, reply }) => {
                let found = self
                    .media
                    .refs(std::slice::from_ref(&name))
                    .map(|mut refs| {
                        (
                            refs.pop().expect("one name, one item"),
                            self.media.dir().to_path_buf(),
                        )
                    });
                let _ = reply.send(found);
                return None;
            }
            op => return Some(op),
        };
        let Value::Object(payload) = &mut entry.payload else {
            return Some(Op::Accept { entry, then });
        };
        match self.media.take(payload) {
            Ok(0) => Some(Op::Accept { entry, then }),
            Ok(_) => {
                let then = match then {
                    Acceptance::Offer { mut input, offer } => {
                        input.payload = payload.clone();
                        Acceptance::Offer { input, offer }
                    }
                    wait => wait,
                };
                Some(Op::Accept { entry, then })
            }
            Err(why) => {
                let message = format!("the input was not accepted: {why}");
                match then {
                    Acceptance::Offer { mut input, .. } => refuse_unrecorded(&mut input, &message),
                    Acceptance::Wait(tx) => {
                        let _ = tx.send(Err(StoreError::Data {
                            op: "journal_accept",
                            path: self.path.clone(),
                            detail: message,
                        }));
                    }
                }
                None
            }
        }
    }
}

/// Whether someone waits for this group's commit.
fn has_acks(after: &[After]) -> bool {
    after
        .iter()
        .any(|a| matches!(a, After::Accept { .. } | After::Reply { .. }))
}

/// Runs one op inside the open group; what must wait for the commit goes to `after`.
fn run_op(cold: &mut ColdContext, memory: &mut MemoryState, op: Op, after: &mut Vec<After>) {
    let now = hearth_engine::now_ms();
    let logged = |what: &str, r: Result<(), StoreError>| {
        if let Err(e) = r {
            tracing::error!("{what} not stored: {e}");
        }
    };
    match op {
        Op::Accept { entry, then } => {
            let journaled = cold.journal_store().journal_accept_with_trust(
                &entry.request_id,
                &entry.source,
                entry.kind,
                entry.trust,
                &entry.payload,
                entry.received_at_ms,
            );
            after.push(After::Accept { journaled, then });
        }
        Op::Reply {
            handle,
            mut reply,
            mut outputs,
        } => {
            reply.request_id = handle.request_id().to_string();
            let mut value = serde_json::to_value(&reply).unwrap_or(Value::Null);
            crate::recalled::journal_form(&mut value);
            let journaled = cold
                .journal_store()
                .journal_reply(handle.request_id(), &value, now);
            if journaled.as_ref().is_ok_and(|r| r.forget_when_answered) {
                forget_answered(cold, memory, handle.request_id(), &mut outputs, after);
            }
            let journaled = journaled.map(drop);
            after.push(After::Reply {
                handle,
                reply,
                outputs,
                journaled,
            });
        }
        Op::Event(event) => logged(
            "context event",
            cold.journal_store()
                .event_append(&EventRecord::new(event))
                .map(|_| ()),
        ),
        Op::SaveFrame(frame) => logged("frame", cold.journal_store().frames_save(&frame, now)),
        Op::RemoveFrame(id) => logged(
            "frame removal",
            cold.journal_store().frames_remove(id).map(|_| ()),
        ),
        Op::Memory(op) => {
            let mut thens = Vec::new();
            memory.handle(cold, op, &mut thens);
            after.extend(thens.into_iter().map(After::Then));
        }
        // Arbitrary work may touch any table: the vector indexes are reloaded after it.
        Op::Run(work) => work(cold.store_mut()),
        Op::Flush(done) => after.push(After::Then(Box::new(move |_| {
            let _ = done.send(());
        }))),
        // Taken by the group before it gets here.
        Op::Close(done) => {
            let _ = done.send(());
        }
    }
}

/// Forgets turn `turn`, just answered, in the group journaling its reply: a person took it
/// back while it was being answered (`MemoryOp::ForgetAnswered`). Its memory candidate is not
/// published: a memory outside Hearth would keep what the person asked to be forgotten.
fn forget_answered(
    cold: &mut ColdContext,
    memory: &mut MemoryState,
    turn: &str,
    outputs: &mut Vec<(EventKind, Value)>,
    after: &mut Vec<After>,
) {
    outputs.retain(|(kind, _)| *kind != EventKind::MemoryCandidate);
    let mut thens = Vec::new();
    let turn = turn.to_owned();
    memory.handle(cold, MemoryOp::ForgetAnswered { turn }, &mut thens);
    after.extend(thens.into_iter().map(After::Then));
}

/// A commit failure, once more for each op it concerns (`StoreError` is not `Clone`).
fn again(e: &StoreError) -> StoreError {
    match e {
        StoreError::DiskFull { op, path } => StoreError::DiskFull {
            op,
            path: path.clone(),
        },
        other => StoreError::GroupLost {
            op: other.op(),
            path: other.path().to_path_buf(),
        },
    }
}

/// The answer to a caller whose reply could not be journaled.
fn unrecorded_reply(e: &StoreError) -> Reply {
    Reply {
        content: format!(
            "the answer could not be recorded, so it was not sent ({e}); the input stays \
             pending and runs again after a restart"
        ),
        error: true,
        ..Reply::default()
    }
}

/// Answers an input that could not be journaled with `message`.
pub(super) fn refuse_unrecorded(input: &mut InputEvent, message: &str) {
    tracing::error!(request = %input.request_id, "{message}");
    input.send_reply(Reply {
        content: message.to_owned(),
        error: true,
        ..Reply::default()
    });
}

/// An op that arrives after the store closed: answered without the journal, never dropped
/// silently (a dropped reply handle would leave its caller with `dropped`).
fn answer_unjournaled(path: &Path, op: Op) {
    match op {
        Op::Accept {
            then: Acceptance::Wait(tx),
            ..
        } => {
            let _ = tx.send(Err(StoreError::Sqlite {
                op: "journal_accept",
                path: path.to_path_buf(),
                detail: "the store is closed".into(),
            }));
        }
        Op::Accept {
            then: Acceptance::Offer { mut input, .. },
            ..
        } => refuse_unrecorded(
            &mut input,
            "the input could not be recorded, so it was not accepted: the store is closed",
        ),
        Op::Reply { handle, .. } => {
            let closed = StoreError::Sqlite {
                op: "journal_reply",
                path: path.to_path_buf(),
                detail: "the store is closed".into(),
            };
            handle.send(unrecorded_reply(&closed));
        }
        Op::Memory(op) => MemoryState::refuse(op),
        Op::Flush(done) | Op::Close(done) => {
            let _ = done.send(());
        }
        Op::Event(_) | Op::SaveFrame(_) | Op::RemoveFrame(_) | Op::Run(_) => {}
    }
}
