//! Keyword terms too common to weigh anything, dropped before the full-text query runs.
//!
//! FTS5's `bm25()` gives a term held by half of the entries or more an idf of
//! `log((N - n + 0.5) / (n + 0.5)) ≤ 0`, which it clamps to 10⁻⁶: such a term adds nothing to any
//! score, yet the query still reads its posting of every entry holding it and ranks all of them.
//! A history where each turn shares a word ("the", "turn", a user's name) made every recall read
//! the whole store, so a turn's cost grew with everything ever said. Dropping the terms changes
//! no score; it only stops entries matched by nothing but such words from trailing the list.

use rusqlite::OptionalExtension;

use super::StoreReader;
use super::error::{SqlContext, StoreError};

/// Below this many entries the store is cheap to scan whole, and an entry matched only by a
/// common word may be the only match there is: nothing is dropped.
pub(super) const COMMON_TERM_MIN_ENTRIES: u64 = 256;

impl StoreReader {
    /// `query_tokens` without the terms held by more than half of the cold entries, once the
    /// store has [`COMMON_TERM_MIN_ENTRIES`]. A term the index spells differently (case folding
    /// aside) is kept: unknown is never treated as common.
    pub(super) fn informative_terms(&self, query_tokens: &str) -> Result<String, StoreError> {
        const OP: &str = "cold_term_counts";
        let path = &self.path;
        let entries = self.cold_count()?;
        if entries < COMMON_TERM_MIN_ENTRIES {
            return Ok(query_tokens.to_owned());
        }
        // A temp table lives with this connection only, so a read-only reader may make one and
        // the file's schema is untouched. Made once: it reads the index live.
        if !self.vocab_ready.get() {
            self.conn
                .execute_batch(
                    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.cold_fts_vocab \
                     USING fts5vocab(main, cold_fts, row)",
                )
                .ctx(OP, path)?;
            self.vocab_ready.set(true);
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT doc FROM temp.cold_fts_vocab WHERE term = ?1")
            .ctx(OP, path)?;
        let mut kept = Vec::new();
        for term in query_tokens.split_whitespace() {
            let held: Option<i64> = stmt
                .query_row([term.to_lowercase()], |r| r.get(0))
                .optional()
                .ctx(OP, path)?;
            let common = held.is_some_and(|n| n.max(0) as u64 * 2 > entries);
            if !common {
                kept.push(term);
            }
        }
        Ok(kept.join(" "))
    }
}
