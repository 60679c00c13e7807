//! Keyword terms too common to weigh anything, dropped before the full-text query runs.
//!
//! FTS5's `bm25()` gives a term held by half of the entries or more an idf of
//! `log((N - n + 0.5) / (n + 0.5)) ≤ 0` (exactly 0 at `n = N / 2`), which it clamps to 10⁻⁶:
//! such a term adds nothing to any score, yet the query still reads its posting of every entry
//! holding it and ranks all of them. A history where each turn shares a word ("the", "turn", a
//! user's name) made every recall read the whole store, so a turn's cost grew with everything
//! ever said. Dropping those terms changes no score.
//!
//! A term held by just under half of the entries is as costly and nearly as weightless (at
//! 49.7 % its idf is 0.01 where a word said once in 3,000 entries has 7.7). A term whose idf is
//! under [`WEAK_TERM_SHARE`] of the query's strongest term's is dropped too: bm25's per-term
//! factor is below `k1 + 1 = 2.2`, so it moved a score by less than 2.2 % of the strongest
//! term's idf — it could only reorder entries the query's real words scored within that of each
//! other, and entries matched by nothing else trailed the list.

use rusqlite::OptionalExtension;

use super::StoreReader;
use super::error::{SqlContext, StoreError};

/// Below this many entries the store is cheap to scan whole, and an entry matched only by a
/// common word may be the only match there is: nothing is dropped.
pub(super) const COMMON_TERM_MIN_ENTRIES: u64 = 256;

/// A query term whose idf is below this share of the query's strongest term's is dropped.
pub(super) const WEAK_TERM_SHARE: f64 = 0.01;

impl StoreReader {
    /// `query_tokens` without the terms held by half of the cold entries or more, and without
    /// those weighing under [`WEAK_TERM_SHARE`] of the strongest, once the store has
    /// [`COMMON_TERM_MIN_ENTRIES`]. A term the index spells differently (case folding aside) is
    /// kept: unknown is never treated as common.
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
        let mut held = Vec::new();
        for term in query_tokens.split_whitespace() {
            let docs: Option<i64> = stmt
                .query_row([term.to_lowercase()], |r| r.get(0))
                .optional()
                .ctx(OP, path)?;
            held.push((term, docs.map(|n| n.max(0) as u64)));
        }
        let idf = |n: u64| bm25_idf(entries, n);
        // A word the index has never seen weighs the most a word can: it is the query's best
        // evidence even though it matches nothing yet (a live turn's own words are archived
        // after its recall), and the words every entry shares must not stand in for it.
        let strongest = held
            .iter()
            .map(|&(_, n)| idf(n.unwrap_or(0)))
            .fold(0.0, f64::max);
        let kept: Vec<&str> = held
            .into_iter()
            .filter(|&(_, n)| match n {
                None => true,
                // At exactly half the idf is log(1) = 0, clamped like any below it: a word the
                // user says in every message is held by their half of turns and replies.
                Some(n) => n * 2 < entries && idf(n) >= WEAK_TERM_SHARE * strongest,
            })
            .map(|(term, _)| term)
            .collect();
        Ok(kept.join(" "))
    }
}

/// FTS5's inverse document frequency of a term held by `held` of `entries` entries, before its
/// clamp of non-positive values to 10⁻⁶.
fn bm25_idf(entries: u64, held: u64) -> f64 {
    let (n, h) = (entries as f64, held as f64);
    ((n - h + 0.5) / (h + 0.5)).ln()
}
