//! Search: keywords (FTS5 over the shared Chinese/English tokens) and meaning (passage vectors)
//! ranked separately, then fused by reciprocal rank.
//!
//! A document ranks by its best passage in each list. Ranks, not scores, are fused because BM25
//! and cosine live on unrelated scales; a document found by both lists therefore beats one found
//! by either alone. Dense scoring is a scan of every passage vector with the SIMD dot kernel
//! (vectors are unit length, so the dot is the cosine): exact, and for a home knowledge base of
//! thousands of passages well under a millisecond, so no approximate index is kept.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use hearth_memory::simd::{Kernel, Matrix};
use hearth_memory::{DEFAULT_RRF_K, Ranked, query_tokens, reciprocal_rank_fusion};

use crate::name::category_of;
use crate::snippet::snippet;
use crate::{KnowledgeBase, KnowledgeError};

/// Most passages the keyword list reads: enough that the best passages of the top documents are
/// among them even when one long document matches in many passages.
const KEYWORD_PASSAGES: usize = 500;

/// One search result.
#[derive(Clone, Debug, PartialEq)]
pub struct KnowledgeHit {
    /// The document's name (e.g. `recipes/bread`).
    pub name: String,
    /// Its category: the parent path, `""` at the top level.
    pub category: String,
    /// Its best-matching passage, at most [`SNIPPET_CHARS`] characters.
    pub snippet: String,
    /// The fused score: higher is better; only comparable within one search.
    pub score: f64,
}

/// The passage vectors of one embedder, in one matrix, with the `(doc id, passage id)` of each
/// row.
pub(crate) struct DenseCache {
    fingerprint: String,
    matrix: Matrix,
    rows: Vec<(i64, i64)>,
}

impl KnowledgeBase {
    /// The `k` documents that best match `query`, best first. Syncs first. With an embedder,
    /// keyword and dense rankings are fused; without, keywords alone.
    ///
    /// Errors: an empty query or `k == 0` is [`KnowledgeError::InvalidArguments`]; a failing
    /// embedder is [`KnowledgeError::Embed`].
    pub fn search(&mut self, query: &str, k: usize) -> Result<Vec<KnowledgeHit>, KnowledgeError> {
        if query.trim().is_empty() {
            return Err(KnowledgeError::InvalidArguments(
                "the search query is empty".to_owned(),
            ));
        }
        if k == 0 {
            return Err(KnowledgeError::InvalidArguments(
                "top_k must be at least 1".to_owned(),
            ));
        }
        self.sync()?;
        let terms: Vec<String> = query_tokens(query)
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let keyword = self.keyword_ranking(&terms)?;
        let dense = self.dense_ranking(query)?;
        let keyword_ids: Vec<i64> = keyword.iter().map(|&(doc, _)| doc).collect();
        let dense_ids: Vec<i64> = dense.iter().map(|&(doc, _)| doc).collect();
        let fused = reciprocal_rank_fusion(
            &[
                Ranked {
                    ids: &keyword_ids,
                    weight: 1.0,
                },
                Ranked {
                    ids: &dense_ids,
                    weight: 1.0,
                },
            ],
            DEFAULT_RRF_K,
        );
        // The keyword passage is preferred as the snippet: it shows the words that matched.
        let mut best_passage: HashMap<i64, i64> = dense.into_iter().collect();
        best_passage.extend(keyword);
        fused
            .into_iter()
            .take(k)
            .map(|f| {
                let name = self.index.doc_name(f.id)?;
                let text = match best_passage.get(&f.id) {
                    Some(&passage) => self.index.passage_text(passage)?,
                    None => String::new(),
                };
                Ok(KnowledgeHit {
                    category: category_of(&name).to_owned(),
                    name,
                    snippet: snippet(&text, &terms),
                    score: f.score,
                })
            })
            .collect()
    }

    /// Documents by their best keyword passage, best first, as `(doc id, passage id)`.
    fn keyword_ranking(&self, terms: &[String]) -> Result<Vec<(i64, i64)>, KnowledgeError> {
        let Some(expr) = fts_expression(terms) else {
            return Ok(Vec::new());
        };
        let matches = self.index.keyword_matches(&expr, KEYWORD_PASSAGES)?;
        Ok(best_per_doc(matches))
    }

    /// Documents by their best passage cosine at or above the floor, best first, as
    /// `(doc id, passage id)`; empty without an embedder.
    fn dense_ranking(&mut self, query: &str) -> Result<Vec<(i64, i64)>, KnowledgeError> {
        const OP: &str = "search";
        let Some(embedder) = self.embedder.clone() else {
            return Ok(Vec::new());
        };
        let mut q = embedder
            .embed_query(query)
            .map_err(|e| KnowledgeError::Embed {
                op: OP,
                detail: e.to_string(),
            })?;
        hearth_memory::l2_normalize(&mut q);
        let fingerprint = embedder.fingerprint().to_string();
        // Taken out and put back, so building it can borrow `self`.
        let cache = match self.dense.take() {
            Some(cache) if cache.fingerprint == fingerprint => cache,
            _ => self.build_dense_cache(fingerprint, embedder.dim())?,
        };
        let best = best_passages(&cache, &q, self.min_cosine);
        self.dense = Some(cache);
        let best = best.map_err(|e| KnowledgeError::Embed {
            op: OP,
            detail: format!("query vector does not fit the stored vectors: {e}"),
        })?;
        let mut ranked: Vec<(i64, f32, i64)> =
            best.into_iter().map(|(doc, (s, p))| (doc, s, p)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(ranked.into_iter().map(|(doc, _, p)| (doc, p)).collect())
    }

    /// Reads the vectors of `fingerprint` (of `dim` entries) into one matrix.
    fn build_dense_cache(
        &self,
        fingerprint: String,
        dim: usize,
    ) -> Result<DenseCache, KnowledgeError> {
        let mut matrix = Matrix::new(dim);
        let mut rows = Vec::new();
        for (doc, passage, vector) in self.index.vectors(&fingerprint)? {
            // A vector of the wrong size is left out rather than failing every search.
            if matrix.push(&vector).is_ok() {
                rows.push((doc, passage));
            }
        }
        Ok(DenseCache {
            fingerprint,
            matrix,
            rows,
        })
    }
}

/// Each document's best passage by cosine with `q`, among those at or above `floor`, as
/// doc id → (cosine, passage id).
fn best_passages(
    cache: &DenseCache,
    q: &[f32],
    floor: f32,
) -> Result<HashMap<i64, (f32, i64)>, hearth_memory::SimdError> {
    let mut best: HashMap<i64, (f32, i64)> = HashMap::new();
    if cache.matrix.is_empty() {
        return Ok(best);
    }
    let mut scores = vec![0.0; cache.matrix.len()];
    Kernel::best().scores(&cache.matrix, q, &mut scores)?;
    for (&(doc, passage), &score) in cache.rows.iter().zip(&scores) {
        if score < floor {
            continue;
        }
        match best.entry(doc) {
            Entry::Occupied(mut e) if e.get().0 < score => {
                e.insert((score, passage));
            }
            Entry::Occupied(_) => {}
            Entry::Vacant(e) => {
                e.insert((score, passage));
            }
        }
    }
    Ok(best)
}

/// Keeps the first (best) passage of each document, in order.
fn best_per_doc(matches: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    let mut seen = std::collections::HashSet::new();
    matches
        .into_iter()
        .filter(|&(doc, _)| seen.insert(doc))
        .collect()
}

/// An FTS5 expression matching any of `tokens`. Each token is quoted, so FTS5 operators and
/// punctuation in user text are literal; tokens with no letter or digit are dropped because the
/// `unicode61` tokenizer indexes nothing for them.
fn fts_expression(terms: &[String]) -> Option<String> {
    let terms: Vec<String> = terms
        .iter()
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
        .collect();
    (!terms.is_empty()).then(|| terms.join(" OR "))
}

/// Renders hits as the `knowledge_search` tool shows them: `[category/name]` and the snippet,
/// hits separated by `---`.
pub fn render_hits(hits: &[KnowledgeHit]) -> String {
    hits.iter()
        .map(|h| format!("[{}]\n{}", h.name, h.snippet))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_expressions_quote_every_token() {
        let terms = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            fts_expression(&terms("bread \"x OR --")).as_deref(),
            Some("\"bread\" OR \"\"\"x\" OR \"OR\"")
        );
        assert_eq!(fts_expression(&terms("-- !!")), None);
    }

    #[test]
    fn rendered_hits_are_separated_by_rules() {
        let hit = |name: &str, snippet: &str| KnowledgeHit {
            name: name.into(),
            category: category_of(name).into(),
            snippet: snippet.into(),
            score: 1.0,
        };
        let text = render_hits(&[hit("recipes/bread", "flour"), hit("travel", "rome")]);
        assert_eq!(text, "[recipes/bread]\nflour\n---\n[travel]\nrome");
    }
}
