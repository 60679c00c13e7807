//! Cold context (L2) and recall: archiving pruned events, finding them again by meaning and by
//! keyword, and putting them back in front of the model.
//!
//! - [`ColdContext`] owns the store's `cold` table: `archive` (window → cold, original times
//!   kept), `recall` / `recall_into` (dense top-k over the current fingerprint's vectors fused
//!   with FTS5 BM25 — and with a companion model's top-k when one is attached — by above-chance
//!   fusion, then weighed by what the query says of time and speakers; counts an access, never
//!   deletes), `auto_inject` (a stable block of related entries within the memory budget),
//!   `find_cold`, `backfill` (vectors a model has not given yet, in idle time).
//! - [`resolve_date`] reads a statement's time words literally; [`question_windows`] reads a
//!   query's widened, leaving out words that mark the present or a habit (one grammar,
//!   `time_expr/`).
//! - [`text_for_vector`] is the one place that decides what text of an event is searched.
//! - [`OkapiBm25`] is the plain baseline the recall benchmark compares against.

mod bm25;
mod clock;
mod cold_context;
mod dense_index;
mod entry_meta;
mod error;
mod excerpt;
mod fusion;
mod named_speakers;
mod priors;
mod small_talk;
mod speaker_focus;
mod terms;
mod time_expr;
mod vector_text;

#[cfg(test)]
mod access_count_tests;
#[cfg(test)]
mod archive_tests;
#[cfg(test)]
mod backfill_tests;
#[cfg(test)]
mod companion_tests;
#[cfg(test)]
mod forget_window_tests;
#[cfg(test)]
mod inject_tests;
#[cfg(test)]
mod passages_tests;
#[cfg(test)]
mod query_priors_tests;
#[cfg(test)]
mod ranking_tests;
#[cfg(test)]
mod real_model_tests;
#[cfg(test)]
mod redact_tests;
#[cfg(test)]
mod search_terms_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod vector_text_tests;

pub use bm25::{BM25_B, BM25_K1, OkapiBm25, bm25_tokens};
pub use clock::{format_minute, parse_iso8601};
pub use cold_context::{
    ColdContext, EMBED_BATCH, Explained, FORGOTTEN_MARKER, ForgottenTurn, INJECT_HEADER, Injection,
    PruneOutcome, PruneSettings, RecallConfig, Recalled, Redacted, Redaction, RedactionScope,
    WindowHit, split_passages,
};
pub use error::RecallError;
pub use fusion::{
    DEFAULT_RRF_K, Fused, FusionMethod, MIN_STANDARD_SAMPLE, Population, RANK_SHARE, Ranked,
    Scored, above_chance_fusion, expected_best_of, rank_fusion_of_scored, reciprocal_rank_fusion,
    standard_score_fusion,
};
pub use terms::{index_tokens, query_tokens, search_terms};
pub use time_expr::{ENGLISH_WEEKDAYS, ResolvedDate, TimeWindow, question_windows, resolve_date};
pub use vector_text::{
    AGENT_SOURCE, COLD_STORAGE_SOURCE, PlainText, VectorTextRules, clean_text, text_for_vector,
};
