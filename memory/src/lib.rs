//! Hearth's memory: what the model is shown of the past, and how much of it fits.
//!
//! This crate owns the token budget (how a provider's context window is split between the
//! conversation timeline and recalled memory), the context events of the working window (L1)
//! and the newest-first timeline that renders them into the prompt. It knows nothing of
//! threads, channels or providers: the runtime feeds it events and asks it for text.
//! The durable store ([`Store`], one SQLite file in WAL mode) keeps the window, cold context,
//! the journal of accepted inputs and replies, and suspended scheduler frames across restarts;
//! its writes are synchronous, so the runtime calls it from a service thread.
//! Text embedders ([`OnnxEmbedder`], the default dense model, and [`SparseEmbedder`], the
//! announced fallback when it is not installed) and the shared Chinese/English [`tokens`]
//! tokenizer live here too; the model files come from `make setup`, never from the network.
//!
//! ```
//! use hearth_memory::{compute_token_budget, estimate_tokens};
//! let budget = compute_token_budget(32_768, "You are Hearth.");
//! assert_eq!(budget.memory_tokens + budget.context_tokens, budget.available);
//! assert_eq!(estimate_tokens("你好"), 6);
//! ```
// Only the SIMD kernels may use `unsafe` (each block with its SAFETY line).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod budget;
mod context_event;
mod embed;
mod option_error;
mod prune;
mod recall;
mod store;
#[cfg(test)]
mod test_support;
mod timeline;
mod whole_word;
mod window;

// The benchmark's report types are not documented yet.
#[allow(missing_docs)]
pub mod recall_bench;
pub mod simd;

pub use budget::{
    DEFAULT_MAX_CONTEXT_TOKENS, MAX_TARGET_TOKENS, TokenBudget, compute_token_budget,
    estimate_tokens, truncate_by_tokens,
};
pub use context_event::{ContextEvent, ToolOutput};
pub use embed::{
    DEFAULT_MAX_TOKENS, E5_GRAPH_FILE, E5_MAX_TOKENS, E5_SMALL_MODEL_NAME, E5_WEIGHTS_FILE,
    E5Assets, E5Embedder, EmbedAssets, EmbedError, Embedder, FINGERPRINT_SHA_LEN, Fingerprint,
    FingerprintParseError, MAX_BATCH, MODEL_FILE, MemoryModels, ORT_DYLIB_ENV, OnnxEmbedder,
    Pooling, RUNTIME_LIB_FILE, SparseEmbedder, SparseVector, TOKENIZER_FILE, TextEmbedder,
    TokenBatch, USE_M3_MODEL_NAME, l2_normalize, onnx_environment, tokens,
};
pub use option_error::OptionError;
pub use prune::{
    DEFAULT_AVG_EVENT_TOKENS, DEFAULT_MAX_CONTEXT_SIZE, DEFAULT_PROTECTED_COUNT,
    DEFAULT_PRUNE_SLACK, DenseRef, PruneEvent, PruneLimits, PrunePlan, PruneQuery, PruneScore,
    average_event_tokens, context_top_k, effective_protected_count, plan_prune, plan_prune_scored,
    prune_score, single_event_fits_budget,
};
pub use recall::{
    AGENT_SOURCE, BM25_B, BM25_K1, COLD_STORAGE_SOURCE, ColdContext, DEFAULT_RRF_K, EMBED_BATCH,
    ENGLISH_WEEKDAYS, Explained, FORGOTTEN_MARKER, ForgottenTurn, Fused, FusionMethod,
    INJECT_HEADER, Injection, MIN_STANDARD_SAMPLE, OkapiBm25, PlainText, Population, PruneOutcome,
    PruneSettings, RANK_SHARE, Ranked, RecallConfig, RecallError, Recalled, Redacted, Redaction,
    RedactionScope, ResolvedDate, Scored, TimeWindow, VectorTextRules, WindowHit,
    above_chance_fusion, bm25_tokens, clean_text, expected_best_of, format_minute, index_tokens,
    parse_iso8601, query_tokens, question_windows, rank_fusion_of_scored, reciprocal_rank_fusion,
    resolve_date, search_terms, split_passages, standard_score_fusion, text_for_vector,
};
pub use simd::{Kernel, Matrix, SimdError, TopK, top_k, top_k_where};
pub use store::{
    COLD_MAX_ACCESS, COLD_MAX_IDLE_MS, ColdEntries, ColdEntry, ColdMove, ColdRecord, ColdVector,
    ColdVectors, DenseVector, EventRecord, FrameRecord, JournalEntry, KeywordHit, RECALLED_PREFIX,
    Recovery, Replied, STATEMENT_CACHE_CAPACITY, STORE_APPLICATION_ID, STORE_BUSY_TIMEOUT,
    STORE_SCHEMA_VERSION, Store, StoreError, StoreHealth, StoreReader, StoredEvent, TableSalvage,
    WindowStats, keep_statements, switch_to_wal,
};
pub use timeline::{TIMELINE_HEADER, format_timeline, line_tokens};
pub use window::ContextWindow;
