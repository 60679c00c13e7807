//! Cold context (L2): where pruned events go, and how they come back.
//!
//! Archiving moves window events into the store's `cold` table with their original timestamps,
//! their search text (`textForVector`), its keyword terms (indexed by SQLite FTS5) and, when a
//! dense model is loaded, a vector of the model's fingerprint. Recall asks both indexes — BM25
//! over the terms, cosine over the vectors of the current fingerprint — and fuses the two
//! rankings by reciprocal rank; it counts an access on what it returns and never deletes
//! (DESIGN §4.2). Entries idle for 72 h with at most two accesses are the distiller's
//! candidates (`find_cold`).

use std::collections::HashMap;
use std::sync::Arc;

use crate::embed::Embedder;
use crate::prune::{DenseRef, PruneEvent, PruneQuery, plan_prune};
use crate::recall::RecallError;
use crate::recall::clock::format_minute;
use crate::recall::dense_index::{DenseIndex, EntryMeta};
use crate::recall::fusion::{DEFAULT_RRF_K, Ranked, reciprocal_rank_fusion};
use crate::recall::priors::{QueryPriors, Speaker};
use crate::recall::terms::{index_tokens, query_tokens};
use crate::recall::vector_text::{PlainText, VectorTextRules, text_for_vector};
use crate::{
    COLD_MAX_ACCESS, COLD_MAX_IDLE_MS, ColdMove, ContextEvent, ContextWindow, DenseVector,
    EventRecord, SparseEmbedder, SparseVector, Store, StoredEvent, estimate_tokens,
};

/// Texts per embedding run: large enough to amortise a graph run, small enough that one
/// archive's buffers stay small (the model's own limit is 64).
pub const EMBED_BATCH: usize = 64;
/// First line of an injected memory block ("related memory").
pub const INJECT_HEADER: &str = "【相关记忆】";
/// Replies are cut to this many characters in an injected block.
const INJECT_RESPONSE_CHARS: usize = 160;

/// How recall ranks and how much it injects.
///
/// The ranking defaults were measured on the recall benchmark (LongMemEval oracle, 10,194
/// turns, 470 questions, the default model). Fusion settings alone (`rrf_k` 5…100, dense weight
/// 0.6…2, a min-max or max-normalised score fusion instead of ranks) land within turn_any@5
/// 0.70–0.76, so the published RRF constant and an even weighting stay. What moves recall is
/// what the query says besides its words (`QueryPriors`): with them turn_any@5 is 0.83–0.84,
/// and it stays within ±0.01 across half-lives of 7–60 days, floors of 0.3–0.5, agent weights
/// of 0.3–0.5 and span boosts of 1.5–3, on either half of the questions — the defaults are round
/// values inside that plateau, not a fitted peak. The priors need candidates beyond the top 50
/// of each list (`depth` 200: +0.02). Passage averaging (`passage_chars` 400), sentence-level
/// max-similarity, dense pseudo-relevance feedback, word-bigram BM25 and session-level score
/// propagation all measured flat or lower, hence off or absent.
#[derive(Clone, Debug, PartialEq)]
pub struct RecallConfig {
    /// Reciprocal rank fusion constant.
    pub rrf_k: f64,
    /// Candidates taken from each index before fusion (at least the `k` asked for).
    pub depth: usize,
    /// Weight of the dense ranking in the fusion.
    pub dense_weight: f64,
    /// Weight of the keyword (BM25) ranking in the fusion.
    pub keyword_weight: f64,
    /// Dense candidates must reach this fraction of the best candidate's cosine.
    pub dense_relative_floor: f32,
    /// Texts longer than this many characters are embedded as passages of about this size and
    /// their vectors averaged (0: embed the text whole, cut at the model's token limit).
    pub passage_chars: usize,
    /// Auto-injection floor with a dense model: an entry is injected only when its cosine to
    /// the query reaches this.
    pub inject_min_cosine: f32,
    /// Auto-injection floor without one: sparse (word) cosine between query and entry text.
    pub inject_min_sparse: f32,
    /// At most this many entries are injected (SPEC §5.1: top 3).
    pub inject_max_items: usize,
    /// The user's time zone: dates in injected blocks, and the calendar days that "yesterday",
    /// "last Tuesday" and the no-future rule are reckoned in.
    pub utc_offset_secs: i64,
    /// An entry this many days old counts half way between full and `recency_floor`
    /// (0: no recency weighting).
    pub recency_half_life_days: f64,
    /// The least an old entry's score is multiplied by for its age.
    pub recency_floor: f64,
    /// Factor on entries dated inside a time span the query names ("two weeks ago").
    pub time_window_boost: f64,
    /// Factor on the agent's own replies when the query is about the user's life.
    pub agent_words_weight: f64,
    /// Factor on the user's inputs when the query asks about the agent's words.
    pub user_words_weight: f64,
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            rrf_k: DEFAULT_RRF_K,
            depth: 200,
            dense_weight: 1.0,
            keyword_weight: 1.0,
            dense_relative_floor: 0.5,
            passage_chars: 0,
            inject_min_cosine: 0.35,
            inject_min_sparse: 0.2,
            inject_max_items: 3,
            utc_offset_secs: 0,
            recency_half_life_days: 14.0,
            recency_floor: 0.5,
            time_window_boost: 2.0,
            agent_words_weight: 0.5,
            user_words_weight: 0.7,
        }
    }
}

/// One recalled cold entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Recalled {
    /// Cold entry id.
    pub id: i64,
    /// The event as archived, original timestamp included.
    pub event: ContextEvent,
    /// Fused (reciprocal rank) score weighed by the query's priors: only comparable within one
    /// recall.
    pub score: f64,
    /// Cosine to the query in the current dense space, when both have a vector.
    pub dense_cosine: Option<f32>,
    /// BM25 score (higher is better) when the keyword index matched.
    pub keyword_score: Option<f64>,
    /// The text the entry is searched by.
    pub text: String,
}

/// What a prune did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneOutcome {
    /// Window events left.
    pub kept: usize,
    /// Cold ids of the archived events, in time order.
    pub archived: Vec<i64>,
}

/// Cold context over the durable store. Owns the store so that its in-memory vector index can
/// never drift from the table it mirrors: writes made through [`ColdContext::store_mut`] mark the
/// index for a reload on the next recall.
pub struct ColdContext {
    store: Store,
    embedder: Option<Arc<dyn Embedder>>,
    fingerprint: Option<String>,
    rules: Box<dyn VectorTextRules + Send + Sync>,
    config: RecallConfig,
    index: Option<DenseIndex>,
    fallback_announced: bool,
}

impl std::fmt::Debug for ColdContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColdContext")
            .field("store", &self.store.path())
            .field("fingerprint", &self.fingerprint)
            .field("config", &self.config)
            .field("indexed", &self.index.as_ref().map(DenseIndex::len))
            .finish_non_exhaustive()
    }
}

impl ColdContext {
    /// Cold context over `store`, with the dense model `embedder` (`None`: keyword recall only,
    /// announced once in the log).
    pub fn new(store: Store, embedder: Option<Arc<dyn Embedder>>) -> Self {
        let fingerprint = embedder.as_ref().map(|e| e.fingerprint().to_string());
        Self {
            store,
            embedder,
            fingerprint,
            rules: Box::new(PlainText),
            config: RecallConfig::default(),
            index: None,
            fallback_announced: false,
        }
    }

    pub fn with_config(mut self, config: RecallConfig) -> Self {
        self.config = config;
        self
    }

    /// The channel and tool cleaners / NoMemory flags `text_for_vector` applies.
    pub fn with_rules(mut self, rules: impl VectorTextRules + Send + Sync + 'static) -> Self {
        self.rules = Box::new(rules);
        self
    }

    pub fn config(&self) -> &RecallConfig {
        &self.config
    }

    /// Changes how recall ranks; takes effect on the next recall.
    pub fn set_config(&mut self, config: RecallConfig) {
        self.config = config;
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store for writes outside cold context's own (journal, frames, the window). Assumes
    /// cold entries may change too: the vector index is reloaded before the next recall.
    pub fn store_mut(&mut self) -> &mut Store {
        self.index = None;
        &mut self.store
    }

    pub fn into_store(self) -> Store {
        self.store
    }

    /// The current dense space, if a model is loaded.
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// `textForVector` under this cold context's rules.
    pub fn text_for(&self, event: &ContextEvent) -> String {
        text_for_vector(event, self.rules.as_ref())
    }

    /// Window records for new events: the dense vector of each event's text when a model is
    /// loaded (embedded in batches of [`EMBED_BATCH`]), its sparse vector otherwise; no vector
    /// for an event with no searchable text.
    pub fn prepare(&mut self, events: Vec<ContextEvent>) -> Vec<EventRecord> {
        let texts: Vec<String> = events.iter().map(|e| self.text_for(e)).collect();
        let dense = self.embed_texts(&texts);
        events
            .into_iter()
            .zip(texts)
            .zip(dense)
            .map(|((event, text), dense)| {
                let record = EventRecord::new(event);
                match (dense, &self.fingerprint) {
                    (Some(values), Some(fp)) => record.with_dense(DenseVector::new(fp, values)),
                    _ if text.is_empty() => record,
                    _ => {
                        let sparse = SparseEmbedder.vectorize(&text);
                        match serde_json::to_string(&sparse) {
                            Ok(json) => record.with_sparse(json),
                            Err(_) => record,
                        }
                    }
                }
            })
            .collect()
    }

    /// Appends new events to the window (one transaction), vectors computed by
    /// [`prepare`](Self::prepare); returns their window row ids.
    pub fn append(&mut self, events: Vec<ContextEvent>) -> Result<Vec<StoredEvent>, RecallError> {
        let records = self.prepare(events);
        let ids = self.store.events_append(&records)?;
        Ok(ids
            .into_iter()
            .zip(records)
            .map(|(id, record)| StoredEvent { id, record })
            .collect())
    }

    /// Moves window events to cold context in one transaction, with their original timestamps,
    /// search text and keyword terms. Entries whose window row had no vector in the current
    /// dense space get one afterwards (a second transaction; if that fails the entries are still
    /// archived and keyword-searchable, and `cold_stale_vectors` lists them for a back-fill).
    /// Returns the cold ids in the order of `events`.
    pub fn archive(
        &mut self,
        events: &[StoredEvent],
        archived_from: &str,
        now_ms: i64,
    ) -> Result<Vec<i64>, RecallError> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let texts: Vec<String> = events
            .iter()
            .map(|e| self.text_for(&e.record.event))
            .collect();
        let moves: Vec<ColdMove> = events
            .iter()
            .zip(&texts)
            .map(|(e, text)| ColdMove {
                event_id: e.id,
                text: text.clone(),
                tokens: index_tokens(text),
            })
            .collect();
        let ids = self.store.move_to_cold(&moves, archived_from, now_ms)?;

        let current = |e: &StoredEvent| -> Option<Vec<f32>> {
            let dense = e.record.dense.as_ref()?;
            (Some(&dense.fingerprint) == self.fingerprint.as_ref()).then(|| dense.values.clone())
        };
        let mut vectors: Vec<Option<Vec<f32>>> = events.iter().map(current).collect();
        let missing: Vec<usize> = (0..events.len())
            .filter(|&i| vectors[i].is_none() && !texts[i].is_empty())
            .collect();
        if !missing.is_empty() && self.embedder.is_some() {
            let missing_texts: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let embedded = self.embed_texts(&missing_texts);
            let fp = self.fingerprint.clone().unwrap_or_default();
            let mut updates = Vec::new();
            for (&i, v) in missing.iter().zip(embedded) {
                if let Some(v) = v {
                    updates.push((ids[i], DenseVector::new(fp.clone(), v.clone())));
                    vectors[i] = Some(v);
                }
            }
            if let Err(err) = self.store.cold_set_dense(&updates) {
                tracing::warn!(%err, entries = updates.len(), "archived without dense vectors");
                for &i in &missing {
                    vectors[i] = None;
                }
            }
        }
        if let Some(index) = self.index.as_mut() {
            for ((&id, v), e) in ids.iter().zip(&vectors).zip(events) {
                let meta = EntryMeta {
                    timestamp_ms: e.record.event.timestamp_ms,
                    speaker: Speaker::of_source(&e.record.event.source),
                };
                if let Some(v) = v
                    && let Err(err) = index.insert(id, v, meta)
                {
                    tracing::warn!(%err, id, "cold vector not indexed");
                }
            }
        }
        Ok(ids)
    }

    /// Archives events that were never in the window (an import, a benchmark corpus) by the same
    /// path as a prune: appended to the window, then moved to cold context. Two transactions;
    /// a crash between them leaves the events in the window, never loses them.
    pub fn archive_events(
        &mut self,
        events: Vec<ContextEvent>,
        archived_from: &str,
        now_ms: i64,
    ) -> Result<Vec<i64>, RecallError> {
        let stored = self.append(events)?;
        self.archive(&stored, archived_from, now_ms)
    }

    /// Prunes the window for `query` (SPEC §4.6 with Hearth's fixes, see [`crate::prune`]): keeps
    /// the last `protected` events and the `top_k − protected` most relevant others, moves the
    /// rest to cold context with their original timestamps.
    pub fn prune(
        &mut self,
        query: &str,
        top_k: usize,
        protected: usize,
        now_ms: i64,
    ) -> Result<PruneOutcome, RecallError> {
        let window = self.store.events_window()?;
        let query_dense = if query.trim().is_empty() {
            None
        } else {
            self.embed_query(query)
        };
        let query_sparse = SparseEmbedder.vectorize(query);
        // Sparse vectors of events without a usable dense vector: stored ones, else computed.
        let sparse: Vec<Option<SparseVector>> = window
            .iter()
            .map(|e| {
                let dense_ok = e.record.dense.as_ref().is_some_and(|d| {
                    Some(&d.fingerprint) == self.fingerprint.as_ref()
                        && query_dense
                            .as_ref()
                            .is_some_and(|q| q.len() == d.values.len())
                });
                if dense_ok {
                    return None;
                }
                e.record
                    .sparse
                    .as_deref()
                    .and_then(|json| serde_json::from_str(json).ok())
                    .or_else(|| {
                        let text = self.text_for(&e.record.event);
                        (!text.is_empty()).then(|| SparseEmbedder.vectorize(&text))
                    })
            })
            .collect();
        let events: Vec<PruneEvent<'_>> = window
            .iter()
            .zip(&sparse)
            .map(|(e, s)| PruneEvent {
                timestamp_ms: e.record.event.timestamp_ms,
                dense: e.record.dense.as_ref().map(|d| DenseRef {
                    fingerprint: &d.fingerprint,
                    values: &d.values,
                }),
                sparse: s.as_ref(),
            })
            .collect();
        let fp = self.fingerprint.clone().unwrap_or_default();
        let prune_query = PruneQuery {
            dense: query_dense.as_deref().map(|values| DenseRef {
                fingerprint: &fp,
                values,
            }),
            sparse: Some(&query_sparse),
        };
        let plan = plan_prune(&events, &prune_query, top_k, protected);
        if plan.is_noop() {
            return Ok(PruneOutcome {
                kept: window.len(),
                archived: Vec::new(),
            });
        }
        // A copy recalled from cold context is dropped (its original is still there), anything
        // else moves to cold context.
        let (copies, archive): (Vec<StoredEvent>, Vec<StoredEvent>) = plan
            .archive
            .iter()
            .map(|&i| window[i].clone())
            .partition(|e| e.record.event.id.starts_with(crate::RECALLED_PREFIX));
        if !copies.is_empty() {
            let ids: Vec<i64> = copies.iter().map(|e| e.id).collect();
            self.store.events_drop_recalled(&ids)?;
        }
        let archived = self.archive(&archive, "prune", now_ms)?;
        Ok(PruneOutcome {
            kept: plan.keep.len(),
            archived,
        })
    }

    /// The `k` cold entries most relevant to `query` asked at `now_ms`, best first, without
    /// counting an access. Candidates come from both indexes (entries dated after the query's
    /// day left out), are fused by reciprocal rank, and the fused scores are weighed by the
    /// query's priors (recency, named time spans, whose words: see `QueryPriors`).
    pub fn peek(
        &mut self,
        query: &str,
        k: usize,
        now_ms: i64,
    ) -> Result<Vec<Recalled>, RecallError> {
        if k == 0 || query.trim().is_empty() {
            return Ok(Vec::new());
        }
        self.ensure_index()?;
        let priors = QueryPriors::new(query, now_ms, &self.config);
        let depth = self.config.depth.max(k);
        let keyword =
            self.store
                .cold_fts_before(&query_tokens(query), depth, priors.before_ms())?;
        let query_vec = self.embed_query(query);
        let mut dense = match (&query_vec, &self.index) {
            (Some(q), Some(index)) if !index.is_empty() => {
                index.search(q, depth, |m| priors.admits(m.timestamp_ms))?
            }
            _ => Vec::new(),
        };
        // Ranks alone cannot tell a close second from a distant one; without this floor a
        // weak match a day newer would overtake the clear answer once recency weighs in.
        if let Some(best) = dense.first().map(|d| d.1) {
            let floor = best * self.config.dense_relative_floor;
            dense.retain(|d| d.1 >= floor);
        }
        let dense_ids: Vec<i64> = dense.iter().map(|d| d.0).collect();
        let keyword_ids: Vec<i64> = keyword.iter().map(|k| k.id).collect();
        let mut meta: HashMap<i64, EntryMeta> = dense.iter().map(|d| (d.0, d.2)).collect();
        for hit in &keyword {
            meta.entry(hit.id).or_insert(EntryMeta {
                timestamp_ms: hit.timestamp_ms,
                speaker: Speaker::of_source(&hit.source),
            });
        }
        let mut fused: Vec<(i64, f64)> = reciprocal_rank_fusion(
            &[
                Ranked {
                    ids: &dense_ids,
                    weight: self.config.dense_weight,
                },
                Ranked {
                    ids: &keyword_ids,
                    weight: self.config.keyword_weight,
                },
            ],
            self.config.rrf_k,
        )
        .into_iter()
        .filter_map(|f| {
            let m = meta.get(&f.id)?;
            Some((f.id, f.score * priors.factor(m.timestamp_ms, m.speaker)))
        })
        .filter(|&(_, score)| score > 0.0)
        .collect();
        // The fusion's order is total; a stable sort keeps it among equal weighed scores.
        fused.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut out = Vec::with_capacity(k);
        for (id, score) in fused {
            if out.len() == k {
                break;
            }
            let Some(entry) = self.store.cold_get(id)? else {
                // Removed behind our back: forget its vector too.
                if let Some(index) = self.index.as_mut() {
                    index.remove(id);
                }
                continue;
            };
            let dense_cosine = dense.iter().find(|d| d.0 == id).map(|d| d.1).or_else(|| {
                let index = self.index.as_ref()?;
                let q = query_vec.as_ref()?;
                index
                    .vector(id)
                    .map(|v| crate::simd::Kernel::best().dot(q, v))
            });
            out.push(Recalled {
                id,
                event: entry.event,
                score,
                dense_cosine,
                keyword_score: keyword.iter().find(|k| k.id == id).map(|k| k.score),
                text: entry.text,
            });
        }
        Ok(out)
    }

    /// [`peek`](Self::peek), then one access counted on every returned entry. Nothing is removed
    /// from cold context.
    pub fn recall(
        &mut self,
        query: &str,
        k: usize,
        now_ms: i64,
    ) -> Result<Vec<Recalled>, RecallError> {
        let hits = self.peek(query, k, now_ms)?;
        if !hits.is_empty() {
            let ids: Vec<i64> = hits.iter().map(|h| h.id).collect();
            self.store.cold_touch(&ids, now_ms)?;
        }
        Ok(hits)
    }

    /// Recalls and copies the entries into `window` at their original time (`insert_by_timestamp`);
    /// an entry already in the window is not copied twice. Returns how many were inserted. Cold
    /// context keeps every entry.
    pub fn recall_into(
        &mut self,
        window: &mut ContextWindow,
        query: &str,
        k: usize,
        now_ms: i64,
    ) -> Result<usize, RecallError> {
        let hits = self.recall(query, k, now_ms)?;
        let mut inserted = 0;
        for hit in hits {
            if !window.events().contains(&hit.event) {
                window.insert_by_timestamp(hit.event);
                inserted += 1;
            }
        }
        Ok(inserted)
    }

    /// SPEC §5.2 `FindColdDocs(72 h, 2)`: entries idle for more than 72 hours with at most two
    /// accesses, least recently used first.
    pub fn find_cold(&self, now_ms: i64) -> Result<Vec<i64>, RecallError> {
        Ok(self
            .store
            .cold_find_cold(now_ms, COLD_MAX_IDLE_MS, COLD_MAX_ACCESS)?)
    }

    /// A block of the entries related to `query` for the prompt, within `memory_tokens`
    /// (`estimate_tokens` of the whole block). Only entries that clear the relevance floor are
    /// included, at most `inject_max_items`, best first until the budget is spent; the block
    /// lists them in time order with no scores, so it changes only when its members change.
    /// Empty when nothing clears the floor. The included entries count an access.
    pub fn auto_inject(
        &mut self,
        query: &str,
        memory_tokens: usize,
        now_ms: i64,
    ) -> Result<String, RecallError> {
        let max_items = self.config.inject_max_items;
        if memory_tokens == 0 || max_items == 0 {
            return Ok(String::new());
        }
        let hits = self.peek(query, max_items * 3, now_ms)?;
        let query_sparse = SparseEmbedder.vectorize(query);
        let relevant = |hit: &Recalled| match hit.dense_cosine {
            Some(c) => c >= self.config.inject_min_cosine,
            None if self.fingerprint.is_none()
                || self.index.as_ref().is_none_or(|i| i.is_empty()) =>
            {
                query_sparse.cosine(&SparseEmbedder.vectorize(&hit.text))
                    >= self.config.inject_min_sparse
            }
            // A dense model is loaded but the entry has no vector in its space yet: judge it by
            // words, as the fallback would.
            None => {
                query_sparse.cosine(&SparseEmbedder.vectorize(&hit.text))
                    >= self.config.inject_min_sparse
            }
        };
        let mut left = memory_tokens.saturating_sub(estimate_tokens(INJECT_HEADER));
        let mut chosen: Vec<(i64, String, i64)> = Vec::new();
        for hit in hits.iter().filter(|h| relevant(h)) {
            if chosen.len() == max_items {
                break;
            }
            let line = self.inject_line(&hit.event);
            // The line and the line break before it (one rune).
            let cost = estimate_tokens(&line) + 2;
            if cost > left {
                continue;
            }
            left -= cost;
            chosen.push((hit.event.timestamp_ms, line, hit.id));
        }
        if chosen.is_empty() {
            return Ok(String::new());
        }
        chosen.sort_by(|a, b| a.0.cmp(&b.0).then(a.2.cmp(&b.2)));
        let ids: Vec<i64> = chosen.iter().map(|c| c.2).collect();
        self.store.cold_touch(&ids, now_ms)?;
        let mut block = String::from(INJECT_HEADER);
        for (_, line, _) in chosen {
            block.push('\n');
            block.push_str(&line);
        }
        Ok(block)
    }

    fn inject_line(&self, event: &ContextEvent) -> String {
        let mut line = format!(
            "[{}] {}: {}",
            format_minute(event.timestamp_ms, self.config.utc_offset_secs),
            event.source,
            event.input
        );
        if !event.response.is_empty() {
            if !event.input.is_empty() {
                line.push_str(" → ");
            }
            line.extend(event.response.chars().take(INJECT_RESPONSE_CHARS));
        }
        line
    }

    /// Loads the vector index of the current fingerprint when it is not loaded.
    fn ensure_index(&mut self) -> Result<(), RecallError> {
        let (Some(fp), Some(embedder)) = (&self.fingerprint, &self.embedder) else {
            return Ok(());
        };
        if self.index.as_ref().is_some_and(|i| i.fingerprint() == fp) {
            return Ok(());
        }
        let (index, skipped) = DenseIndex::load(&self.store, fp, embedder.dim())?;
        if skipped > 0 {
            tracing::warn!(skipped, "cold vectors of the wrong width were not indexed");
        }
        self.index = Some(index);
        Ok(())
    }

    /// The query's dense vector, or `None` without a model (or when the model failed: keyword
    /// recall still works, and the failure is logged once).
    fn embed_query(&mut self, query: &str) -> Option<Vec<f32>> {
        let embedder = self.embedder.clone()?;
        match embedder.embed(query) {
            Ok(v) if v.len() == embedder.dim() => Some(v),
            Ok(v) => {
                self.announce_fallback(&format!("query vector has {} dimensions", v.len()));
                None
            }
            Err(err) => {
                self.announce_fallback(&err);
                None
            }
        }
    }

    /// Dense vectors of `texts` (`None` for an empty text, or for all when there is no model or
    /// it failed). Long texts are embedded as passages and averaged when `passage_chars` is set.
    fn embed_texts(&mut self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        let Some(embedder) = self.embedder.clone() else {
            if texts.iter().any(|t| !t.is_empty()) {
                self.announce_fallback(&"no dense embedding model loaded");
            }
            return out;
        };
        // (text index, passage) for every non-empty text.
        let mut pieces: Vec<(usize, &str)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            if text.is_empty() {
                continue;
            }
            if self.config.passage_chars > 0 {
                for p in split_passages(text, self.config.passage_chars) {
                    pieces.push((i, p));
                }
            } else {
                pieces.push((i, text));
            }
        }
        let mut sums: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for chunk in pieces.chunks(EMBED_BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|p| p.1).collect();
            let vectors = match embedder.embed_batch(&batch) {
                Ok(v) if v.len() == batch.len() && v.iter().all(|r| r.len() == embedder.dim()) => v,
                Ok(_) => {
                    self.announce_fallback(&"the model returned vectors of the wrong shape");
                    return out;
                }
                Err(err) => {
                    self.announce_fallback(&err);
                    return out;
                }
            };
            for (&(i, _), v) in chunk.iter().zip(vectors) {
                match &mut sums[i] {
                    Some(acc) => acc.iter_mut().zip(&v).for_each(|(a, x)| *a += x),
                    slot @ None => *slot = Some(v),
                }
            }
        }
        for (slot, sum) in out.iter_mut().zip(sums) {
            *slot = sum.map(|mut v| {
                crate::l2_normalize(&mut v);
                v
            });
        }
        out
    }

    /// Logs once per cold context that recall runs on keywords only, and why.
    fn announce_fallback(&mut self, reason: &dyn std::fmt::Display) {
        if !self.fallback_announced {
            self.fallback_announced = true;
            tracing::warn!(
                %reason,
                "cold context without dense vectors: recall uses keywords only"
            );
        }
    }
}

/// Splits `text` into passages of about `max_chars` characters, cutting after sentence ends
/// (or line breaks) where possible, so each passage reads as a unit to the model.
pub fn split_passages(text: &str, max_chars: usize) -> Vec<&str> {
    let max_chars = max_chars.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut count = 0;
    let mut last_break: Option<usize> = None;
    for (at, c) in text.char_indices() {
        count += 1;
        let end = at + c.len_utf8();
        if matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '\n' | ';' | '；') {
            last_break = Some(end);
        }
        if count >= max_chars {
            let cut = last_break.filter(|&b| b > start).unwrap_or(end);
            let piece = text[start..cut].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            start = cut;
            count = text[start..end].chars().count();
            last_break = None;
        }
    }
    let piece = text[start..].trim();
    if !piece.is_empty() {
        out.push(piece);
    }
    out
}
