//! One dense model's side of cold context: its vectors, embedded in passages and batches, and
//! its in-memory index searched with the query's priors.

use super::*;
use crate::embed::EmbedError;
use crate::simd::ScoreMoments;

/// Texts per embedding run: large enough to amortise a graph run, small enough that one
/// archive's buffers stay small (the model's own limit is 64).
pub const EMBED_BATCH: usize = 64;

/// Adds the hits found inside a named span that the whole-history search did not, and orders
/// them all by score again; `key` gives a hit's id and score.
pub(super) fn merge_span_hits<H>(
    hits: &mut Vec<H>,
    inside: Vec<H>,
    key: impl Fn(&H) -> (i64, f64),
) {
    let seen: HashSet<i64> = hits.iter().map(|h| key(h).0).collect();
    hits.extend(inside.into_iter().filter(|h| !seen.contains(&key(h).0)));
    hits.sort_by(|a, b| key(b).1.total_cmp(&key(a).1));
}

/// Keeps the hits at or above `relative_floor` × the best one's cosine. Ranks alone cannot
/// tell a close second from a distant one; without this floor a weak match a day newer would
/// overtake the clear answer once recency weighs in.
fn above_relative_floor(hits: &mut Vec<DenseHit>, relative_floor: f32) {
    if let Some(best) = hits.first().map(|d| d.1) {
        let floor = best * relative_floor;
        hits.retain(|d| d.1 >= floor);
    }
}

/// The distribution a scan's cosines make, when it has one (two rows at least).
pub(super) fn population_of(moments: &ScoreMoments) -> Option<Population> {
    Some(Population {
        mean: moments.mean()?,
        std_dev: moments.std_dev()?,
        count: moments.count,
    })
}

/// A dense model's candidates for one query, and the cosines of the whole store they stand out
/// of.
#[derive(Debug, Default)]
pub(super) struct DenseList {
    pub(super) hits: Vec<DenseHit>,
    pub(super) population: Option<Population>,
}

/// A dense model and the in-memory index of its vectors in cold context (loaded on the first
/// recall that needs it).
pub(super) struct DenseSpace {
    pub(super) embedder: Arc<dyn Embedder>,
    pub(super) fingerprint: String,
    pub(super) column: VectorColumn,
    pub(super) index: Option<DenseIndex>,
    /// Every entry up to this id has been through the back-fill (`i64::MIN`: none has); the
    /// next step starts after it. New entries only ever get higher ids.
    pub(super) backfilled_to: i64,
    /// The small-talk phrases in this model's space, embedded on the first short input.
    pub(super) small_talk: Option<SmallTalk>,
}

impl DenseSpace {
    pub(super) fn new(embedder: Arc<dyn Embedder>, column: VectorColumn) -> Self {
        Self {
            fingerprint: embedder.fingerprint().to_string(),
            embedder,
            column,
            index: None,
            backfilled_to: i64::MIN,
            small_talk: None,
        }
    }

    /// Loads the index from the store when it is not loaded.
    pub(super) fn ensure_index(&mut self, store: &StoreReader) -> Result<(), RecallError> {
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
    pub(super) fn embed_query(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let v = self.embedder.embed_query(query)?;
        if v.len() != self.embedder.dim() {
            return Err(EmbedError::Output {
                message: format!("query vector has {} dimensions", v.len()),
            });
        }
        Ok(v)
    }

    /// Vectors of `texts` (`None` for an empty text), or why the model gave none. Texts longer
    /// than `passage_chars` (when not 0) are embedded as passages and averaged.
    pub(super) fn embed_texts(
        &self,
        texts: &[String],
        passage_chars: usize,
    ) -> Result<Vec<Option<Vec<f32>>>, EmbedError> {
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
            let vectors = embedder.embed_batch(&batch)?;
            if vectors.len() != batch.len() || vectors.iter().any(|r| r.len() != embedder.dim()) {
                return Err(EmbedError::Output {
                    message: "vectors of the wrong shape".to_owned(),
                });
            }
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
    pub(super) fn search(
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
        Ok(DenseList {
            hits,
            population: population_of(&moments),
        })
    }

    /// Adds freshly stored vectors to the index, when it is loaded (otherwise its load reads
    /// them from the store).
    pub(super) fn index_new(&mut self, vectors: &[(i64, Vec<f32>, EntryMeta)]) {
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
