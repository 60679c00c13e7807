//! Cold context (L2): where pruned events go, and how they come back.
//!
//! Archiving moves window events into the store's `cold` table with their original timestamps,
//! their search text (`textForVector`), its keyword terms (indexed by SQLite FTS5) and, when a
//! dense model is loaded, a vector of the model's fingerprint. Recall asks both indexes — BM25
//! over the terms, cosine over the vectors of the current fingerprint — and fuses the rankings
//! (above-chance fusion by default, [`RecallConfig`]); it counts an access on what it returns
//! and never deletes (DESIGN §4.2). Entries idle for 72 h with at most two accesses are the
//! distiller's candidates (`find_cold`).
//!
//! A companion model (a second, different dense model) may be attached: its vectors live in the
//! store's side table and its ranking is fused as a third list. It only ranks recall; pruning
//! and the injection floor stay with the main model, whose cosine is what [`Recalled`] reports.
//!
//! One file per job: `archive.rs` (window → cold, vectors back-filled), `prune.rs` (what the
//! window keeps), `recall.rs` (the candidate lists and their fusion), `inject.rs` (the block in
//! front of the model), `redact.rs` (forgotten words taken out of a turn), `forget.rs` (a turn removed), `window_search.rs` (the recent turns a query names), `dense_space.rs` (a
//! model's vectors and its index), `config.rs`.

mod archive;
mod backfill;
mod config;
mod dense_space;
mod forget;
mod inject;
mod passages;
mod prune;
mod recall;
mod redact;
mod window_search;

pub use config::RecallConfig;
pub use dense_space::{EMBED_BATCH, split_passages};
pub use forget::ForgottenTurn;
pub use inject::{INJECT_HEADER, Injection};
pub use prune::{PruneOutcome, PruneSettings};
pub use recall::{Explained, Recalled};
pub use redact::{FORGOTTEN_MARKER, Redacted, Redaction, RedactionScope};
pub use window_search::WindowHit;

use dense_space::DenseSpace;
use passages::PassageIndex;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::embed::Embedder;
use crate::prune::{DenseRef, PruneEvent, PruneLimits, PruneQuery, plan_prune};
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
use crate::recall::small_talk::{SmallTalk, is_small_talk_phrase, short_enough_for_small_talk};
use crate::recall::terms::{index_tokens, query_tokens};
use crate::recall::vector_text::{PlainText, VectorTextRules, text_for_vector};
use crate::store::{KeywordHit, VectorColumn};
use crate::{
    COLD_MAX_ACCESS, COLD_MAX_IDLE_MS, ColdMove, ContextEvent, ContextWindow, DenseVector,
    EventRecord, SparseEmbedder, SparseVector, Store, StoreReader, StoredEvent, estimate_tokens,
};

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
    /// The people who speak in cold context, read from the store on the first recall and kept
    /// current by archive (`None`: not read yet, or the store was written behind our back).
    speakers: Option<Speakers>,
    /// The last query and its main-model vector: the injection asks whether an input is small
    /// talk before recalling for it, and must not embed it twice.
    last_query: Option<(String, Vec<f32>)>,
    /// The passage list, when a measurement built it ([`ColdContext::index_passages`]).
    passages: Option<PassageIndex>,
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
            speakers: None,
            last_query: None,
            passages: None,
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
            space.backfilled_to = i64::MIN;
        }
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

    /// The query's dense vector, or `None` without a model (or when the model failed: keyword
    /// recall still works, and the failure is logged once).
    fn embed_query(&mut self, query: &str) -> Option<Vec<f32>> {
        if let Some((last, vector)) = &self.last_query
            && last == query
        {
            return Some(vector.clone());
        }
        match self.dense.as_ref()?.embed_query(query) {
            Ok(v) => {
                self.last_query = Some((query.to_owned(), v.clone()));
                Some(v)
            }
            Err(reason) => {
                self.announce_fallback(&reason);
                None
            }
        }
    }

    /// Whether `query` is small talk: short, and close to one of the phrases in the main
    /// model's space; without the model (or when it fails), one of the phrases itself. Such an
    /// input gets no memory block and its prune keeps the newest events.
    pub fn is_small_talk(&mut self, query: &str) -> bool {
        let floor = self.config.small_talk_cosine;
        if floor > 1.0 || !short_enough_for_small_talk(query) {
            return false;
        }
        let Some(vector) = self.embed_query(query) else {
            return is_small_talk_phrase(query);
        };
        let Some(space) = self.dense.as_mut() else {
            return is_small_talk_phrase(query);
        };
        if space.small_talk.is_none() {
            match SmallTalk::embed(space.embedder.as_ref()) {
                Ok(phrases) => space.small_talk = Some(phrases),
                Err(err) => {
                    tracing::debug!(%err, "small-talk phrases not embedded; matched as words");
                    return is_small_talk_phrase(query);
                }
            }
        }
        space
            .small_talk
            .as_ref()
            .is_some_and(|phrases| phrases.closeness(&vector) >= floor)
    }

    /// Dense vectors of `texts` (`None` for an empty text, or for all when there is no model or
    /// it failed). Long texts are embedded as passages and averaged when `passage_chars` is set.
    fn embed_texts(&mut self, texts: &[String]) -> Vec<Option<Vec<f32>>> {
        let result = match &self.dense {
            Some(space) => space.embed_texts(texts, self.config.passage_chars),
            None if texts.iter().any(|t| !t.is_empty()) => {
                self.announce_fallback(&"no dense embedding model loaded");
                return vec![None; texts.len()];
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
