//! Cold context (L2): where pruned events go, and how they come back.
//!
//! Archiving moves window events into the store's `cold` table with their original timestamps,
//! their search text (`textForVector`), its keyword terms (indexed by SQLite FTS5) and, when a
//! dense model is loaded, a vector of the model's fingerprint. Recall asks both indexes — BM25
//! over the terms, cosine over the vectors of the current fingerprint — and fuses the two
//! rankings by reciprocal rank; it counts an access on what it returns and never deletes
//! (DESIGN §4.2). Entries idle for 72 h with at most two accesses are the distiller's
//! candidates (`find_cold`).
//!
//! A companion model (a second, different dense model) may be attached: its vectors live in the
//! store's side table and its ranking is fused as a third list. It only ranks recall; pruning
//! and the injection floor stay with the main model, whose cosine is what [`Recalled`] reports.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::embed::Embedder;
use crate::prune::{DenseRef, PruneEvent, PruneQuery, plan_prune};
use crate::recall::RecallError;
use crate::recall::clock::format_minute;
use crate::recall::dense_index::{DenseHit, DenseIndex};
use crate::recall::entry_meta::EntryMeta;
use crate::recall::excerpt::excerpt;
use crate::recall::fusion::{
    DEFAULT_RRF_K, Fused, FusionMethod, Population, Scored, above_chance_fusion,
    rank_fusion_of_scored, standard_score_fusion,
};
use crate::recall::named_speakers::Speakers;
use crate::recall::priors::QueryPriors;
use crate::recall::terms::{index_tokens, query_tokens};
use crate::recall::vector_text::{PlainText, VectorTextRules, text_for_vector};
use crate::store::{KeywordHit, VectorColumn};
use crate::{
    COLD_MAX_ACCESS, COLD_MAX_IDLE_MS, ColdMove, ContextEvent, ContextWindow, DenseVector,
    EventRecord, SparseEmbedder, SparseVector, Store, StoreReader, StoredEvent, estimate_tokens,
};

/// Texts per embedding run: large enough to amortise a graph run, small enough that one
/// archive's buffers stay small (the model's own limit is 64).
pub const EMBED_BATCH: usize = 64;
/// First line of an injected memory block ("related memory").
pub const INJECT_HEADER: &str = "【相关记忆】";
/// Replies are cut to this many characters in an injected block (a query-focused excerpt).
const INJECT_RESPONSE_CHARS: usize = 160;
/// Inputs longer than this many characters are shown by a query-focused excerpt of this size:
/// a pasted document or a long message recalled whole would cost more prompt than the rest of
/// the memory block.
const INJECT_INPUT_CHARS: usize = 480;

/// How recall ranks and how much it injects.
///
/// The ranking defaults are measured on dev sets where a date cannot tell whose history an entry
/// is (ARCHITECTURE §7): above-chance fusion (a dense list counts by how far its matches stand
/// out of the whole store's cosines, so two dense models that tie a whole topic cannot outvote
/// the keyword list's rare word) with even weights, the speaker weighing and the named-speaker
/// weighing, a named span's boost, and recency only for queries that name a time. Candidates
/// beyond the top 50 of each list are needed (`depth` 200). Passage averaging, best-passage
/// scoring, sentence-level max-similarity, dense pseudo-relevance feedback, word-bigram BM25,
/// session-level score propagation and session documents measured flat or lower, hence off or
/// absent.
#[derive(Clone, Debug, PartialEq)]
pub struct RecallConfig {
    /// How the keyword and dense lists are fused.
    pub fusion: FusionMethod,
    /// Under [`FusionMethod::AboveChance`], the share of what chance gives the best of the
    /// store's cosines (`expected_best_of`) that a dense list's standard scores are lowered by.
    pub chance_margin: f64,
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
    /// Weight of the companion model's ranking in the fusion (when one is attached).
    pub companion_weight: f64,
    /// [`dense_relative_floor`](Self::dense_relative_floor) for the companion. Off by default:
    /// its cosines sit in a narrow band (about 0.7–0.9), so a fraction of the best one does not
    /// separate a match from noise.
    pub companion_relative_floor: f32,
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
    /// Leave out entries dated after the day the query is asked (for replaying a history as
    /// of a past day; a live assistant is asked after everything).
    pub exclude_future: bool,
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
    /// Factor on a person's inputs when the query names other people who speak in the
    /// history (and not them).
    pub unnamed_speaker_weight: f64,
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            fusion: FusionMethod::AboveChance,
            chance_margin: 0.25,
            rrf_k: DEFAULT_RRF_K,
            depth: 200,
            dense_weight: 1.0,
            keyword_weight: 1.0,
            dense_relative_floor: 0.5,
            companion_weight: 1.0,
            companion_relative_floor: 0.0,
            passage_chars: 0,
            inject_min_cosine: 0.35,
            inject_min_sparse: 0.2,
            inject_max_items: 3,
            utc_offset_secs: 0,
            exclude_future: false,
            recency_half_life_days: 14.0,
            recency_floor: 0.5,
            time_window_boost: 2.0,
            agent_words_weight: 0.5,
            user_words_weight: 0.7,
            unnamed_speaker_weight: 0.5,
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
    /// Fused score (by the configured fusion) weighed by the query's priors: only comparable
    /// within one recall.
    pub score: f64,
    /// Cosine to the query in the main dense space, when both have a vector (never the
    /// companion's: the injection floor is calibrated on the main model).
    pub dense_cosine: Option<f32>,
    /// BM25 score (higher is better) when the keyword index matched.
    pub keyword_score: Option<f64>,
    /// The text the entry is searched by.
    pub text: String,
}

/// What [`ColdContext::inject`] puts in front of the model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Injection {
    /// The memory block (empty when nothing cleared the floor).
    pub block: String,
    /// The ids of the events in the block, in the block's (time) order.
    pub event_ids: Vec<String>,
    /// The recall hits the block is made of, in the same order: why each was chosen (its
    /// scores) for the record of what a turn was shown.
    pub recalled: Vec<Recalled>,
}

/// What a prune did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PruneOutcome {
    /// Window events left.
    pub kept: usize,
    /// Cold ids of the archived events, in time order.
    pub archived: Vec<i64>,
}

/// Adds the hits found inside a named span that the whole-history search did not, and orders
/// them all by score again; `key` gives a hit's id and score.
fn merge_span_hits<H>(hits: &mut Vec<H>, inside: Vec<H>, key: impl Fn(&H) -> (i64, f64)) {
    let seen: HashSet<i64> = hits.iter().map(|h| key(h).0).collect();
    hits.extend(inside.into_iter().filter(|h| !seen.contains(&key(h).0)));
    hits.sort_by(|a, b| key(b).1.total_cmp(&key(a).1));
}

/// Keyword matches as (cold id, BM25 score, meta), best first.
type KeywordList = Vec<(i64, f64, EntryMeta)>;

/// The keyword search inside a named span reads at most this many times `depth` matches.
const SPAN_SCAN_DEPTHS: usize = 64;

/// Keeps the hits at or above `relative_floor` × the best one's cosine. Ranks alone cannot
/// tell a close second from a distant one; without this floor a weak match a day newer would
/// overtake the clear answer once recency weighs in.
fn above_relative_floor(hits: &mut Vec<DenseHit>, relative_floor: f32) {
    if let Some(best) = hits.first().map(|d| d.1) {
        let floor = best * relative_floor;
        hits.retain(|d| d.1 >= floor);
    }
}

/// A dense model's candidates for one query, and the cosines of the whole store they stand out
/// of.
#[derive(Debug, Default)]
struct DenseList {
    hits: Vec<DenseHit>,
    population: Option<Population>,
}

/// A dense model and the in-memory index of its vectors in cold context (loaded on the first
/// recall that needs it).
struct DenseSpace {
    embedder: Arc<dyn Embedder>,
    fingerprint: String,
    column: VectorColumn,
    index: Option<DenseIndex>,
}

impl DenseSpace {
    fn new(embedder: Arc<dyn Embedder>, column: VectorColumn) -> Self {
        Self {
            fingerprint: embedder.fingerprint().to_string(),
            embedder,
            column,
            index: None,
        }
    }

    /// Loads the index from the store when it is not loaded.
    fn ensure_index(&mut self, store: &StoreReader) -> Result<(), RecallError> {
        if self
            .index
            .as_ref()
            .is_some_and(|i| i.fingerprint() == self.fingerprint)
        {
            return Ok(());
        }
        let (index, skipped) =
            DenseIndex::load(store, self.column, &self.fingerprint, self.embedder.dim())?;
        if skipped > 0 {
            tracing::warn!(
                skipped,
                fingerprint = %self.fingerprint,
                "cold vectors of the wrong width were not indexed"
            );
        }
        self.index = Some(index);
        Ok(())
    }

    /// The query's vector, or why there is none.
    fn embed_query(&self, query: &str) -> Result<Vec<f32>, String> {
        match self.embedder.embed_query(query) {
            Ok(v) if v.len() == self.embedder.dim() => Ok(v),
            Ok(v) => Err(format!("query vector has {} dimensions", v.len())),
            Err(err) => Err(err.to_string()),
        }
    }

    /// Vectors of `texts` (`None` for an empty text), or why the model gave none. Texts longer
    /// than `passage_chars` (when not 0) are embedded as passages and averaged.
    fn embed_texts(
        &self,
        texts: &[String],
        passage_chars: usize,
    ) -> Result<Vec<Option<Vec<f32>>>, String> {
        let embedder = &self.embedder;
        // (text index, passage) for every non-empty text.
        let mut pieces: Vec<(usize, &str)> = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            if text.is_empty() {
                continue;
            }
            if passage_chars > 0 {
                for p in split_passages(text, passage_chars) {
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
                Ok(_) => return Err("the model returned vectors of the wrong shape".to_owned()),
                Err(err) => return Err(err.to_string()),
            };
            for (&(i, _), v) in chunk.iter().zip(vectors) {
                match &mut sums[i] {
                    Some(acc) => acc.iter_mut().zip(&v).for_each(|(a, x)| *a += x),
                    slot @ None => *slot = Some(v),
                }
            }
        }
        Ok(sums
            .into_iter()
            .map(|sum| {
                sum.map(|mut v| {
                    crate::l2_normalize(&mut v);
                    v
                })
            })
            .collect())
    }

    /// The `depth` entries nearest to `query` among those the priors admit, best first, less
    /// those under `relative_floor` × the best cosine, and the distribution of every entry's
    /// cosine. When the query names a time span, the nearest entries inside it join them (see
    /// [`QueryPriors::names_span`]). Empty while the index is.
    fn search(
        &self,
        query: &[f32],
        depth: usize,
        priors: &QueryPriors,
        relative_floor: f32,
    ) -> Result<DenseList, RecallError> {
        let Some(index) = self.index.as_ref().filter(|i| !i.is_empty()) else {
            return Ok(DenseList::default());
        };
        let admits = |m: &EntryMeta| priors.admits(m.timestamp_ms);
        let (hits, moments) = if priors.names_span() {
            let (mut hits, mut inside, moments) =
                index.search_within(query, depth, admits, |m| priors.in_span(m.timestamp_ms))?;
            above_relative_floor(&mut hits, relative_floor);
            above_relative_floor(&mut inside, relative_floor);
            merge_span_hits(&mut hits, inside, |d| (d.0, f64::from(d.1)));
            (hits, moments)
        } else {
            let (mut hits, moments) = index.search(query, depth, admits)?;
            above_relative_floor(&mut hits, relative_floor);
            (hits, moments)
        };
        let population = match (moments.mean(), moments.std_dev()) {
            (Some(mean), Some(std_dev)) => Some(Population {
                mean,
                std_dev,
                count: moments.count,
            }),
            _ => None,
        };
        Ok(DenseList { hits, population })
    }

    /// Adds freshly stored vectors to the index, when it is loaded (otherwise its load reads
    /// them from the store).
    fn index_new(&mut self, vectors: &[(i64, Vec<f32>, EntryMeta)]) {
        let Some(index) = self.index.as_mut() else {
            return;
        };
        for (id, v, meta) in vectors {
            if let Err(err) = index.insert(*id, v, *meta) {
                tracing::warn!(%err, id, fingerprint = %self.fingerprint, "cold vector not indexed");
            }
        }
    }
}

/// Cold context over the durable store. Owns the store so that its in-memory vector indexes can
/// never drift from the tables they mirror: writes made through [`ColdContext::store_mut`] mark
/// the indexes for a reload on the next recall.
pub struct ColdContext {
    store: Store,
    /// The main model: window vectors, prune, cold recall, the injection floor.
    dense: Option<DenseSpace>,
    /// A second model that only ranks cold recall.
    companion: Option<DenseSpace>,
    rules: Box<dyn VectorTextRules + Send + Sync>,
    config: RecallConfig,
    fallback_announced: bool,
    companion_failure_announced: bool,
    /// Archive leaves companion vectors to [`ColdContext::backfill_companion`].
    companion_deferred: bool,
    /// Every entry up to this id has been through the back-fill: the next step starts after it.
    /// New entries only ever get higher ids.
    companion_backfilled_to: i64,
    /// The people who speak in cold context, read from the store on the first recall and kept
    /// current by archive (`None`: not read yet, or the store was written behind our back).
    speakers: Option<Speakers>,
}

impl std::fmt::Debug for ColdContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let indexed = |s: &Option<DenseSpace>| s.as_ref()?.index.as_ref().map(DenseIndex::len);
        f.debug_struct("ColdContext")
            .field("store", &self.store.path())
            .field("fingerprint", &self.fingerprint())
            .field("companion", &self.companion_fingerprint())
            .field("config", &self.config)
            .field("indexed", &indexed(&self.dense))
            .field("companion_indexed", &indexed(&self.companion))
            .finish_non_exhaustive()
    }
}

impl ColdContext {
    /// Cold context over `store`, with the dense model `embedder` (`None`: keyword recall only,
    /// announced once in the log).
    pub fn new(store: Store, embedder: Option<Arc<dyn Embedder>>) -> Self {
        Self {
            store,
            dense: embedder.map(|e| DenseSpace::new(e, VectorColumn::Main)),
            companion: None,
            rules: Box::new(PlainText),
            config: RecallConfig::default(),
            fallback_announced: false,
            companion_failure_announced: false,
            companion_deferred: false,
            companion_backfilled_to: i64::MIN,
            speakers: None,
        }
    }

    /// Adds a companion model: archived entries get a vector of its space too (in the store's
    /// side table), and recall fuses its ranking as a third list
    /// ([`companion_weight`](RecallConfig::companion_weight)). Entries archived before it was
    /// attached are caught up by [`backfill_companion`](Self::backfill_companion).
    pub fn with_companion(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.companion = Some(DenseSpace::new(embedder, VectorColumn::Side));
        self
    }

    /// Archiving stops embedding for the companion: the entries wait for
    /// [`backfill_companion`](Self::backfill_companion). The daemon's turn path prunes on every
    /// input, and the companion costs ~100 ms per long turn on one core, so it fills in idle time
    /// instead; until then a new entry is found by the main model and the keywords alone.
    pub fn defer_companion(mut self) -> Self {
        self.companion_deferred = true;
        self
    }

    /// Ranks recall by `config` instead of [`RecallConfig::default`].
    pub fn with_config(mut self, config: RecallConfig) -> Self {
        self.config = config;
        self
    }

    /// The channel and tool cleaners / NoMemory flags `text_for_vector` applies.
    pub fn with_rules(mut self, rules: impl VectorTextRules + Send + Sync + 'static) -> Self {
        self.rules = Box::new(rules);
        self
    }

    /// How recall ranks now.
    pub fn config(&self) -> &RecallConfig {
        &self.config
    }

    /// Changes how recall ranks; takes effect on the next recall.
    pub fn set_config(&mut self, config: RecallConfig) {
        self.config = config;
    }

    /// The owned store, for reads.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store for writes outside cold context's own (journal, frames, the window). Assumes
    /// cold entries may change too: the vector indexes are reloaded before the next recall.
    pub fn store_mut(&mut self) -> &mut Store {
        for space in [&mut self.dense, &mut self.companion].into_iter().flatten() {
            space.index = None;
        }
        self.companion_backfilled_to = i64::MIN;
        self.speakers = None;
        &mut self.store
    }

    /// The store for writes to tables cold context does not index (the journal, frames, plain
    /// window events without vectors): the vector indexes are kept.
    pub fn journal_store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Gives the store back, dropping the in-memory vector indexes.
    pub fn into_store(self) -> Store {
        self.store
    }

    /// The current (main) dense space, if a model is loaded.
    pub fn fingerprint(&self) -> Option<&str> {
        self.dense.as_ref().map(|d| d.fingerprint.as_str())
    }

    /// The companion's dense space, if one is attached.
    pub fn companion_fingerprint(&self) -> Option<&str> {
        self.companion.as_ref().map(|d| d.fingerprint.as_str())
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
        let fingerprint = self.fingerprint();
        events
            .into_iter()
            .zip(texts)
            .zip(dense)
            .map(|((event, text), dense)| {
                let record = EventRecord::new(event);
                match (dense, fingerprint) {
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
    /// With a companion, every entry with text gets a vector of its space too (a third
    /// transaction, same rule: on failure `cold_side_missing` lists them for
    /// [`backfill_companion`](Self::backfill_companion)). Returns the cold ids in the order of
    /// `events`.
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
        let metas: Vec<EntryMeta> = events
            .iter()
            .map(|e| EntryMeta::new(e.record.event.timestamp_ms, &e.record.event.source))
            .collect();
        if let Some(speakers) = self.speakers.as_mut() {
            for e in events {
                speakers.add_source(&e.record.event.source);
            }
        }

        let fingerprint = self.fingerprint().map(str::to_owned);
        let current = |e: &StoredEvent| -> Option<Vec<f32>> {
            let dense = e.record.dense.as_ref()?;
            (Some(&dense.fingerprint) == fingerprint.as_ref()).then(|| dense.values.clone())
        };
        let mut vectors: Vec<Option<Vec<f32>>> = events.iter().map(current).collect();
        let missing: Vec<usize> = (0..events.len())
            .filter(|&i| vectors[i].is_none() && !texts[i].is_empty())
            .collect();
        if let Some(fp) = &fingerprint
            && !missing.is_empty()
        {
            let missing_texts: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let embedded = self.embed_texts(&missing_texts);
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
        if let Some(space) = self.dense.as_mut() {
            let stored: Vec<(i64, Vec<f32>, EntryMeta)> = ids
                .iter()
                .zip(vectors)
                .zip(&metas)
                .filter_map(|((&id, v), &meta)| Some((id, v?, meta)))
                .collect();
            space.index_new(&stored);
        }

        if self.companion.is_some() && !self.companion_deferred {
            let entries: Vec<(i64, String, EntryMeta)> = ids
                .iter()
                .zip(texts)
                .zip(metas)
                .filter(|((_, text), _)| !text.is_empty())
                .map(|((&id, text), meta)| (id, text, meta))
                .collect();
            if let Err(err) = self.write_companion(entries) {
                tracing::warn!(
                    %err,
                    entries = events.len(),
                    "archived without companion vectors, left for a back-fill"
                );
            }
        }
        Ok(ids)
    }

    /// Gives up to `limit` cold entries without a companion vector one (oldest first): for a
    /// store that predates the companion, or an archive whose companion step failed. Meant for
    /// idle time. Returns how many entries got a vector; 0 when none is missing, there is no
    /// companion, or it failed (logged once).
    pub fn backfill_companion(&mut self, limit: usize) -> Result<usize, RecallError> {
        let Some(fp) = self.companion_fingerprint().map(str::to_owned) else {
            return Ok(0);
        };
        if limit == 0 {
            return Ok(0);
        }
        let missing =
            self.store
                .cold_side_missing_after(&fp, self.companion_backfilled_to, limit)?;
        let mut entries = Vec::new();
        for &id in &missing {
            // Removed since the list was read: nothing to fill.
            let Some(entry) = self.store.cold_get(id)? else {
                continue;
            };
            let meta = EntryMeta::new(entry.event.timestamp_ms, &entry.event.source);
            entries.push((id, entry.text, meta));
        }
        let wanted = entries.len();
        let done = self.write_companion(entries)?;
        // A model failure stores nothing: those entries stay ahead of the cursor.
        if done == wanted
            && let Some(&last) = missing.last()
        {
            self.companion_backfilled_to = last;
        }
        Ok(done)
    }

    /// Embeds `entries` (cold id, non-empty text, meta) with the companion, stores the vectors
    /// in one transaction and adds them to its index when it is loaded. Returns how many were
    /// stored: 0 when the model failed (announced once; the entries stay listed as missing).
    fn write_companion(
        &mut self,
        entries: Vec<(i64, String, EntryMeta)>,
    ) -> Result<usize, RecallError> {
        let Some(space) = self.companion.as_ref() else {
            return Ok(0);
        };
        if entries.is_empty() {
            return Ok(0);
        }
        let texts: Vec<String> = entries.iter().map(|e| e.1.clone()).collect();
        let embedded = match space.embed_texts(&texts, self.config.passage_chars) {
            Ok(v) => v,
            Err(reason) => {
                self.announce_companion_failure(&reason);
                return Ok(0);
            }
        };
        let fp = &space.fingerprint;
        let stored: Vec<(i64, Vec<f32>, EntryMeta)> = entries
            .into_iter()
            .zip(embedded)
            .filter_map(|((id, _, meta), v)| Some((id, v?, meta)))
            .collect();
        let updates: Vec<(i64, DenseVector)> = stored
            .iter()
            .map(|(id, v, _)| (*id, DenseVector::new(fp.clone(), v.clone())))
            .collect();
        self.store.cold_set_side_dense(&updates)?;
        if let Some(space) = self.companion.as_mut() {
            space.index_new(&stored);
        }
        Ok(stored.len())
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
        let (window, plan) = self.plan_window_prune(query, top_k, protected)?;
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

    /// The window events a [`prune`](Self::prune) for `query` would keep, in window order,
    /// without changing anything.
    pub fn prune_keeps(
        &mut self,
        query: &str,
        top_k: usize,
        protected: usize,
    ) -> Result<Vec<ContextEvent>, RecallError> {
        let (window, plan) = self.plan_window_prune(query, top_k, protected)?;
        if plan.is_noop() {
            return Ok(window.into_iter().map(|e| e.record.event).collect());
        }
        let mut keep = plan.keep;
        keep.sort_unstable();
        Ok(keep
            .into_iter()
            .map(|i| window[i].record.event.clone())
            .collect())
    }

    /// The window and the prune plan over it for `query`.
    fn plan_window_prune(
        &mut self,
        query: &str,
        top_k: usize,
        protected: usize,
    ) -> Result<(Vec<StoredEvent>, crate::PrunePlan), RecallError> {
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
                    Some(d.fingerprint.as_str()) == self.fingerprint()
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
        let fp = self.fingerprint().unwrap_or_default().to_owned();
        let prune_query = PruneQuery {
            dense: query_dense.as_deref().map(|values| DenseRef {
                fingerprint: &fp,
                values,
            }),
            sparse: Some(&query_sparse),
        };
        let plan = plan_prune(&events, &prune_query, top_k, protected);
        drop(events);
        Ok((window, plan))
    }

    /// The `k` cold entries most relevant to `query` asked at `now_ms`, best first, without
    /// counting an access. Candidates come from every index — keywords, the main model and the
    /// companion when attached — (entries dated after the query's day left out, when asked to;
    /// the best inside a time span the query names added), are fused by the configured method,
    /// and the fused scores are weighed by the query's priors (recency, named time spans, whose
    /// words: see `QueryPriors`).
    pub fn peek(
        &mut self,
        query: &str,
        k: usize,
        now_ms: i64,
    ) -> Result<Vec<Recalled>, RecallError> {
        if k == 0 || query.trim().is_empty() {
            return Ok(Vec::new());
        }
        self.ensure_indexes()?;
        let speakers = self.speakers.as_ref().expect("loaded by ensure_indexes");
        let priors = QueryPriors::new(query, now_ms, &self.config).with_speakers(query, speakers);
        let depth = self.config.depth.max(k);
        let keyword = self.keyword_hits(query, depth, &priors)?;
        let query_vec = self.embed_query(query);
        let dense = match (&query_vec, &self.dense) {
            (Some(q), Some(space)) => {
                space.search(q, depth, &priors, self.config.dense_relative_floor)?
            }
            _ => DenseList::default(),
        };
        let companion = self.companion_hits(query, depth, &priors)?;
        let meta: HashMap<i64, EntryMeta> = dense
            .hits
            .iter()
            .chain(&companion.hits)
            .map(|d| (d.0, d.2))
            .chain(keyword.iter().map(|k| (k.0, k.2)))
            .collect();
        let fused = self.fuse(&dense, &keyword, &companion);
        let mut fused: Vec<(i64, f64)> = fused
            .into_iter()
            .filter_map(|f| {
                let m = meta.get(&f.id)?;
                Some((f.id, f.score * priors.entry_factor(m)))
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
                // Removed behind our back: forget its vectors too.
                for space in [&mut self.dense, &mut self.companion].into_iter().flatten() {
                    if let Some(index) = space.index.as_mut() {
                        index.remove(id);
                    }
                }
                continue;
            };
            let dense_cosine = dense
                .hits
                .iter()
                .find(|d| d.0 == id)
                .map(|d| d.1)
                .or_else(|| {
                    let index = self.dense.as_ref()?.index.as_ref()?;
                    let q = query_vec.as_ref()?;
                    index.score(id, q)
                });
            out.push(Recalled {
                id,
                event: entry.event,
                score,
                dense_cosine,
                keyword_score: keyword.iter().find(|k| k.0 == id).map(|k| k.1),
                text: entry.text,
            });
        }
        Ok(out)
    }

    /// The three candidate lists fused by the configured method: the main model's, the
    /// keywords' and the companion's (empty without one: it adds nothing then).
    fn fuse(
        &self,
        dense: &DenseList,
        keyword: &[(i64, f64, EntryMeta)],
        companion: &DenseList,
    ) -> Vec<Fused> {
        let c = &self.config;
        let scores = |hits: &[DenseHit]| -> Vec<(i64, f64)> {
            hits.iter().map(|d| (d.0, f64::from(d.1))).collect()
        };
        let (dense_scores, companion_scores) = (scores(&dense.hits), scores(&companion.hits));
        let keyword_scores: Vec<(i64, f64)> = keyword.iter().map(|k| (k.0, k.1)).collect();
        let lists = [
            Scored {
                ids: &dense_scores,
                weight: c.dense_weight,
                population: dense.population,
            },
            Scored {
                ids: &keyword_scores,
                weight: c.keyword_weight,
                population: None,
            },
            Scored {
                ids: &companion_scores,
                weight: c.companion_weight,
                population: companion.population,
            },
        ];
        match c.fusion {
            FusionMethod::Rank => rank_fusion_of_scored(&lists, c.rrf_k),
            FusionMethod::StandardScore => {
                // Each list against its own candidates: the populations are left out.
                let own: Vec<Scored<'_>> = lists
                    .iter()
                    .map(|l| Scored {
                        population: None,
                        ..*l
                    })
                    .collect();
                standard_score_fusion(&own, 0.0)
            }
            FusionMethod::AboveChance => above_chance_fusion(&lists, c.chance_margin, c.rrf_k),
        }
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
        Ok(self.inject(query, memory_tokens, now_ms)?.block)
    }

    /// [`auto_inject`](Self::auto_inject) with the events the block holds: what the model is
    /// shown for `query`, and which archived events it is made of.
    pub fn inject(
        &mut self,
        query: &str,
        memory_tokens: usize,
        now_ms: i64,
    ) -> Result<Injection, RecallError> {
        let max_items = self.config.inject_max_items;
        if memory_tokens == 0 || max_items == 0 {
            return Ok(Injection::default());
        }
        let hits = self.peek(query, max_items * 3, now_ms)?;
        let query_sparse = SparseEmbedder.vectorize(query);
        // Without a main vector for the entry (no model, or not embedded yet) it is judged by
        // words, as the keyword fallback would.
        let relevant = |hit: &Recalled| match hit.dense_cosine {
            Some(c) => c >= self.config.inject_min_cosine,
            None => {
                query_sparse.cosine(&SparseEmbedder.vectorize(&hit.text))
                    >= self.config.inject_min_sparse
            }
        };
        let mut left = memory_tokens.saturating_sub(estimate_tokens(INJECT_HEADER));
        let mut chosen: Vec<(&Recalled, String)> = Vec::new();
        let query_terms: HashSet<String> = query_tokens(query)
            .split(' ')
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .collect();
        for hit in hits.iter().filter(|h| relevant(h)) {
            if chosen.len() == max_items {
                break;
            }
            let line = self.inject_line(&hit.event, &query_terms);
            // The line and the line break before it (one rune).
            let cost = estimate_tokens(&line) + 2;
            if cost > left {
                continue;
            }
            left -= cost;
            chosen.push((hit, line));
        }
        if chosen.is_empty() {
            return Ok(Injection::default());
        }
        chosen.sort_by(|a, b| {
            (a.0.event.timestamp_ms, a.0.id).cmp(&(b.0.event.timestamp_ms, b.0.id))
        });
        let ids: Vec<i64> = chosen.iter().map(|c| c.0.id).collect();
        self.store.cold_touch(&ids, now_ms)?;
        let mut block = String::from(INJECT_HEADER);
        for (_, line) in &chosen {
            block.push('\n');
            block.push_str(line);
        }
        Ok(Injection {
            block,
            event_ids: chosen.iter().map(|c| c.0.event.id.clone()).collect(),
            recalled: chosen.iter().map(|c| c.0.clone()).collect(),
        })
    }

    fn inject_line(&self, event: &ContextEvent, query_terms: &HashSet<String>) -> String {
        let mut line = format!(
            "[{}] {}: {}",
            format_minute(event.timestamp_ms, self.config.utc_offset_secs),
            event.source,
            excerpt(&event.input, query_terms, INJECT_INPUT_CHARS)
        );
        if !event.response.is_empty() {
            if !event.input.is_empty() {
                line.push_str(" → ");
            }
            line.push_str(&excerpt(
                &event.response,
                query_terms,
                INJECT_RESPONSE_CHARS,
            ));
        }
        line
    }

    /// Loads the vector indexes and the speakers that are not loaded.
    fn ensure_indexes(&mut self) -> Result<(), RecallError> {
        for space in [&mut self.dense, &mut self.companion].into_iter().flatten() {
            space.ensure_index(&self.store)?;
        }
        if self.speakers.is_none() {
            let mut speakers = Speakers::default();
            for source in self.store.cold_sources()? {
                speakers.add_source(&source);
            }
            self.speakers = Some(speakers);
        }
        Ok(())
    }

    /// The `depth` best keyword matches of `query` the priors admit, as (id, BM25 score, meta),
    /// best first; when the query names a time span, the best matches inside it join them.
    fn keyword_hits(
        &self,
        query: &str,
        depth: usize,
        priors: &QueryPriors,
    ) -> Result<KeywordList, RecallError> {
        let tokens = query_tokens(query);
        let (mut hits, inside) = self.keyword_lists(&tokens, depth, priors)?;
        if priors.names_span() {
            merge_span_hits(&mut hits, inside, |k| (k.0, k.1));
        }
        Ok(hits)
    }

    /// The `depth` best keyword matches of `tokens` the priors admit, and (when the query names
    /// a time span) the `depth` best of them inside it, from one widening full-text search: it
    /// fetches four times more until both lists are full, the matches run out, or (for the span
    /// alone) [`SPAN_SCAN_DEPTHS`] × `depth` matches were read — a span holding few matches of
    /// common words would otherwise read every match.
    ///
    /// Reading each match's date from its `cold` row costs more than the full-text search
    /// itself (a few thousand rows per query on a large store); the main vector index already
    /// holds every entry's date, so the index alone is asked, for more than `depth` to leave
    /// room for the entries the priors drop. Only entries without a main vector (no model, or
    /// one that failed) need the rows read.
    fn keyword_lists(
        &self,
        tokens: &str,
        depth: usize,
        priors: &QueryPriors,
    ) -> Result<(KeywordList, KeywordList), RecallError> {
        let span = priors.names_span();
        let span_scan = depth.saturating_mul(SPAN_SCAN_DEPTHS);
        // Whether both lists are as full as this fetch of `limit` can make them.
        let done = |all: usize, inside: usize, fetched: usize, limit: usize| {
            let exhausted = fetched < limit;
            let inside_done = !span || inside == depth || limit >= span_scan;
            exhausted || (all == depth && inside_done)
        };
        if let Some(index) = self.dense.as_ref().and_then(|d| d.index.as_ref()) {
            let mut limit = depth.saturating_mul(4).max(depth);
            'widen: loop {
                let hits = self.store.cold_fts(tokens, limit)?;
                let (mut all, mut inside) = (Vec::with_capacity(depth), Vec::new());
                for &(id, score) in &hits {
                    let Some(meta) = index.meta(id) else {
                        break 'widen;
                    };
                    if !priors.admits(meta.timestamp_ms) {
                        continue;
                    }
                    if all.len() < depth {
                        all.push((id, score, meta));
                    }
                    if span && inside.len() < depth && priors.in_span(meta.timestamp_ms) {
                        inside.push((id, score, meta));
                    }
                    if all.len() == depth && (!span || inside.len() == depth) {
                        return Ok((all, inside));
                    }
                }
                if done(all.len(), inside.len(), hits.len(), limit) {
                    return Ok((all, inside));
                }
                limit = limit.saturating_mul(4);
            }
        }
        let mut limit = depth;
        loop {
            let hits = self
                .store
                .cold_fts_before(tokens, limit, priors.before_ms())?;
            let fetched = hits.len();
            let entry = |hit: &KeywordHit| {
                let meta = EntryMeta::new(hit.timestamp_ms, &hit.source);
                (hit.id, hit.score, meta)
            };
            let all: Vec<_> = hits.iter().take(depth).map(entry).collect();
            let inside: Vec<_> = if span {
                hits.iter()
                    .filter(|hit| priors.in_span(hit.timestamp_ms))
                    .take(depth)
                    .map(entry)
                    .collect()
            } else {
                Vec::new()
            };
            if done(all.len(), inside.len(), fetched, limit) {
                return Ok((all, inside));
            }
            limit = limit.saturating_mul(4);
        }
    }

    /// The companion's candidates for `query`: empty without a companion, or when it failed
    /// (announced once; the other lists still rank).
    fn companion_hits(
        &mut self,
        query: &str,
        depth: usize,
        priors: &QueryPriors,
    ) -> Result<DenseList, RecallError> {
        // Weight 0 switches the companion's ranking off: no query to embed then.
        let Some(space) = self
            .companion
            .as_ref()
            .filter(|_| self.config.companion_weight > 0.0)
        else {
            return Ok(DenseList::default());
        };
        match space.embed_query(query) {
            Ok(q) => space.search(&q, depth, priors, self.config.companion_relative_floor),
            Err(reason) => {
                self.announce_companion_failure(&reason);
                Ok(DenseList::default())
            }
        }
    }

    /// The query's dense vector, or `None` without a model (or when the model failed: keyword
    /// recall still works, and the failure is logged once).
    fn embed_query(&mut self, query: &str) -> Option<Vec<f32>> {
        match self.dense.as_ref()?.embed_query(query) {
            Ok(v) => Some(v),
            Err(reason) => {
                self.announce_fallback(&reason);
                None
            }
        }
    }

    /// Dense vectors of `texts` (`None` for an empty text, or for all when there is no model or
    /// it failed). Long texts are embedded as passages and averaged when `passage_chars` is set.
    fn embed_texts(&mut self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        let result = match &self.dense {
            Some(space) => space.embed_texts(texts, self.config.passage_chars),
            None if texts.iter().any(|t| !t.is_empty()) => {
                Err("no dense embedding model loaded".to_owned())
            }
            None => Ok(vec![None; texts.len()]),
        };
        result.unwrap_or_else(|reason| {
            self.announce_fallback(&reason);
            vec![None; texts.len()]
        })
    }

    /// Logs once per cold context that the companion gave no vectors, and why. Recall goes on
    /// with the other lists; the entries it missed are listed for a back-fill.
    fn announce_companion_failure(&mut self, reason: &dyn std::fmt::Display) {
        if !self.companion_failure_announced {
            self.companion_failure_announced = true;
            tracing::warn!(
                %reason,
                fingerprint = self.companion_fingerprint().unwrap_or_default(),
                "companion model failed: cold recall ranks without it"
            );
        }
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
