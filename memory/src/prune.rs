//! Pruning the working window (SPEC §4.6–§4.7): how many of the newest events are protected, how
//! many events the window keeps, and which of the unprotected ones stay because they are the
//! most relevant to the current query. Everything else moves to cold context (L2) with its
//! original timestamp; nothing is dropped.
//!
//! Two deliberate differences from the original's `PruneWithProtected`:
//! - **No mixed scales.** Candidates with a dense vector in the query's space are scored by
//!   dense cosine, the others by sparse cosine; the two are never compared as numbers. Each
//!   candidate's score becomes its fractional rank inside its own group (`rank / group size`,
//!   ties sharing the better rank), and the groups are merged on that. Candidates that cannot be
//!   scored at all rank last.
//! - **A total, recency-aware order.** Ties (same fractional rank) go to the newer event, so an
//!   empty query keeps the newest candidates instead of an arbitrary set.

use std::cmp::Ordering;

use crate::SparseVector;
use crate::simd::Kernel;

/// SPEC §4.6: protected events when nothing else is configured.
pub const DEFAULT_PROTECTED_COUNT: usize = 10;
/// SPEC §4.7 `core.agent.max_context_size`.
pub const DEFAULT_MAX_CONTEXT_SIZE: usize = 30;
/// Average event size assumed while the window has no token history.
pub const DEFAULT_AVG_EVENT_TOKENS: u64 = 2000;

/// `accumulated / len`, or [`DEFAULT_AVG_EVENT_TOKENS`] when that is 0 (or the window empty).
pub fn average_event_tokens(accumulated_tokens: u64, len: usize) -> u64 {
    match accumulated_tokens.checked_div(len as u64) {
        Some(avg) if avg > 0 => avg,
        _ => DEFAULT_AVG_EVENT_TOKENS,
    }
}

/// SPEC §4.7 `effectiveProtectedCount`: the configured count (`cfg_cap`; 0 means
/// [`DEFAULT_PROTECTED_COUNT`]), bounded by how many average events fit `context_tokens`
/// (at least 1). With no budget or an empty window the configured count applies.
pub fn effective_protected_count(
    cfg_cap: usize,
    context_tokens: usize,
    accumulated_tokens: u64,
    len: usize,
) -> usize {
    let cfg_cap = if cfg_cap == 0 {
        DEFAULT_PROTECTED_COUNT
    } else {
        cfg_cap
    };
    if context_tokens == 0 || len == 0 {
        return cfg_cap;
    }
    let avg = average_event_tokens(accumulated_tokens, len);
    let budget_cap = (context_tokens as u64 / avg).max(1);
    cfg_cap.min(usize::try_from(budget_cap).unwrap_or(usize::MAX))
}

/// SPEC §4.7 `contextTopK`: how many events the window keeps after a prune. `hardCap =
/// max(1, max_context_size − 1)` (0 means [`DEFAULT_MAX_CONTEXT_SIZE`]); with no budget, hardCap.
/// Otherwise `clamp(tokens / avg, ≥ 1)`, capped at hardCap, raised to at least the effective
/// protected count + 1, capped at hardCap again.
pub fn context_top_k(
    max_context_size: usize,
    cfg_cap: usize,
    context_tokens: usize,
    accumulated_tokens: u64,
    len: usize,
) -> usize {
    let max_context_size = if max_context_size == 0 {
        DEFAULT_MAX_CONTEXT_SIZE
    } else {
        max_context_size
    };
    let hard_cap = max_context_size.saturating_sub(1).max(1);
    if context_tokens == 0 {
        return hard_cap;
    }
    let avg = average_event_tokens(accumulated_tokens, len);
    let fit = usize::try_from((context_tokens as u64 / avg).max(1)).unwrap_or(usize::MAX);
    let protected = effective_protected_count(cfg_cap, context_tokens, accumulated_tokens, len);
    fit.min(hard_cap)
        .max(protected.saturating_add(1))
        .min(hard_cap)
}

/// SPEC §4.7 `singleEventFitsBudget`: whether an average event fits the context budget at all.
/// When it does not, pruning cannot help and the overflow must be reported instead.
pub fn single_event_fits_budget(
    context_tokens: usize,
    accumulated_tokens: u64,
    len: usize,
) -> bool {
    average_event_tokens(accumulated_tokens, len) <= context_tokens as u64
}

/// The share of the working window's limit a prune frees beyond it, by default. Pruning one
/// event per turn once the window is full (the original's way) changes the conversation's
/// start every turn, and a local model's server then reads the whole prompt again every turn;
/// freeing half the window lets the next turns only append, so the server reuses what it read
/// (`hearth bench recall --prune`: the prompt reused from the turn before).
pub const DEFAULT_PRUNE_SLACK: f64 = 0.5;

/// Both limits of one prune, from the configuration and the window's token statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PruneLimits {
    /// Events the window keeps ([`context_top_k`]).
    pub top_k: usize,
    /// Newest events never archived ([`effective_protected_count`]).
    pub protected: usize,
}

impl PruneLimits {
    /// Both limits for a window of `len` events holding `accumulated_tokens`, with the same
    /// arguments [`context_top_k`] takes.
    pub fn compute(
        max_context_size: usize,
        cfg_cap: usize,
        context_tokens: usize,
        accumulated_tokens: u64,
        len: usize,
    ) -> Self {
        Self {
            top_k: context_top_k(
                max_context_size,
                cfg_cap,
                context_tokens,
                accumulated_tokens,
                len,
            ),
            protected: effective_protected_count(cfg_cap, context_tokens, accumulated_tokens, len),
        }
    }

    /// What a prune keeps when it frees `slack` (a share, 0 to 1) of the window beyond these
    /// limits, so the next turns append without pruning: at least one event, and the protected
    /// newest events cut to leave a candidate.
    pub fn with_slack(self, slack: f64) -> Self {
        let freed = (self.top_k as f64 * slack.clamp(0.0, 1.0)).ceil() as usize;
        let top_k = self.top_k.saturating_sub(freed).max(1);
        Self {
            top_k,
            protected: self.protected.min(top_k.saturating_sub(1)),
        }
    }
}

/// A dense vector and the fingerprint of the space it lives in (as stored: `model:sha:dim:pool`).
#[derive(Clone, Copy, Debug)]
pub struct DenseRef<'a> {
    /// The [`Fingerprint`](crate::Fingerprint) in its stored text form.
    pub fingerprint: &'a str,
    /// Unit length, as every [`Embedder`](crate::Embedder) returns.
    pub values: &'a [f32],
}

/// What pruning needs of one window event.
#[derive(Clone, Copy, Debug, Default)]
pub struct PruneEvent<'a> {
    /// When the event happened, in Unix milliseconds.
    pub timestamp_ms: i64,
    /// The event's dense vector, if it was embedded.
    pub dense: Option<DenseRef<'a>>,
    /// The event's sparse vector, the fallback when the dense spaces differ.
    pub sparse: Option<&'a SparseVector>,
}

/// The query the window is pruned for. An empty query (no dense vector, empty sparse vector)
/// scores nothing, so the newest candidates are kept.
#[derive(Clone, Copy, Debug, Default)]
pub struct PruneQuery<'a> {
    /// The query's dense vector, if it was embedded.
    pub dense: Option<DenseRef<'a>>,
    /// The query's sparse vector.
    pub sparse: Option<&'a SparseVector>,
}

impl PruneQuery<'_> {
    fn is_empty(&self) -> bool {
        self.dense.is_none() && self.sparse.is_none_or(SparseVector::is_empty)
    }
}

/// How one candidate was scored. Scores of different variants are never compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PruneScore {
    /// Cosine in the query's dense space.
    Dense(f32),
    /// Sparse cosine (the event has no vector in the query's dense space).
    Sparse(f32),
    /// Nothing to compare: ranks below every scored candidate.
    Unscored,
}

/// Scores `event` against `query` (SPEC §4.6 step 3): dense cosine when the fingerprints and
/// lengths match, otherwise sparse cosine, otherwise unscored.
pub fn prune_score(query: &PruneQuery<'_>, event: &PruneEvent<'_>) -> PruneScore {
    if query.is_empty() {
        return PruneScore::Unscored;
    }
    let query_norm = query.sparse.map_or(0.0, SparseVector::norm);
    score_with(Kernel::best(), query, query_norm, event)
}

/// [`prune_score`] with the kernel and the query's sparse norm worked out once per prune.
fn score_with(
    kernel: Kernel,
    query: &PruneQuery<'_>,
    query_norm: f32,
    event: &PruneEvent<'_>,
) -> PruneScore {
    if let (Some(q), Some(e)) = (query.dense, event.dense)
        && q.values.len() == e.values.len()
        && (std::ptr::eq(q.fingerprint, e.fingerprint) || q.fingerprint == e.fingerprint)
    {
        // Both are unit length, so the dot product is the cosine.
        return PruneScore::Dense(kernel.dot(q.values, e.values));
    }
    match (query.sparse, event.sparse) {
        (Some(q), Some(e)) => {
            let denom = query_norm * e.norm();
            PruneScore::Sparse(if denom > 0.0 {
                (q.dot(e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            })
        }
        _ => PruneScore::Unscored,
    }
}

/// Which events stay in the window and which move to cold context. Both lists hold indexes into
/// the events passed to [`plan_prune`], in time order; together they are every index exactly
/// once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrunePlan {
    /// Events that stay in the window.
    pub keep: Vec<usize>,
    /// Events that move to cold context.
    pub archive: Vec<usize>,
}

impl PrunePlan {
    /// Nothing to archive.
    pub fn is_noop(&self) -> bool {
        self.archive.is_empty()
    }
}

/// Scores every candidate and plans the prune; see [`plan_prune_scored`].
pub fn plan_prune(
    events: &[PruneEvent<'_>],
    query: &PruneQuery<'_>,
    top_k: usize,
    protected: usize,
) -> PrunePlan {
    let timestamps: Vec<i64> = events.iter().map(|e| e.timestamp_ms).collect();
    let Some((candidates, keep_count)) = prune_shape(events.len(), top_k, protected) else {
        return keep_everything(events.len());
    };
    // Newest first: among equal scores the first offered is the best, so the rest are turned
    // away by one comparison (an empty query is all ties).
    let mut groups = Groups::new(&timestamps, keep_count);
    if query.is_empty() {
        (0..candidates)
            .rev()
            .for_each(|i| groups.offer(i, PruneScore::Unscored));
    } else {
        let kernel = Kernel::best();
        let query_norm = query.sparse.map_or(0.0, SparseVector::norm);
        for (i, e) in events[..candidates].iter().enumerate().rev() {
            groups.offer(i, score_with(kernel, query, query_norm, e));
        }
    }
    finish(&timestamps, candidates, groups.kept())
}

/// `protected` (0 means [`DEFAULT_PROTECTED_COUNT`]) clamped to the window.
fn protected_len(len: usize, protected: usize) -> usize {
    let protected = if protected == 0 {
        DEFAULT_PROTECTED_COUNT
    } else {
        protected
    };
    protected.min(len)
}

/// `(candidates, candidates kept)` of a window of `len`, or `None` when nothing moves.
fn prune_shape(len: usize, top_k: usize, protected: usize) -> Option<(usize, usize)> {
    let protected_n = protected_len(len, protected);
    let candidates = len - protected_n;
    if len <= top_k || candidates == 0 {
        return None;
    }
    Some((
        candidates,
        top_k.saturating_sub(protected_n).min(candidates),
    ))
}

fn keep_everything(len: usize) -> PrunePlan {
    PrunePlan {
        keep: (0..len).collect(),
        archive: Vec::new(),
    }
}

/// SPEC §4.6 with Hearth's fixes. `timestamps` are the window's events in window (time) order;
/// `scores[i]` scores candidate `i` (the first `len − protected` events; it may be empty when
/// nothing will be pruned). The last `protected` events (0 means the default) always stay;
/// `max(0, top_k − protected)` candidates stay by rank: fractional rank within the candidate's
/// score group (ties share the better rank), then newer first. When the window holds at most
/// `top_k` events, or every event is protected, nothing moves.
///
/// # Panics
/// If `scores` is non-empty and its length is not the number of candidates.
pub fn plan_prune_scored(
    timestamps: &[i64],
    scores: &[PruneScore],
    top_k: usize,
    protected: usize,
) -> PrunePlan {
    let Some((candidates, keep_count)) = prune_shape(timestamps.len(), top_k, protected) else {
        return keep_everything(timestamps.len());
    };
    assert_eq!(
        scores.len(),
        candidates,
        "one score per candidate (the events before the protected tail)"
    );
    let mut groups = Groups::new(timestamps, keep_count);
    for (i, &s) in scores.iter().enumerate().rev() {
        groups.offer(i, s);
    }
    finish(timestamps, candidates, groups.kept())
}

/// The plan from the kept candidates: kept + protected, and every other candidate, both in time
/// order.
fn finish(timestamps: &[i64], candidates: usize, mut keep: Vec<usize>) -> PrunePlan {
    let mut kept = vec![false; candidates];
    for &i in &keep {
        kept[i] = true;
    }
    let mut archive: Vec<usize> = (0..candidates).filter(|&i| !kept[i]).collect();
    keep.extend(candidates..timestamps.len());
    let by_time = |&a: &usize, &b: &usize| timestamps[a].cmp(&timestamps[b]).then(a.cmp(&b));
    keep.sort_unstable_by(by_time);
    // A window is already in time order; only an out-of-order caller pays for this sort.
    if !timestamps[..candidates].is_sorted() {
        archive.sort_unstable_by(by_time);
    }
    PrunePlan { keep, archive }
}

/// The best `m` candidates of each score group, kept sorted as they are offered.
///
/// Within one group the overall order (fractional rank, then newer first) is the order (score
/// descending, then newer first): a strictly higher score always has a strictly lower
/// fractional rank, equal scores share one. So only each group's best `m` can be among the best
/// `m` overall, and a member's rank (how many of its group score strictly higher) can be read
/// off that group's sorted best `m`. One pass, no sort of the window.
struct Groups<'t> {
    timestamps: &'t [i64],
    m: usize,
    /// Dense, sparse, unscored: the best `m` as `(score, index)`, best first, and the size.
    best: [(Vec<(f32, usize)>, usize); 3],
}

impl<'t> Groups<'t> {
    fn new(timestamps: &'t [i64], m: usize) -> Self {
        let group = || (Vec::with_capacity(m + 1), 0);
        Self {
            timestamps,
            m,
            best: [group(), group(), group()],
        }
    }

    /// Whether `a` ranks before `b` inside one group: higher score, then newer.
    fn before(&self, a: (f32, usize), b: (f32, usize)) -> bool {
        b.0.total_cmp(&a.0)
            .then(self.timestamps[b.1].cmp(&self.timestamps[a.1]))
            .then(b.1.cmp(&a.1))
            == Ordering::Less
    }

    fn offer(&mut self, i: usize, score: PruneScore) {
        // +0.0 folds -0.0 into +0.0 so the two tie; a NaN (a damaged vector) ranks last.
        let clean = |v: f32| if v.is_nan() { f32::MIN } else { v + 0.0 };
        let (g, item) = match score {
            PruneScore::Dense(v) => (0, (clean(v), i)),
            PruneScore::Sparse(v) => (1, (clean(v), i)),
            PruneScore::Unscored => (2, (0.0, i)),
        };
        self.best[g].1 += 1;
        if self.m == 0 {
            return;
        }
        let list = &self.best[g].0;
        if list.len() == self.m && !self.before(item, list[self.m - 1]) {
            return;
        }
        let at = list.partition_point(|&x| self.before(x, item));
        let list = &mut self.best[g].0;
        list.insert(at, item);
        list.truncate(self.m);
    }

    /// The best `m` overall: by key (rank / group size for the scored groups, 1.0 for the
    /// unscored one), then newer first.
    fn kept(self) -> Vec<usize> {
        let mut all: Vec<(f64, usize)> = Vec::with_capacity(3 * self.m);
        for (g, (list, size)) in self.best.iter().enumerate() {
            let mut rank = 0;
            for (pos, &(score, i)) in list.iter().enumerate() {
                if pos > 0 && score.total_cmp(&list[pos - 1].0) != Ordering::Equal {
                    rank = pos;
                }
                let key = if g < 2 {
                    rank as f64 / *size as f64
                } else {
                    1.0
                };
                all.push((key, i));
            }
        }
        let ts = self.timestamps;
        all.sort_unstable_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(ts[b.1].cmp(&ts[a.1]))
                .then(b.1.cmp(&a.1))
        });
        all.truncate(self.m);
        all.into_iter().map(|(_, i)| i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn a_slack_frees_its_share_of_the_window_and_leaves_a_candidate() {
        let limits = PruneLimits {
            top_k: 29,
            protected: 10,
        };
        assert_eq!(limits.with_slack(0.0), limits);
        // Half of 29, rounded up, is freed: 14 kept, 10 of them the newest.
        assert_eq!(
            limits.with_slack(0.5),
            PruneLimits {
                top_k: 14,
                protected: 10
            }
        );
        // Freeing most of the window cuts the protected events to leave one by relevance.
        assert_eq!(
            limits.with_slack(0.9),
            PruneLimits {
                top_k: 2,
                protected: 1
            }
        );
        // At least one event stays, and a share outside 0..=1 is clamped.
        assert_eq!(limits.with_slack(1.0).top_k, 1);
        assert_eq!(limits.with_slack(7.0), limits.with_slack(1.0));
        assert_eq!(limits.with_slack(-1.0), limits);
    }

    #[test]
    fn average_uses_two_thousand_when_unknown() {
        assert_eq!(average_event_tokens(0, 5), 2000);
        assert_eq!(average_event_tokens(100, 0), 2000);
        assert_eq!(average_event_tokens(3, 5), 2000); // 3 / 5 = 0
        assert_eq!(average_event_tokens(1000, 4), 250);
    }

    #[test]
    fn protected_count_follows_spec_formula() {
        // No budget or empty window: the configured cap.
        assert_eq!(effective_protected_count(10, 0, 500, 5), 10);
        assert_eq!(effective_protected_count(10, 5000, 0, 0), 10);
        assert_eq!(
            effective_protected_count(0, 0, 0, 0),
            DEFAULT_PROTECTED_COUNT
        );
        // avg = 4000 / 4 = 1000; budgetCap = 3500 / 1000 = 3.
        assert_eq!(effective_protected_count(10, 3500, 4000, 4), 3);
        // Budget smaller than one average event: still 1.
        assert_eq!(effective_protected_count(10, 10, 4000, 4), 1);
        // Large budget: the configured cap wins.
        assert_eq!(effective_protected_count(7, 1_000_000, 4000, 4), 7);
        // No token history: avg 2000.
        assert_eq!(effective_protected_count(10, 9000, 0, 4), 4);
    }

    #[test]
    fn top_k_follows_spec_formula() {
        // No budget: hardCap = 30 - 1.
        assert_eq!(context_top_k(30, 10, 0, 0, 0), 29);
        assert_eq!(context_top_k(0, 10, 0, 0, 0), 29);
        assert_eq!(context_top_k(1, 10, 0, 0, 0), 1);
        // avg = 1000; tokens / avg = 20 → 20 (protected 10 + 1 = 11 ≤ 20).
        assert_eq!(context_top_k(30, 10, 20_000, 10_000, 10), 20);
        // tokens / avg = 100 → capped at 29.
        assert_eq!(context_top_k(30, 10, 100_000, 10_000, 10), 29);
        // tokens / avg = 3 → protected = 3 → raised to 4.
        assert_eq!(context_top_k(30, 10, 3_000, 10_000, 10), 4);
        // Raised above hardCap, then capped again: hardCap 4, protected 5 → 6 → 4.
        assert_eq!(context_top_k(5, 10, 5_000, 10_000, 10), 4);
        // Tiny budget: fit 1, protected 1 → 2.
        assert_eq!(context_top_k(30, 10, 10, 10_000, 10), 2);
    }

    #[test]
    fn single_event_fit_compares_average_with_budget() {
        assert!(single_event_fits_budget(1000, 4000, 4));
        assert!(!single_event_fits_budget(999, 4000, 4));
        assert!(!single_event_fits_budget(1999, 0, 0));
        assert!(single_event_fits_budget(2000, 0, 0));
    }

    #[test]
    fn small_window_or_all_protected_is_untouched() {
        let ts: Vec<i64> = (0..5).collect();
        let plan = plan_prune_scored(&ts, &[], 5, 2);
        assert_eq!(plan.keep, [0, 1, 2, 3, 4]);
        assert!(plan.is_noop());
        let plan = plan_prune_scored(&ts, &[], 2, 9);
        assert_eq!(plan.keep, [0, 1, 2, 3, 4]);
        assert!(plan.is_noop());
    }

    #[test]
    fn empty_query_keeps_the_newest_candidates() {
        let vecs: Vec<Vec<f32>> = (0..8).map(|i| unit(&[1.0, i as f32])).collect();
        let sparse = SparseVector::from_pairs(vec![(1, 1.0)]);
        let events: Vec<PruneEvent<'_>> = vecs
            .iter()
            .enumerate()
            .map(|(i, v)| PruneEvent {
                timestamp_ms: i as i64 * 10,
                dense: (i % 2 == 0).then_some(DenseRef {
                    fingerprint: "m:aaaaaaaaaaaa:2:mean",
                    values: v,
                }),
                sparse: (i % 2 == 1).then_some(&sparse),
            })
            .collect();
        let empty = SparseVector::default();
        let query = PruneQuery {
            dense: None,
            sparse: Some(&empty),
        };
        let plan = plan_prune(&events, &query, 5, 2);
        // Protected 6, 7; the three newest candidates 3, 4, 5 stay.
        assert_eq!(plan.keep, [3, 4, 5, 6, 7]);
        assert_eq!(plan.archive, [0, 1, 2]);
    }

    #[test]
    fn dense_and_sparse_candidates_are_ranked_in_their_own_groups() {
        let fp = "m:aaaaaaaaaaaa:2:mean";
        let q = unit(&[1.0, 0.0]);
        // Dense candidates: cosines 0.99.., 0.2; sparse candidates: cosines 0.3, 0.1.
        let d_hi = unit(&[1.0, 0.1]);
        let d_lo = unit(&[0.2, 0.98]);
        let qs = SparseVector::from_pairs(vec![(1, 1.0), (2, 1.0)]);
        let s_hi = SparseVector::from_pairs(vec![(1, 1.0), (3, 2.0)]);
        let s_lo = SparseVector::from_pairs(vec![(2, 0.1), (4, 1.0)]);
        let protected_vec = unit(&[0.0, 1.0]);
        let dense = |v| {
            Some(DenseRef {
                fingerprint: fp,
                values: v,
            })
        };
        let events = [
            PruneEvent {
                timestamp_ms: 1,
                dense: dense(&d_lo),
                sparse: None,
            },
            PruneEvent {
                timestamp_ms: 2,
                dense: None,
                sparse: Some(&s_hi),
            },
            PruneEvent {
                timestamp_ms: 3,
                dense: dense(&d_hi),
                sparse: None,
            },
            PruneEvent {
                timestamp_ms: 4,
                dense: None,
                sparse: Some(&s_lo),
            },
            PruneEvent {
                timestamp_ms: 5,
                dense: dense(&protected_vec),
                sparse: None,
            },
        ];
        let query = PruneQuery {
            dense: dense(&q),
            sparse: Some(&qs),
        };
        assert!(matches!(
            prune_score(&query, &events[0]),
            PruneScore::Dense(_)
        ));
        assert!(matches!(
            prune_score(&query, &events[1]),
            PruneScore::Sparse(_)
        ));
        // Keep 2 candidates: the best of each group (both fractional rank 0), whatever the raw
        // numbers: the sparse 0.3 beats the dense 0.2 only because it leads its own group.
        let plan = plan_prune(&events, &query, 3, 1);
        assert_eq!(plan.keep, [1, 2, 4]);
        assert_eq!(plan.archive, [0, 3]);
        // Keep 1: both leaders tie on rank; the newer (index 2) wins.
        let plan = plan_prune(&events, &query, 2, 1);
        assert_eq!(plan.keep, [2, 4]);
    }

    #[test]
    fn other_fingerprint_falls_back_to_sparse_or_unscored() {
        let q = unit(&[1.0, 0.0]);
        let same = unit(&[1.0, 0.0]);
        let qs = SparseVector::from_pairs(vec![(1, 1.0)]);
        let query = PruneQuery {
            dense: Some(DenseRef {
                fingerprint: "a:aaaaaaaaaaaa:2:mean",
                values: &q,
            }),
            sparse: Some(&qs),
        };
        let foreign = PruneEvent {
            timestamp_ms: 0,
            dense: Some(DenseRef {
                fingerprint: "b:bbbbbbbbbbbb:2:mean",
                values: &same,
            }),
            sparse: None,
        };
        assert_eq!(prune_score(&query, &foreign), PruneScore::Unscored);
        let with_sparse = PruneEvent {
            sparse: Some(&qs),
            ..foreign
        };
        assert_eq!(prune_score(&query, &with_sparse), PruneScore::Sparse(1.0));
    }

    #[test]
    fn sparse_scores_are_the_sparse_cosine() {
        let q = SparseVector::from_pairs(vec![(1, 1.0), (2, 0.5), (9, 0.25)]);
        let e = SparseVector::from_pairs(vec![(2, 1.0), (9, 1.0), (4, 2.0)]);
        let query = PruneQuery {
            dense: None,
            sparse: Some(&q),
        };
        let event = PruneEvent {
            timestamp_ms: 0,
            dense: None,
            sparse: Some(&e),
        };
        let PruneScore::Sparse(s) = prune_score(&query, &event) else {
            panic!("sparse");
        };
        assert!((s - q.cosine(&e)).abs() < 1e-6);
        let empty = SparseVector::default();
        let none = PruneEvent {
            sparse: Some(&empty),
            ..event
        };
        assert_eq!(prune_score(&query, &none), PruneScore::Sparse(0.0));
    }

    #[test]
    fn unscored_candidates_go_first() {
        let ts: Vec<i64> = (0..5).collect();
        let scores = [
            PruneScore::Sparse(0.1),
            PruneScore::Unscored,
            PruneScore::Sparse(0.5),
        ];
        let plan = plan_prune_scored(&ts, &scores, 4, 2);
        assert_eq!(plan.keep, [0, 2, 3, 4]);
        assert_eq!(plan.archive, [1]);
    }

    fn score_strategy() -> impl Strategy<Value = PruneScore> {
        prop_oneof![
            (-1.0f32..1.0).prop_map(PruneScore::Dense),
            (0.0f32..1.0).prop_map(PruneScore::Sparse),
            Just(PruneScore::Unscored),
            Just(PruneScore::Dense(0.5)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn protected_is_bounded_by_cap_and_budget(
            cfg in 0usize..40, tokens in 0usize..200_000, acc in 0u64..1_000_000, len in 0usize..200,
        ) {
            let p = effective_protected_count(cfg, tokens, acc, len);
            let cap = if cfg == 0 { DEFAULT_PROTECTED_COUNT } else { cfg };
            prop_assert!(p >= 1 && p <= cap);
            if tokens > 0 && len > 0 {
                let avg = average_event_tokens(acc, len);
                prop_assert!(p as u64 <= (tokens as u64 / avg).max(1));
            }
        }

        #[test]
        fn top_k_stays_within_its_bounds(
            max in 0usize..60, cfg in 0usize..40, tokens in 0usize..200_000,
            acc in 0u64..1_000_000, len in 0usize..200,
        ) {
            let k = context_top_k(max, cfg, tokens, acc, len);
            let max = if max == 0 { DEFAULT_MAX_CONTEXT_SIZE } else { max };
            let hard = max.saturating_sub(1).max(1);
            prop_assert!(k >= 1 && k <= hard);
            let p = effective_protected_count(cfg, tokens, acc, len);
            if tokens > 0 && p < hard {
                prop_assert!(k > p, "top_k {} must leave room above protected {}", k, p);
            }
        }

        #[test]
        fn plan_partitions_keeps_protected_and_counts(
            spec in proptest::collection::vec((0i64..50, score_strategy()), 0..80),
            top_k in 0usize..40, protected in 0usize..20,
        ) {
            let mut ts: Vec<i64> = spec.iter().map(|s| s.0).collect();
            ts.sort_unstable();
            let len = ts.len();
            let p = protected_len(len, protected);
            let scores: Vec<PruneScore> = spec[..len - p].iter().map(|s| s.1).collect();
            let plan = plan_prune_scored(&ts, &scores, top_k, protected);
            let mut all: Vec<usize> = plan.keep.iter().chain(&plan.archive).copied().collect();
            all.sort_unstable();
            prop_assert_eq!(all, (0..len).collect::<Vec<_>>());
            for i in len - p..len {
                prop_assert!(plan.keep.contains(&i));
            }
            if len > top_k && len > p {
                prop_assert_eq!(plan.keep.len(), top_k.max(p));
            } else {
                prop_assert!(plan.archive.is_empty());
            }
            prop_assert!(plan.keep.windows(2).all(|w| ts[w[0]] <= ts[w[1]]));
            prop_assert!(plan.archive.windows(2).all(|w| ts[w[0]] <= ts[w[1]]));
            // Within one score group, a kept candidate never ranks below an archived one.
            for &a in &plan.archive {
                for &k in plan.keep.iter().filter(|&&k| k < len - p) {
                    match (scores[a], scores[k]) {
                        (PruneScore::Dense(x), PruneScore::Dense(y))
                        | (PruneScore::Sparse(x), PruneScore::Sparse(y)) => {
                            prop_assert!(y >= x, "kept {} < archived {}", y, x);
                        }
                        (PruneScore::Unscored, _) => {}
                        (_, PruneScore::Unscored) => prop_assert!(false, "unscored kept over scored"),
                        _ => {}
                    }
                }
            }
        }

        #[test]
        fn equal_scores_keep_the_newest(len in 1usize..60, top_k in 0usize..40, protected in 1usize..20) {
            let ts: Vec<i64> = (0..len as i64).collect();
            let p = protected.min(len);
            let scores = vec![PruneScore::Sparse(0.0); len - p];
            let plan = plan_prune_scored(&ts, &scores, top_k, protected);
            if len > top_k {
                let kept = top_k.max(p);
                prop_assert_eq!(plan.keep, (len - kept..len).collect::<Vec<_>>());
            }
        }
    }
}
