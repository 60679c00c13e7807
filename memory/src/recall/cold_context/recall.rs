//! Finding cold entries again: the keyword, dense and companion lists, fused and weighed by the
//! query's priors.

use super::dense_space::{DenseList, merge_span_hits};
use super::*;

/// Keyword matches as (cold id, BM25 score, meta), best first.
type KeywordList = Vec<(i64, f64, EntryMeta)>;

/// The keyword search inside a named span reads at most this many times `depth` matches.
const SPAN_SCAN_DEPTHS: usize = 64;

/// What [`ColdContext::rank`] found: each list, and their weighed fusion.
struct Ranking {
    dense: DenseList,
    keyword: KeywordList,
    companion: DenseList,
    /// (cold id, fused score × the priors' factor), best first.
    fused: Vec<(i64, f64)>,
    query_vec: Option<Vec<f32>>,
    priors: QueryPriors,
    meta: HashMap<i64, EntryMeta>,
}

/// Where one cold entry stands for a query ([`ColdContext::explain`]): its 1-based place and
/// score in the main model's, the keywords' and the companion's lists (`None`: not among that
/// list's candidates; the measured passage list is not shown) and in the fusion.
#[derive(Clone, Debug, PartialEq)]
pub struct Explained {
    /// Cold entry id.
    pub id: i64,
    /// In the fused ranking, the priors weighed in.
    pub fused: Option<(usize, f64)>,
    /// In the main model's list (cosine).
    pub dense: Option<(usize, f64)>,
    /// In the keyword list (BM25).
    pub keyword: Option<(usize, f64)>,
    /// In the companion's list (cosine).
    pub companion: Option<(usize, f64)>,
    /// The priors' factor on its fused score (`None`: no list and no index knows the entry).
    pub prior: Option<f64>,
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

impl ColdContext {
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
        let Ranking {
            dense,
            keyword,
            fused,
            query_vec,
            ..
        } = self.rank(query, k, now_ms)?;
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

    /// Every list's candidates for `query` asked at `now_ms` (at least `k` deep), and their
    /// fusion weighed by the query's priors, best first.
    fn rank(&mut self, query: &str, k: usize, now_ms: i64) -> Result<Ranking, RecallError> {
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
        let passages = match (&query_vec, &self.passages) {
            (Some(q), Some(index)) if self.config.passage_list_weight > 0.0 => {
                index.search(q, depth, &priors)?
            }
            _ => DenseList::default(),
        };
        let meta: HashMap<i64, EntryMeta> = dense
            .hits
            .iter()
            .chain(&companion.hits)
            .chain(&passages.hits)
            .map(|d| (d.0, d.2))
            .chain(keyword.iter().map(|k| (k.0, k.2)))
            .collect();
        let mut fused: Vec<(i64, f64)> = self
            .fuse(&dense, &keyword, &companion, &passages)
            .into_iter()
            .filter_map(|f| {
                let m = meta.get(&f.id)?;
                Some((f.id, f.score * priors.entry_factor(m)))
            })
            .filter(|&(_, score)| score > 0.0)
            .collect();
        // The fusion's order is total; a stable sort keeps it among equal weighed scores.
        fused.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(Ranking {
            dense,
            keyword,
            companion,
            fused,
            query_vec,
            priors,
            meta,
        })
    }

    /// Why `query` asked at `now_ms` ranks `ids` where it does: each one's place and score in
    /// every list and in the fusion, and the prior factor on it. For reading a miss, not for
    /// the turn path: nothing is counted as an access.
    pub fn explain(
        &mut self,
        query: &str,
        now_ms: i64,
        ids: &[i64],
    ) -> Result<Vec<Explained>, RecallError> {
        if query.trim().is_empty() {
            return Ok(Vec::new());
        }
        let ranking = self.rank(query, 1, now_ms)?;
        let place = |hits: &[(i64, f64)], id: i64| {
            hits.iter()
                .position(|h| h.0 == id)
                .map(|at| (at + 1, hits[at].1))
        };
        let scores = |hits: &[DenseHit]| -> Vec<(i64, f64)> {
            hits.iter().map(|d| (d.0, f64::from(d.1))).collect()
        };
        let (dense, companion) = (scores(&ranking.dense.hits), scores(&ranking.companion.hits));
        let keyword: Vec<(i64, f64)> = ranking.keyword.iter().map(|k| (k.0, k.1)).collect();
        Ok(ids
            .iter()
            .map(|&id| {
                let meta = ranking.meta.get(&id).copied().or_else(|| {
                    self.dense
                        .as_ref()
                        .and_then(|d| d.index.as_ref())
                        .and_then(|i| i.meta(id))
                });
                Explained {
                    id,
                    fused: place(&ranking.fused, id),
                    dense: place(&dense, id),
                    keyword: place(&keyword, id),
                    companion: place(&companion, id),
                    prior: meta.map(|m| ranking.priors.entry_factor(&m)),
                }
            })
            .collect())
    }

    /// The candidate lists fused by the configured method: the main model's, the keywords',
    /// the companion's and the passages' (empty without one: it adds nothing then).
    fn fuse(
        &self,
        dense: &DenseList,
        keyword: &[(i64, f64, EntryMeta)],
        companion: &DenseList,
        passages: &DenseList,
    ) -> Vec<Fused> {
        let c = &self.config;
        let scores = |hits: &[DenseHit]| -> Vec<(i64, f64)> {
            hits.iter().map(|d| (d.0, f64::from(d.1))).collect()
        };
        let (dense_scores, companion_scores) = (scores(&dense.hits), scores(&companion.hits));
        let passage_scores = scores(&passages.hits);
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
            Scored {
                ids: &passage_scores,
                weight: c.passage_list_weight,
                population: passages.population,
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
}
