//! Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each ranked list gives an
//! item `weight / (k + rank)` (rank from 1), and the sums are the fused ranking. It needs no
//! score calibration, which is the point: BM25 scores and cosines live on unrelated scales and
//! must never be added or compared directly.
//!
//! What ranks throw away is how sure a list is. Over one person's long history a dense model
//! finds every turn of a conversation about the same topic about equally close, so its first
//! rank is a near-tie with its fiftieth; a keyword list that matched a rare name has a first
//! rank far above the rest. [`standard_score_fusion`] keeps that: each list's scores become
//! standard scores over its own candidates (how many deviations above the candidates' mean), so
//! scales still never meet, but a clear winner counts more than the head of a flat list.

use std::collections::HashMap;

/// The constant of the original paper: large enough that the head of one list does not drown
/// an item ranked well by every list.
pub const DEFAULT_RRF_K: f64 = 60.0;

/// How recall fuses its lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusionMethod {
    /// [`reciprocal_rank_fusion`].
    #[default]
    Rank,
    /// [`standard_score_fusion`].
    StandardScore,
}

/// One ranked list of ids (best first) and how much it counts.
#[derive(Clone, Copy, Debug)]
pub struct Ranked<'a> {
    /// The ranked ids, best first.
    pub ids: &'a [i64],
    /// Multiplier of every contribution this list makes.
    pub weight: f64,
}

/// A fused item: its fused score and its best (lowest, 1-based) rank in any list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fused {
    /// The item, as the lists named it.
    pub id: i64,
    /// Sum of its contributions over every list; higher ranks first.
    pub score: f64,
    /// Its best 1-based rank in any single list.
    pub best_rank: usize,
}

/// Fuses `lists` with constant `k`. An id repeated inside one list counts at its first rank
/// only. The result is ordered by score descending, then best rank, then id: a total order, so
/// equal inputs always give the same ranking.
pub fn reciprocal_rank_fusion(lists: &[Ranked<'_>], k: f64) -> Vec<Fused> {
    let mut acc: HashMap<i64, Fused> = HashMap::new();
    for list in lists {
        let mut seen = std::collections::HashSet::with_capacity(list.ids.len());
        for (i, &id) in list.ids.iter().enumerate() {
            if !seen.insert(id) {
                continue;
            }
            let rank = i + 1;
            add(&mut acc, id, rank, list.weight / (k + rank as f64));
        }
    }
    into_order(acc)
}

/// Adds `score` to `id`'s fused score, and `rank` to its best rank.
fn add(acc: &mut HashMap<i64, Fused>, id: i64, rank: usize, score: f64) {
    let entry = acc.entry(id).or_insert(Fused {
        id,
        score: 0.0,
        best_rank: rank,
    });
    entry.score += score;
    entry.best_rank = entry.best_rank.min(rank);
}

/// The fused items by score descending, then best rank, then id: a total order, so equal
/// inputs always give the same ranking.
fn into_order(acc: HashMap<i64, Fused>) -> Vec<Fused> {
    let mut out: Vec<Fused> = acc.into_values().collect();
    out.sort_unstable_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.best_rank.cmp(&b.best_rank))
            .then(a.id.cmp(&b.id))
    });
    out
}

/// One scored list (best first): ids with their scores in the list's own scale, and how much
/// it counts.
#[derive(Clone, Copy, Debug)]
pub struct Scored<'a> {
    /// `(id, score)` pairs, best first.
    pub ids: &'a [(i64, f64)],
    /// Multiplier of every contribution this list makes.
    pub weight: f64,
}

/// Fuses `lists` by standard score: an item gets, from each list that holds it,
/// `weight × max(0, (score − mean) / deviation)` over that list's candidates; a list of fewer
/// than two candidates, or of equal scores, gives each of its items `weight` (nothing tells
/// them apart). An id repeated inside one list counts at its first (best) score only. Ordered
/// like [`reciprocal_rank_fusion`]: score descending, then best rank, then id.
pub fn standard_score_fusion(lists: &[Scored<'_>]) -> Vec<Fused> {
    let mut acc: HashMap<i64, Fused> = HashMap::new();
    for list in lists {
        let n = list.ids.len() as f64;
        let mean = list.ids.iter().map(|x| x.1).sum::<f64>() / n.max(1.0);
        let var = list.ids.iter().map(|x| (x.1 - mean).powi(2)).sum::<f64>() / n.max(1.0);
        let dev = var.sqrt();
        let mut seen = std::collections::HashSet::with_capacity(list.ids.len());
        for (i, &(id, score)) in list.ids.iter().enumerate() {
            if !seen.insert(id) {
                continue;
            }
            let z = if dev > f64::EPSILON {
                ((score - mean) / dev).max(0.0)
            } else {
                1.0
            };
            add(&mut acc, id, i + 1, list.weight * z);
        }
    }
    into_order(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_scores_let_a_clear_winner_beat_the_head_of_a_flat_list() {
        // Dense: a near-tie, 10 first by a hair. Keyword: 30 far above the rest.
        let dense = [(10, 0.81), (20, 0.80), (30, 0.80), (40, 0.79)];
        let keyword = [(30, 12.0), (10, 2.0), (20, 1.0), (40, 1.0)];
        let lists = [
            Scored {
                ids: &dense,
                weight: 1.0,
            },
            Scored {
                ids: &keyword,
                weight: 1.0,
            },
        ];
        let fused = standard_score_fusion(&lists);
        assert_eq!(fused[0].id, 30);
        // By ranks alone 10 (1st and 2nd) beats 30 (3rd and 1st).
        let ranks = |l: &[(i64, f64)]| l.iter().map(|x| x.0).collect::<Vec<i64>>();
        let (d, k) = (ranks(&dense), ranks(&keyword));
        let rrf = reciprocal_rank_fusion(
            &[
                Ranked {
                    ids: &d,
                    weight: 1.0,
                },
                Ranked {
                    ids: &k,
                    weight: 1.0,
                },
            ],
            60.0,
        );
        assert_eq!(rrf[0].id, 10);
        // The keyword list: mean 4, deviation sqrt(((8)^2 + 2^2 + 9 + 9) / 4) = sqrt(21.5).
        let z30 = 8.0 / 21.5f64.sqrt();
        let d_mean = 0.80;
        let d_dev = (0.0001f64 * 2.0 / 4.0).sqrt();
        let want = z30 + ((0.80 - d_mean) / d_dev).max(0.0);
        assert!(
            (fused[0].score - want).abs() < 1e-6,
            "{} vs {want}",
            fused[0].score
        );
    }

    #[test]
    fn standard_scores_of_a_flat_or_single_list_are_the_weight() {
        let one = [(7, 3.0)];
        let flat = [(1, 0.5), (2, 0.5)];
        let fused = standard_score_fusion(&[
            Scored {
                ids: &one,
                weight: 2.0,
            },
            Scored {
                ids: &flat,
                weight: 1.0,
            },
        ]);
        assert_eq!(fused[0].id, 7);
        assert!((fused[0].score - 2.0).abs() < 1e-12);
        assert!((fused[1].score - 1.0).abs() < 1e-12);
        assert!(standard_score_fusion(&[]).is_empty());
    }

    #[test]
    fn fusion_matches_hand_computed_rrf() {
        // Dense: 10, 20, 30. Keyword: 30, 40, 10. k = 60, equal weights.
        // 10: 1/61 + 1/63; 30: 1/63 + 1/61; 20: 1/62; 40: 1/62.
        let dense = [10, 20, 30];
        let keyword = [30, 40, 10];
        let fused = reciprocal_rank_fusion(
            &[
                Ranked {
                    ids: &dense,
                    weight: 1.0,
                },
                Ranked {
                    ids: &keyword,
                    weight: 1.0,
                },
            ],
            60.0,
        );
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        // 10 and 30 tie on score and best rank: the lower id goes first; same for 20 and 40.
        assert_eq!(ids, [10, 30, 20, 40]);
        let expect = 1.0 / 61.0 + 1.0 / 63.0;
        assert!((fused[0].score - expect).abs() < 1e-12);
        assert!((fused[1].score - expect).abs() < 1e-12);
        assert!((fused[2].score - 1.0 / 62.0).abs() < 1e-12);
        assert_eq!(fused[0].best_rank, 1);
    }

    #[test]
    fn weights_and_k_change_the_order_as_the_formula_says() {
        let a = [1, 2];
        let b = [2, 1];
        // Weight 2 on `a`: 1 gets 2/(k+1) + 1/(k+2), 2 gets 2/(k+2) + 1/(k+1): 1 wins.
        let fused = reciprocal_rank_fusion(
            &[
                Ranked {
                    ids: &a,
                    weight: 2.0,
                },
                Ranked {
                    ids: &b,
                    weight: 1.0,
                },
            ],
            1.0,
        );
        assert_eq!(fused[0].id, 1);
        assert!((fused[0].score - (2.0 / 2.0 + 1.0 / 3.0)).abs() < 1e-12);
        assert!((fused[1].score - (2.0 / 3.0 + 1.0 / 2.0)).abs() < 1e-12);
    }

    #[test]
    fn repeated_id_counts_once_per_list() {
        let a = [5, 5, 6];
        let fused = reciprocal_rank_fusion(
            &[Ranked {
                ids: &a,
                weight: 1.0,
            }],
            60.0,
        );
        assert_eq!(fused.len(), 2);
        assert!((fused[0].score - 1.0 / 61.0).abs() < 1e-12);
        // 6 keeps its own position (3), not a compacted one.
        assert!((fused[1].score - 1.0 / 63.0).abs() < 1e-12);
    }

    #[test]
    fn empty_lists_fuse_to_nothing() {
        assert!(reciprocal_rank_fusion(&[], 60.0).is_empty());
        assert!(
            reciprocal_rank_fusion(
                &[Ranked {
                    ids: &[],
                    weight: 1.0
                }],
                60.0
            )
            .is_empty()
        );
    }
}
