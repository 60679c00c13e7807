//! The memory node's service (DESIGN §3: `[embedder]`, `[pruner / memory]`): embedding, pruning
//! and recall — all of which can only block (ONNX inference, SQLite) — never run on a worker.
//! They run on the store's owner thread (`hearth-store`, see [`crate::durable`]), which holds
//! the only read-write connection of the file and cold context over it, so a pass's writes share
//! the group commit of the journal's. The models load on a thread of their own
//! (`hearth-memory`, gone once they are loaded); memory ops that arrive meanwhile wait for them,
//! the journal does not.
//!
//! The kernel keeps a mirror of the working window for the timeline; each memory pass answers
//! with the window as the store now holds it, so the mirror cannot drift.
//!
//! This file is the handle the kernel and the tools call ([`MemoryService`]); the ops it sends
//! and what runs them on the owner are `memory_state.rs`.

use crate::GraphMemoryError;
use crate::durable::Durable;
use crate::error::MemoryError;
use crate::graph_service::GraphRequest;
use crate::memory_state::{Install, MemoryOp};
use crossbeam_channel::Sender;
use hearth_engine::Sink;
use hearth_memory::{ContextEvent, MemoryModels};

pub use crate::dense_slot::DenseSlot;
pub use crate::memory_state::{
    MemoryConfig, MemoryDone, MemoryPass, PassBudget, PassRequest, ToolRanking,
};

/// Why a request found no service: it was never started, or it is gone.
const NOT_RUNNING: &str = "no memory store";
/// The service stopped while the request waited for its answer.
const STOPPED: &str = "the memory service stopped";

/// Handle on the memory service; its ops go to the store's owner.
#[derive(Clone, Debug)]
pub struct MemoryService {
    durable: Durable,
    dense: DenseSlot,
    /// Whether the service was configured with the L3 graph (its tools exist only then).
    graph: bool,
}

impl MemoryService {
    /// Whether the L3 graph was configured (it may still be unavailable: a foreign file).
    pub fn has_graph(&self) -> bool {
        self.graph
    }

    /// The recall model, once loaded.
    pub fn dense_slot(&self) -> DenseSlot {
        self.dense.clone()
    }

    /// Starts the memory service on `durable`'s owner; pass results go to `done`, the graph's
    /// consolidation tasks to `consolidate`. The models load on the `hearth-memory` thread
    /// meanwhile.
    pub fn attach(
        durable: &Durable,
        cfg: MemoryConfig,
        done: Sink<MemoryDone>,
        consolidate: Option<Sink<crate::input::InputEvent>>,
    ) -> Self {
        durable.memory(MemoryOp::Attach);
        let graph = cfg.graph.is_some();
        let owner = durable.clone();
        let dense = DenseSlot::default();
        let slot = dense.clone();
        // Counted before the thread starts, so a shutdown right after start waits for it.
        let loading = crate::model_loads::Loading::start();
        let spawned = std::thread::Builder::new()
            .name("hearth-memory".into())
            .spawn(move || {
                let models = load_models(&cfg);
                if let Some(model) = &models.dense {
                    slot.fill(model.clone());
                }
                drop(loading);
                owner.memory(MemoryOp::Install(Box::new(Install {
                    models,
                    cfg,
                    done,
                    consolidate,
                })));
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the memory thread: {e}");
        }
        Self {
            durable: durable.clone(),
            dense,
            graph,
        }
    }

    /// Appends an event to the working window in the store.
    pub fn append(&self, event: ContextEvent) {
        self.durable.memory(MemoryOp::Append(event));
    }

    /// Enters the request's scene (once: every pass of a scene adds to its strength), prunes
    /// and/or recalls for its query, and ranks its tools against it; the answer arrives as a
    /// [`MemoryDone`].
    pub fn pass(&self, request: PassRequest) {
        self.durable.memory(MemoryOp::Pass(request));
    }

    /// Recall for the `coldcontext_query` tool (blocking; tools run on the tool pool).
    pub fn query(&self, query: String, k: usize) -> Result<String, MemoryError> {
        self.ask(|reply| MemoryOp::Query { query, k, reply })
    }

    /// The `k` cold items nearest `query` by meaning and keywords, fused, best first, each with
    /// its id, scores and time; reads only.
    pub fn search(
        &self,
        query: String,
        k: usize,
    ) -> Result<Vec<crate::recalled::RecalledItem>, MemoryError> {
        self.ask(|reply| MemoryOp::Search { query, k, reply })
    }

    /// Stores a note in cold context for the `doc_commit` tool; answered once it is committed.
    pub fn commit(
        &self,
        content: String,
        summary: String,
        media: Vec<String>,
    ) -> Result<String, MemoryError> {
        self.ask(|reply| MemoryOp::Commit {
            content,
            summary,
            media,
            reply,
        })
    }

    /// Keeps `event` in cold context as it is, with its own time and source, without passing
    /// through the window (blocking; answered once committed) → the entry's id.
    /// `archived_from` says who kept it (`plugin:<name>`).
    pub fn remember(&self, event: ContextEvent, archived_from: String) -> Result<i64, MemoryError> {
        self.ask(|reply| MemoryOp::Remember {
            event,
            archived_from,
            reply,
        })
    }

    /// Removes a remembered exchange at a user's request — a cold entry or a turn still in the
    /// working window, its whole turn either way — with the facts only that turn told
    /// (blocking): `{forgotten, facts_forgotten, …}`, once committed.
    pub fn forget_entry(
        &self,
        entry: crate::entry_ref::EntryRef,
    ) -> Result<serde_json::Value, MemoryError> {
        self.ask(|reply| MemoryOp::ForgetEntry { entry, reply })
    }

    /// [`forget_entry`](Self::forget_entry) of a turn a person named, noted in the audit log
    /// with who asked (`by`); [`MemoryError::NoSuchTurn`] when it named nothing. A turn still
    /// being answered is forgotten when its reply is journaled (`when_answered` in the answer).
    pub fn forget_named(
        &self,
        entry: crate::entry_ref::EntryRef,
        by: &str,
    ) -> Result<serde_json::Value, MemoryError> {
        let answer = self.forget_entry(entry)?;
        if answer["forgotten"] != true {
            return Err(MemoryError::NoSuchTurn(entry));
        }
        tracing::warn!(
            target: "audit",
            %entry,
            by,
            facts = %answer["facts_forgotten"],
            when_answered = answer["when_answered"] == true,
            "memory entry forgotten"
        );
        Ok(answer)
    }

    /// The turns still in the working window holding `query`'s words, at most `k`, most words
    /// first (blocking, read only): what a person looks for to take back something just said.
    pub fn search_window(
        &self,
        query: String,
        k: usize,
    ) -> Result<Vec<hearth_memory::WindowHit>, MemoryError> {
        self.ask(|reply| MemoryOp::SearchWindow { query, k, reply })
    }

    /// An item of the media store with its bytes, by digest or a marker's prefix (blocking).
    /// The bytes are read and checked against the digest on the caller's thread: a 16 MiB blob
    /// never holds up the journal's writer.
    pub fn media(&self, name: String) -> Result<MediaItem, MemoryError> {
        let (item, dir) = self.ask(|reply| MemoryOp::Media { name, reply })?;
        let data = hearth_media::read_blob(&dir, &item.digest)?;
        Ok(MediaItem { item, data })
    }

    /// Sends the op `make` builds around its reply channel to the store's owner and waits for
    /// the answer: `Stopped` when the owner is not running or stops before answering.
    fn ask<T>(
        &self,
        make: impl FnOnce(Sender<Result<T, MemoryError>>) -> MemoryOp,
    ) -> Result<T, MemoryError> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        if !self.durable.memory(make(reply)) {
            return Err(MemoryError::Stopped(NOT_RUNNING));
        }
        rx.recv().map_err(|_| MemoryError::Stopped(STOPPED))?
    }

    /// A request to the graph memory (blocking; tools run on the tool pool, control requests
    /// on their connection's thread).
    pub fn graph(&self, request: GraphRequest) -> Result<serde_json::Value, GraphMemoryError> {
        self.graph_in_turn(request, "")
    }

    /// [`graph`](Self::graph) made while serving the input whose request id is `turn`: a fact
    /// it tells is known to come from that turn, so forgetting it takes its value out of what
    /// the turn's rows say.
    pub fn graph_in_turn(
        &self,
        request: GraphRequest,
        turn: &str,
    ) -> Result<serde_json::Value, GraphMemoryError> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        let turn = turn.to_owned();
        if !self.durable.memory(MemoryOp::Graph {
            request,
            turn,
            reply,
        }) {
            return Err(GraphMemoryError::Stopped("the store owner has stopped"));
        }
        rx.recv()
            .map_err(|_| GraphMemoryError::Stopped("it stopped before answering"))?
    }
}

/// An item of the media store as a reader gets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaItem {
    /// Its reference: digest, MIME type, kind, size.
    pub item: crate::input_media::MediaRef,
    /// Its bytes, checked against the digest.
    pub data: Vec<u8>,
}

fn load_models(cfg: &MemoryConfig) -> MemoryModels {
    let models = if cfg.model {
        MemoryModels::load(cfg.model_dir.clone(), 1)
    } else {
        tracing::info!(
            "dense embedding switched off (memory_model = false): recall by keywords only"
        );
        MemoryModels::default()
    };
    if let Some(dense) = &models.dense {
        tracing::info!(fingerprint = %dense.fingerprint(), "embedding model loaded");
    }
    models
}
