//! The memory service's side of the store's owner thread (`hearth-store`, see
//! [`crate::durable`]): the ops a [`MemoryService`](crate::memory_service::MemoryService) sends,
//! the settings and models they run with, and what runs them — the memory pass (prune, recall,
//! the graph's block), the tools' queries, notes and searches — over cold context and the one
//! read-write connection, so their writes share the journal's group commit.

use crate::GraphMemoryError;
use crate::durable::media::MediaRefusal;
use crate::durable::then::{Then, answer_at_commit};
use crate::error::MemoryError;
use crate::graph_service::{GraphMemory, GraphRequest, GraphSettings};
use crate::journal_trim::JournalTrim;
use crossbeam_channel::Sender;
use hearth_engine::Sink;
use hearth_memory::{
    ColdContext, ContextEvent, ContextWindow, MemoryModels, PruneSettings, RecallConfig,
    estimate_tokens,
};
use std::collections::VecDeque;
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
    /// The tools of the pass's [`ToolRanking`], nearest to the input first (empty: none asked).
    pub tool_ranking: Vec<String>,
    /// The cold items in `block`, with why each was chosen.
    pub recalled: Vec<crate::recalled::RecalledItem>,
    /// The graph's facts in `block`, in block order.
    pub facts: Vec<hearth_graph::FactId>,
}

/// Tools to rank against a pass's input, by the recall model on the store's thread (the
/// kernel's worker never runs a model).
#[derive(Debug)]
pub struct ToolRanking {
    /// Where tool vectors are kept; the pass installs the loaded model into it.
    pub index: std::sync::Arc<crate::tool_choice::ToolIndex>,
    /// The tools to rank.
    pub docs: Vec<crate::tool_choice::ToolDoc>,
}

/// The end of one memory pass, as the memory service reports it.
#[derive(Debug)]
pub struct MemoryDone {
    /// The call number given to [`MemoryService::pass`].
    pub call: u64,
    /// What the pass found, or why it failed.
    pub result: Result<MemoryPass, MemoryError>,
}

/// The models and settings the service runs with, once loaded.
pub(crate) struct Install {
    pub(crate) models: MemoryModels,
    pub(crate) cfg: MemoryConfig,
    pub(crate) done: Sink<MemoryDone>,
    pub(crate) consolidate: Option<Sink<crate::input::InputEvent>>,
}

/// Work for the memory service, run on the store's owner thread.
pub(crate) enum MemoryOp {
    /// A service is starting: later memory ops wait for its [`Install`].
    Attach,
    Install(Box<Install>),
    Append(ContextEvent),
    Pass(PassRequest),
    Query {
        query: String,
        k: usize,
        reply: Sender<Result<String, MemoryError>>,
    },
    Commit {
        content: String,
        summary: String,
        /// Media kept with the note, as digests or the prefixes markers show: the store owner
        /// checks them and writes their markers into `content` before the op runs.
        media: Vec<String>,
        reply: Sender<Result<String, MemoryError>>,
    },
    /// An event kept straight in cold context, never in the window (`textmemory.append`):
    /// `archived_from` records who kept it.
    Remember {
        event: ContextEvent,
        archived_from: String,
        reply: Sender<Result<i64, MemoryError>>,
    },
    /// An item of the media store, by digest or the prefix a marker shows: its description and
    /// where the store keeps its blob (the store owner resolves it, `media.db` keeping its one
    /// owner; the asker reads the bytes on its own thread).
    Media {
        name: String,
        reply: Sender<Result<(crate::input_media::MediaRef, std::path::PathBuf), MemoryError>>,
    },
    /// A tool's result's content blocks: the inline items among them stored in the media
    /// store and rewritten to reference it (as an input's are), or why they could not be.
    KeepMedia {
        blocks: Vec<serde_json::Value>,
        reply: Sender<Result<Vec<serde_json::Value>, MediaRefusal>>,
    },
    /// A look into cold context that changes nothing (no access counted, nothing copied into
    /// the window): the memory browser's search.
    Search {
        query: String,
        k: usize,
        reply: Sender<Result<Vec<crate::recalled::RecalledItem>, MemoryError>>,
    },
    /// A graph request; a fact it tells comes from the turn `turn` (empty: from no turn).
    Graph {
        request: GraphRequest,
        turn: String,
        reply: Sender<Result<serde_json::Value, GraphMemoryError>>,
    },
    /// A remembered exchange removed at a user's request (`memory.forget`, `hearth memory
    /// forget c45|w12`), with the facts only its turn told and their words in its other rows.
    ForgetEntry {
        entry: crate::entry_ref::EntryRef,
        reply: Sender<Result<serde_json::Value, MemoryError>>,
    },
    /// A turn marked to be forgotten once answered, answered now (the group journaling its
    /// reply, or a start finding it still marked): forgotten with the facts only it told.
    ForgetAnswered {
        /// The turn's request id.
        turn: String,
    },
    /// The turns still in the working window that a query's words name (read only).
    SearchWindow {
        query: String,
        k: usize,
        reply: Sender<Result<Vec<hearth_memory::WindowHit>, MemoryError>>,
    },
}

/// Settings of the memory service.
#[derive(Clone, Debug)]
pub struct MemoryConfig {
    /// The SQLite store file (opened by [`Durable`] when the kernel has none).
    pub store: PathBuf,
    /// Load the dense embedding model (off: keyword recall only).
    pub model: bool,
    /// Where `make setup` put the embedding model (`None`: the default cache dir).
    pub model_dir: Option<PathBuf>,
    /// `core.agent.max_context_size` (SPEC §4.7).
    pub max_context_size: usize,
    /// The share of the window's limit a prune frees beyond it (0 to 1): see
    /// [`DEFAULT_PRUNE_SLACK`](hearth_memory::DEFAULT_PRUNE_SLACK).
    pub prune_slack: f64,
    /// Configured protected count (the last N events are never pruned).
    pub protected: usize,
    /// The user's zone: recall's time words, the graph's days, a scene's part of the day.
    pub zone: hearth_engine::LocalZone,
    /// The L3 graph (`None`: no graph memory).
    pub graph: Option<GraphSettings>,
    /// The knowledge base (`None`: no knowledge tools).
    pub knowledge: Option<crate::knowledge_tools::KnowledgeSettings>,
    /// How long answered journal entries are kept beyond each channel's newest
    /// [`JOURNAL_KEEP_NEWEST`](crate::journal_trim::JOURNAL_KEEP_NEWEST) (`None`: all are kept).
    pub journal_keep: Option<Duration>,
}

impl MemoryConfig {
    /// Memory over the store at `store` with the defaults: the embedding model from the
    /// default cache dir, the original's window limits with the default prune slack, the
    /// system's zone, no graph, no knowledge base, every journal entry kept.
    pub fn at(store: PathBuf) -> Self {
        Self {
            store,
            model: true,
            model_dir: None,
            max_context_size: hearth_memory::DEFAULT_MAX_CONTEXT_SIZE,
            prune_slack: hearth_memory::DEFAULT_PRUNE_SLACK,
            protected: hearth_memory::DEFAULT_PROTECTED_COUNT,
            zone: hearth_engine::LocalZone::default(),
            graph: None,
            knowledge: None,
            journal_keep: None,
        }
    }
}

/// The memory service's side of the owner thread.
#[derive(Default)]
pub(crate) struct MemoryState {
    phase: Phase,
}

#[derive(Default)]
enum Phase {
    /// No service attached: memory ops are answered as unavailable.
    #[default]
    Off,
    /// Attached, models loading: ops wait here in order.
    Loading(VecDeque<MemoryOp>),
    Ready(Box<Ready>),
}

struct Ready {
    cfg: MemoryConfig,
    done: Sink<MemoryDone>,
    /// A dense model is loaded: passes, queries and commits embed.
    embeds: bool,
    /// Vectors may still be missing (of the main model or the companion): filled in idle time.
    backfill: bool,
    /// The recall model, also used to rank tools.
    dense: Option<std::sync::Arc<dyn hearth_memory::Embedder>>,
    /// L3: the graph file's owner and its heartbeat.
    graph: GraphMemory,
    /// The journal's answered entries past their keep, deleted in idle time.
    journal: JournalTrim,
}

impl MemoryState {
    /// Installs the loaded models on cold context; the ops that waited for them, in order.
    pub(crate) fn install(
        &mut self,
        cold: ColdContext,
        install: Install,
    ) -> (ColdContext, VecDeque<MemoryOp>) {
        let Install {
            models,
            cfg,
            done,
            consolidate,
        } = install;
        let dense = models.dense.clone();
        let now = hearth_engine::now_ms();
        let config = RecallConfig {
            zone: cfg.zone.clone(),
            ..RecallConfig::default()
        };
        let mut fresh =
            ColdContext::new(cold.into_store(), models.dense.clone()).with_config(config);
        // Missing vectors are written in idle time: the companion's are never computed on the
        // turn path; the main model's are missing for entries archived while it was absent or
        // failing, or embedded by a model since replaced. Looked for at start, and after each
        // pass that archived entries.
        let embeds = models.dense.is_some() || models.companion.is_some();
        if let Some(companion) = models.companion {
            fresh = fresh.with_companion(companion).defer_companion();
        }
        let mut waiting = match std::mem::take(&mut self.phase) {
            Phase::Loading(waiting) => waiting,
            Phase::Off | Phase::Ready(_) => VecDeque::new(),
        };
        // Turns answered while still marked to be forgotten: the memory service was not
        // running when their reply was journaled (loading at a start, off, or a crash).
        match fresh.store().journal_answered_to_forget() {
            Ok(turns) => waiting.extend(
                turns
                    .into_iter()
                    .map(|turn| MemoryOp::ForgetAnswered { turn }),
            ),
            Err(e) => tracing::error!("cannot read the turns to forget once answered: {e}"),
        }
        let graph = GraphMemory::open(cfg.graph.as_ref(), cfg.zone.clone(), now, consolidate);
        let journal = JournalTrim::new(cfg.journal_keep, now);
        self.phase = Phase::Ready(Box::new(Ready {
            graph,
            cfg,
            done,
            embeds,
            backfill: embeds,
            dense,
            journal,
        }));
        (fresh, waiting)
    }

    /// Whether `op` runs a model (and so takes milliseconds, not microseconds).
    pub(crate) fn embeds(&self, op: &MemoryOp) -> bool {
        let work = match op {
            MemoryOp::Pass(_)
            | MemoryOp::Query { .. }
            | MemoryOp::Commit { .. }
            | MemoryOp::Remember { .. } => true,
            // A forget embeds again the turns its words are taken out of.
            MemoryOp::Graph { request, .. } => request.forgets(),
            MemoryOp::ForgetEntry { .. } | MemoryOp::ForgetAnswered { .. } => true,
            _ => false,
        };
        work && matches!(&self.phase, Phase::Ready(r) if r.embeds)
    }

    /// How long the owner may wait for work before an idle step is due (`None`: none is).
    pub(crate) fn idle_wait(&self) -> Option<Duration> {
        let Phase::Ready(r) = &self.phase else {
            return None;
        };
        let now = hearth_engine::now_ms();
        let graph = r.graph.idle_wait(now);
        let backfill = r.backfill.then_some(BACKFILL_IDLE);
        // An idle step waits at least the back-fill's pause: the owner's wait is "no op came
        // for this long", so a zero would run it between ops as they arrive.
        let unsaid = r.graph.unsaid_wait(now).map(|w| w.max(BACKFILL_IDLE));
        let journal = r.journal.wait(now).map(|w| w.max(BACKFILL_IDLE));
        [graph, backfill, unsaid, journal]
            .into_iter()
            .flatten()
            .min()
    }

    /// One idle step: the vector back-fill, and the graph heartbeat when it is due.
    pub(crate) fn idle(&mut self, cold: &mut ColdContext) {
        if let Phase::Ready(r) = &mut self.phase {
            if r.backfill {
                r.backfill = backfill_step(cold);
            }
            r.graph.unsay_idle(cold, hearth_engine::now_ms());
            r.graph.tick_if_due(cold, hearth_engine::now_ms());
            r.journal.run_if_due(cold, hearth_engine::now_ms());
        }
    }

    /// Runs one op; answers that must wait for the commit go to `after`.
    pub(crate) fn handle(&mut self, cold: &mut ColdContext, op: MemoryOp, after: &mut Vec<Then>) {
        let ready = match &mut self.phase {
            Phase::Ready(ready) => ready,
            Phase::Loading(waiting) => {
                if !matches!(op, MemoryOp::Attach) {
                    waiting.push_back(op);
                }
                return;
            }
            Phase::Off => {
                if matches!(op, MemoryOp::Attach) {
                    self.phase = Phase::Loading(VecDeque::new());
                } else {
                    Self::refuse(op);
                }
                return;
            }
        };
        let now = hearth_engine::now_ms();
        let cfg = &ready.cfg;
        match op {
            MemoryOp::Attach | MemoryOp::Install(_) => {}
            MemoryOp::Append(event) => {
                ready.graph.note_turn_tools(&event, now);
                if let Err(e) = cold.append(vec![event]) {
                    tracing::error!("context event not stored: {e}");
                }
            }
            MemoryOp::Pass(PassRequest {
                call,
                query,
                budget,
                tools,
                scene,
            }) => {
                let mut result = pass(
                    cold,
                    &mut ready.graph,
                    cfg,
                    &query,
                    scene.as_ref(),
                    budget,
                    now,
                );
                ready.backfill |= ready.embeds && result.as_ref().is_ok_and(|p| p.archived > 0);
                if let (Some(tools), Ok(found)) = (tools, result.as_mut()) {
                    if let Some(dense) = &ready.dense {
                        tools.index.install(dense.clone());
                    }
                    found.tool_ranking = tools.index.rank(&query, &tools.docs);
                }
                // Sent before the commit: the pass acknowledges nothing to a user, and the
                // next pass reads the window as the store holds it, so nothing can drift.
                ready.done.send(MemoryDone { call, result });
            }
            MemoryOp::Query { query, k, reply } => {
                let found = query_into_window(cold, &query, k, now, &cfg.zone);
                after.push(answer_after_commit(reply, found));
            }
            MemoryOp::Commit {
                content,
                summary,
                reply,
                ..
            } => {
                let stored = commit(cold, content, summary, now);
                ready.backfill = ready.embeds;
                after.push(answer_after_commit(reply, stored));
            }
            MemoryOp::Remember {
                event,
                archived_from,
                reply,
            } => {
                let kept = keep(cold, event, &archived_from, now);
                ready.backfill = ready.embeds;
                after.push(answer_after_commit(reply, kept));
            }
            MemoryOp::Media { reply, .. } => {
                // The store owner answers these before they reach the memory service.
                let _ = reply.send(Err(MemoryError::Stopped("the media store is not open")));
            }
            MemoryOp::KeepMedia { reply, .. } => {
                let _ = reply.send(Err(MediaRefusal::Unavailable(
                    "the media store is not open",
                )));
            }
            MemoryOp::Search { query, k, reply } => {
                let found = cold
                    .peek(&query, k.max(1), now)
                    .map(|hits| hits.iter().map(Into::into).collect())
                    .map_err(MemoryError::from);
                let _ = reply.send(found);
            }
            MemoryOp::SearchWindow { query, k, reply } => {
                let _ = reply.send(cold.search_window(&query, k).map_err(MemoryError::from));
            }
            MemoryOp::ForgetEntry { entry, reply } => {
                crate::memory_forget::forget_entry(&mut ready.graph, cold, entry, reply, after);
            }
            MemoryOp::ForgetAnswered { turn } => {
                crate::memory_forget::forget_answered(&mut ready.graph, cold, &turn, after);
            }
            MemoryOp::Graph {
                request,
                turn,
                reply,
            } => {
                let forgets = request.forgets();
                let mut shown_in =
                    |id, items: &[i64]| crate::graph_service::turns_shown(cold, id, items);
                match ready
                    .graph
                    .request_shown(request, &turn, &mut shown_in, now)
                {
                    Ok(answer) if forgets => {
                        crate::memory_forget::answer_forget(
                            &mut ready.graph,
                            cold,
                            answer,
                            reply,
                            after,
                        );
                    }
                    // graph.db commits on its own: the answer needs no wait for the store's.
                    answer => {
                        let _ = reply.send(answer);
                    }
                }
            }
        }
    }

    /// Answers an op that cannot run, so nobody waits forever.
    pub(crate) fn refuse(op: MemoryOp) {
        let why = "memory store unavailable";
        match op {
            MemoryOp::Attach | MemoryOp::Install(_) | MemoryOp::Append(_) => {}
            // Its mark stays in the journal: the next start with memory forgets it.
            MemoryOp::ForgetAnswered { turn } => {
                tracing::warn!(turn, "a turn to forget once answered waits: {why}");
            }
            MemoryOp::Pass(PassRequest { call, .. }) => {
                tracing::warn!(call, "memory pass refused: {why}");
            }
            MemoryOp::Query { reply, .. } | MemoryOp::Commit { reply, .. } => {
                let _ = reply.send(Err(MemoryError::Stopped(why)));
            }
            MemoryOp::Search { reply, .. } => {
                let _ = reply.send(Err(MemoryError::Stopped(why)));
            }
            MemoryOp::Remember { reply, .. } => {
                let _ = reply.send(Err(MemoryError::Stopped(why)));
            }
            MemoryOp::ForgetEntry { reply, .. } => {
                let _ = reply.send(Err(MemoryError::Stopped(why)));
            }
            MemoryOp::SearchWindow { reply, .. } => {
                let _ = reply.send(Err(MemoryError::Stopped(why)));
            }
            MemoryOp::Media { reply, .. } => {
                let _ = reply.send(Err(MemoryError::Stopped(why)));
            }
            MemoryOp::KeepMedia { reply, .. } => {
                let _ = reply.send(Err(MediaRefusal::Unavailable(why)));
            }
            MemoryOp::Graph { reply, .. } => {
                let _ = reply.send(Err(GraphMemoryError::Stopped(why)));
            }
        }
    }
}

/// A tool's answer, sent once the commit holding its writes is known.
fn answer_after_commit<T: Send + 'static>(
    reply: Sender<Result<T, MemoryError>>,
    result: Result<T, MemoryError>,
) -> Then {
    answer_at_commit(reply, result, MemoryError::NotStored)
}

/// How long the service waits for work before spending a moment on the back-fill.
const BACKFILL_IDLE: Duration = Duration::from_millis(250);
/// Entries embedded per idle moment: at most ~200 ms of the companion on long turns, the longest
/// a request arriving meanwhile waits (~9 entries/s either way).
const BACKFILL_BATCH: usize = 4;

/// One back-fill step (the main model's missing vectors first, then the companion's); whether
/// there may be more to do.
fn backfill_step(cold: &mut ColdContext) -> bool {
    match cold.backfill(BACKFILL_BATCH) {
        Ok(0) => false,
        Ok(done) => {
            tracing::debug!(done, "cold vectors back-filled");
            true
        }
        Err(e) => {
            tracing::warn!("cold vector back-fill stopped: {e}");
            false
        }
    }
}

/// What one pass is asked to do, and in how many tokens.
#[derive(Clone, Copy, Debug)]
pub struct PassBudget {
    /// Prune the working window for the query.
    pub prune: bool,
    /// Recall cold context for it (the block for the prompt).
    pub recall: bool,
    /// The model's context, in tokens, that the window must fit.
    pub context_tokens: usize,
    /// The share of it the recalled block may take.
    pub memory_tokens: usize,
}

/// One memory pass, as the turn engine asks for it.
#[derive(Debug)]
pub struct PassRequest {
    /// The call number its [`MemoryDone`] carries back.
    pub call: u64,
    /// The text pruned and recalled for: the input, or a tool's output.
    pub query: String,
    /// What to do, in how many tokens.
    pub budget: PassBudget,
    /// Tools to rank against the query, by the recall model.
    pub tools: Option<ToolRanking>,
    /// The turn's situation (`None`: it enters no scene).
    pub scene: Option<crate::turn_scene::TurnScene>,
}

/// One memory pass: the turn enters its scene (first, so the note for its turn id is there
/// before any of its events can be archived and distilled), then the prune, the cold recall
/// block and the graph's block biased to the scene.
fn pass(
    cold: &mut ColdContext,
    graph: &mut GraphMemory,
    cfg: &MemoryConfig,
    query: &str,
    scene: Option<&crate::turn_scene::TurnScene>,
    budget: PassBudget,
    now: i64,
) -> Result<MemoryPass, MemoryError> {
    let PassBudget {
        prune,
        recall,
        context_tokens,
        memory_tokens,
    } = budget;
    let mut out = MemoryPass::default();
    let offset = cfg.zone.offset_at(now);
    let entered = scene.and_then(|s| graph.enter_scene(s, query, offset, now));
    if prune {
        let settings = PruneSettings {
            max_context_size: cfg.max_context_size,
            protected: cfg.protected,
            context_tokens,
            slack: cfg.prune_slack,
        };
        if let Some(outcome) = cold.prune_past_limits(query, settings, now)? {
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
        let injection = cold.inject(query, memory_tokens, now)?;
        out.block = injection.block;
        out.recalled = injection.recalled.iter().map(Into::into).collect();
        // The indexer's block comes after the cold-recall block, in what of the memory budget
        // that one left.
        let left = memory_tokens.saturating_sub(estimate_tokens(&out.block));
        let facts = if injection.small_talk {
            graph.scene_block_in(entered.as_ref(), left, now)
        } else {
            graph.block_in(query, entered.as_ref(), left, now)
        };
        if !facts.is_empty() {
            if !out.block.is_empty() {
                out.block.push_str("\n\n");
            }
            out.block.push_str(&facts.text);
            out.facts = facts.shown;
        }
    }
    out.window = cold
        .store()
        .events_window()?
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
    zone: &hearth_engine::LocalZone,
) -> Result<String, MemoryError> {
    let window: Vec<ContextEvent> = cold
        .store()
        .events_window()?
        .into_iter()
        .map(|e| e.record.event)
        .collect();
    let mut mirror = ContextWindow::new();
    for event in window {
        mirror.append(event);
    }
    let hits = cold.recall(query, k.max(1), now)?;
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
        cold.append(fresh)?;
    }
    let lines: Vec<String> = hits
        .iter()
        .map(|h| {
            let e = &h.event;
            // Its id first, so the model can name it (`memory_forget c45`).
            let mut line = format!(
                "{}{} [{}] {}: {}",
                crate::recalled::ENTRY_PREFIX,
                h.id,
                hearth_memory::format_minute(e.timestamp_ms, zone.offset_at(e.timestamp_ms)),
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
) -> Result<String, MemoryError> {
    if content.trim().is_empty() {
        return Err(MemoryError::InvalidArguments(
            "doc_commit needs a non-empty `content`",
        ));
    }
    let summary = if summary.trim().is_empty() {
        content.chars().take(100).collect()
    } else {
        summary
    };
    let event =
        ContextEvent::new(now, crate::model_distill::NOTE_SOURCE, summary).with_response(content);
    let tokens = estimate_tokens(&event.response);
    let id = keep(cold, event, crate::model_distill::NOTE_SOURCE, now)?;
    Ok(format!("stored as memory {id} ({tokens} tokens)"))
}

/// Archives one event straight into cold context (never through the window) → its cold id.
fn keep(
    cold: &mut ColdContext,
    event: ContextEvent,
    archived_from: &str,
    now: i64,
) -> Result<i64, MemoryError> {
    let ids = cold.archive_events(vec![event], archived_from, now)?;
    Ok(ids.first().copied().unwrap_or_default())
}

#[cfg(test)]
#[path = "memory_state_tests.rs"]
mod tests;
