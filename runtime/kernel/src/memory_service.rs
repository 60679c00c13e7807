//! The memory node's service thread (DESIGN §3: `[embedder]`, `[pruner / memory]`): it owns the
//! embedder and the cold context over the store, so embedding, pruning and recall — all of which
//! can only block (ONNX inference, SQLite) — never run on a worker.
//!
//! The kernel keeps a mirror of the working window for the timeline; each memory pass answers
//! with the window as the store now holds it, so the mirror cannot drift.

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use hearth_engine::Sink;
use hearth_memory::{
    ColdContext, ContextEvent, ContextWindow, MemoryModels, PruneLimits, RecallConfig, Store,
    estimate_tokens,
};
use std::path::PathBuf;
use std::time::Duration;

/// What a memory pass found for one input.
#[derive(Debug, Default)]
pub struct MemoryPass {
    /// The working window after pruning and recall, oldest first.
    pub window: Vec<ContextEvent>,
    /// The recalled-memory block for the prompt ("" when nothing is relevant).
    pub block: String,
    /// Events moved to cold context by this pass.
    pub archived: usize,
}

/// The end of one memory pass, as the memory service reports it.
#[derive(Debug)]
pub struct MemoryDone {
    /// The call number given to [`MemoryService::pass`].
    pub call: u64,
    /// What the pass found, or why it failed.
    pub result: Result<MemoryPass, String>,
}

enum Op {
    Append(ContextEvent),
    Pass {
        call: u64,
        query: String,
        prune: bool,
        recall: bool,
        context_tokens: usize,
        memory_tokens: usize,
    },
    Query {
        query: String,
        k: usize,
        reply: Sender<Result<String, String>>,
    },
    Commit {
        content: String,
        summary: String,
        reply: Sender<Result<String, String>>,
    },
}

/// Settings of the memory service.
#[derive(Clone, Debug)]
pub struct MemoryConfig {
    /// The SQLite store file.
    pub store: PathBuf,
    /// Load the dense embedding model (off: keyword recall only).
    pub model: bool,
    /// Where `make setup` put the embedding model (`None`: the default cache dir).
    pub model_dir: Option<PathBuf>,
    /// `core.agent.max_context_size` (SPEC §4.7).
    pub max_context_size: usize,
    /// Configured protected count (the last N events are never pruned).
    pub protected: usize,
    /// Seconds east of UTC for timeline stamps.
    pub utc_offset_secs: i64,
}

/// Handle on the memory thread; dropping every handle stops it.
#[derive(Clone, Debug)]
pub struct MemoryService {
    tx: Sender<Op>,
}

impl MemoryService {
    /// Starts the memory thread; pass results go to `done`.
    pub fn start(cfg: MemoryConfig, done: Sink<MemoryDone>) -> Self {
        let (tx, rx) = crossbeam_channel::unbounded();
        let spawned = std::thread::Builder::new()
            .name("hearth-memory".into())
            .spawn(move || serve(&cfg, &rx, &done));
        if let Err(e) = spawned {
            tracing::error!("cannot start the memory thread: {e}");
        }
        Self { tx }
    }

    /// Appends an event to the working window in the store.
    pub fn append(&self, event: ContextEvent) {
        let _ = self.tx.send(Op::Append(event));
    }

    /// Prunes and/or recalls for `query`; the answer arrives as a [`MemoryDone`].
    pub fn pass(
        &self,
        call: u64,
        query: String,
        prune: bool,
        recall: bool,
        context_tokens: usize,
        memory_tokens: usize,
    ) {
        let _ = self.tx.send(Op::Pass {
            call,
            query,
            prune,
            recall,
            context_tokens,
            memory_tokens,
        });
    }

    /// Recall for the `coldcontext_query` tool (blocking; tools run on the tool pool).
    pub fn query(&self, query: String, k: usize) -> Result<String, String> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        self.tx
            .send(Op::Query { query, k, reply })
            .map_err(|_| "memory is not running".to_string())?;
        rx.recv().map_err(|_| "memory stopped".to_string())?
    }

    /// Stores a note in cold context for the `doc_commit` tool.
    pub fn commit(&self, content: String, summary: String) -> Result<String, String> {
        let (reply, rx) = crossbeam_channel::bounded(1);
        self.tx
            .send(Op::Commit {
                content,
                summary,
                reply,
            })
            .map_err(|_| "memory is not running".to_string())?;
        rx.recv().map_err(|_| "memory stopped".to_string())?
    }
}

fn serve(cfg: &MemoryConfig, rx: &Receiver<Op>, done: &Sink<MemoryDone>) {
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
    let store = match Store::open(&cfg.store) {
        Ok(store) => store,
        Err(e) => {
            tracing::error!("memory store unavailable, recall and pruning are off: {e}");
            return drain_without_store(rx, done);
        }
    };
    let config = RecallConfig {
        utc_offset_secs: cfg.utc_offset_secs,
        ..RecallConfig::default()
    };
    let mut cold = ColdContext::new(store, models.dense.clone()).with_config(config);
    // Entries archived before the companion was installed get its vectors in idle time.
    // The companion's vectors are written in idle time, never on the turn path: at start for
    // entries archived before it was installed, after each pass that archived something.
    let has_companion = models.companion.is_some();
    let mut backfill = has_companion;
    if let Some(companion) = models.companion {
        cold = cold.with_companion(companion).defer_companion();
    }
    loop {
        // Only a pending back-fill wakes the thread without work: an idle daemon stays asleep.
        let received = if backfill {
            rx.recv_timeout(BACKFILL_IDLE)
        } else {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        };
        let op = match received {
            Ok(op) => op,
            Err(RecvTimeoutError::Timeout) => {
                backfill = backfill_step(&mut cold);
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let now = hearth_engine::now_ms();
        match op {
            Op::Append(event) => {
                if let Err(e) = cold.append(vec![event]) {
                    tracing::error!("context event not stored: {e}");
                }
            }
            Op::Pass {
                call,
                query,
                prune,
                recall,
                context_tokens,
                memory_tokens,
            } => {
                let result = pass(
                    &mut cold,
                    cfg,
                    &query,
                    prune,
                    recall,
                    context_tokens,
                    memory_tokens,
                    now,
                );
                backfill |= has_companion && result.as_ref().is_ok_and(|p| p.archived > 0);
                done.send(MemoryDone { call, result });
            }
            Op::Query { query, k, reply } => {
                let _ = reply.send(query_into_window(
                    &mut cold,
                    &query,
                    k,
                    now,
                    cfg.utc_offset_secs,
                ));
            }
            Op::Commit {
                content,
                summary,
                reply,
            } => {
                let _ = reply.send(commit(&mut cold, content, summary, now));
                backfill = has_companion;
            }
        }
    }
}

/// How long the service waits for work before spending a moment on the back-fill.
const BACKFILL_IDLE: Duration = Duration::from_millis(250);
/// Entries embedded per idle moment: at most ~200 ms of the companion on long turns, the longest
/// a request arriving meanwhile waits (~9 entries/s either way).
const BACKFILL_BATCH: usize = 4;

/// One back-fill step; whether there may be more to do.
fn backfill_step(cold: &mut ColdContext) -> bool {
    match cold.backfill_companion(BACKFILL_BATCH) {
        Ok(0) => false,
        Ok(done) => {
            tracing::debug!(done, "companion vectors back-filled");
            true
        }
        Err(e) => {
            tracing::warn!("companion back-fill stopped: {e}");
            false
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn pass(
    cold: &mut ColdContext,
    cfg: &MemoryConfig,
    query: &str,
    prune: bool,
    recall: bool,
    context_tokens: usize,
    memory_tokens: usize,
    now: i64,
) -> Result<MemoryPass, String> {
    let mut out = MemoryPass::default();
    if prune {
        let stats = cold.store().events_stats().map_err(|e| e.to_string())?;
        let limits = PruneLimits::compute(
            cfg.max_context_size,
            cfg.protected,
            context_tokens,
            stats.tokens,
            stats.events as usize,
        );
        if stats.events as usize > limits.top_k {
            let outcome = cold
                .prune(query, limits.top_k, limits.protected, now)
                .map_err(|e| e.to_string())?;
            out.archived = outcome.archived.len();
            if out.archived > 0 {
                tracing::debug!(
                    archived = out.archived,
                    kept = outcome.kept,
                    "pruned the working window into cold context"
                );
            }
        }
    }
    if recall && !query.trim().is_empty() {
        out.block = cold
            .auto_inject(query, memory_tokens, now)
            .map_err(|e| e.to_string())?;
    }
    out.window = cold
        .store()
        .events_window()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|e| e.record.event)
        .collect();
    Ok(out)
}

/// Recalls for the model and copies what it finds into the working window at its original time
/// (never removing it from cold context).
fn query_into_window(
    cold: &mut ColdContext,
    query: &str,
    k: usize,
    now: i64,
    offset: i64,
) -> Result<String, String> {
    let window: Vec<ContextEvent> = cold
        .store()
        .events_window()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|e| e.record.event)
        .collect();
    let mut mirror = ContextWindow::new();
    for event in window {
        mirror.append(event);
    }
    let hits = cold
        .recall(query, k.max(1), now)
        .map_err(|e| e.to_string())?;
    if hits.is_empty() {
        return Ok("no matching memories".into());
    }
    // Copies are marked with their cold id, so a later prune drops them instead of archiving a
    // second copy.
    let fresh: Vec<ContextEvent> = hits
        .iter()
        .map(|h| {
            let mut copy = h.event.clone();
            copy.id = format!("{}{}", hearth_memory::RECALLED_PREFIX, h.id);
            copy
        })
        .filter(|copy| {
            !mirror
                .events()
                .iter()
                .any(|e| e.id == copy.id || *e == *copy)
        })
        .collect();
    if !fresh.is_empty() {
        cold.append(fresh).map_err(|e| e.to_string())?;
    }
    let lines: Vec<String> = hits
        .iter()
        .map(|h| {
            let e = &h.event;
            let mut line = format!(
                "[{}] {}: {}",
                hearth_memory::format_minute(e.timestamp_ms, offset),
                e.source,
                e.input
            );
            if !e.response.is_empty() {
                line.push_str(" → ");
                line.push_str(&e.response);
            }
            line
        })
        .collect();
    Ok(lines.join("\n"))
}

fn commit(
    cold: &mut ColdContext,
    content: String,
    summary: String,
    now: i64,
) -> Result<String, String> {
    if content.trim().is_empty() {
        return Err("doc_commit needs a non-empty `content`".into());
    }
    let summary = if summary.trim().is_empty() {
        content.chars().take(100).collect()
    } else {
        summary
    };
    let event = ContextEvent::new(now, "manual", summary).with_response(content);
    let tokens = estimate_tokens(&event.response);
    let stored = cold.append(vec![event]).map_err(|e| e.to_string())?;
    let ids = cold
        .archive(&stored, "manual", now)
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "stored as memory {} ({tokens} tokens)",
        ids.first().copied().unwrap_or_default()
    ))
}

/// Without a store, passes still answer (with the window unknown) so no task waits forever.
fn drain_without_store(rx: &Receiver<Op>, done: &Sink<MemoryDone>) {
    for op in rx.iter() {
        match op {
            Op::Append(_) => {}
            Op::Pass { call, .. } => done.send(MemoryDone {
                call,
                result: Err("memory store unavailable".into()),
            }),
            Op::Query { reply, .. } | Op::Commit { reply, .. } => {
                let _ = reply.send(Err("memory store unavailable".into()));
            }
        }
    }
}

#[cfg(test)]
#[path = "memory_service_tests.rs"]
mod tests;
