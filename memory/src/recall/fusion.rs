//! Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each ranked list gives an
//! item `weight / (k + rank)` (rank from 1), and the sums are the fused ranking. It needs no
//! score calibration, which is the point: BM25 scores and cosines live on unrelated scales and
//! must never be added or compared directly.
//!
//! What ranks throw away is how sure a list is. Over one person's long history a dense model
//! finds every turn of a conversation about the same topic about equally close, so its first
//! rank is a near-tie with its fiftieth; a keyword list that matched a rare name has a first
//! rank far above the rest. [`standard_score_fusion`] keeps that: each list's scores become
//! standard scores (how many deviations above the mean), so scales still never meet, but a
//! clear winner counts more than the head of a flat list.
//!
//! A dense list also ranks every entry of the store, and the best of ten thousand near-ties
//! stands about four deviations above their mean by chance alone. Rank fusion gives that head
//! a full vote, and two dense models that share a blind spot then outvote the keyword list that
//! saw the rare word (a conversation about the same topic, months of casual talk). When a list's
//! scores over the whole store are known ([`Population`]), its standard scores are taken against
//! them and lowered by a share of what chance gives the best of that many
//! ([`expected_best_of`]): a dense list counts by how far its matches stand out of the store, not
//! by where they sit in its own order. [`above_chance_fusion`] is that, with a share of rank
//! fusion beside it, which orders the candidates no list lifts above chance.

use std::collections::HashMap;

/// The constant of the original paper: large enough that the head of one list does not drown
/// an item ranked well by every list.
pub const DEFAULT_RRF_K: f64 = 60.0;

/// How recall fuses its lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FusionMethod {
    /// [`reciprocal_rank_fusion`].
    Rank,
    /// [`standard_score_fusion`] of each list against its own candidates.
    StandardScore,
    /// [`above_chance_fusion`]: dense lists against the whole store's cosines less the chance
    /// margin, the keyword list against its matches, rank fusion as the tie-break.
    #[default]
    AboveChance,
}

impl FusionMethod {
    /// Every method, the default first.
    pub const ALL: [FusionMethod; 3] = [
        FusionMethod::AboveChance,
        FusionMethod::StandardScore,
        FusionMethod::Rank,
    ];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            FusionMethod::Rank => "rank",
            FusionMethod::StandardScore => "standard",
            FusionMethod::AboveChance => "above-chance",
        }
    }
}

impl std::str::FromStr for FusionMethod {
    type Err = crate::OptionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FusionMethod::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| crate::OptionError::new("fusion", s, "above-chance, standard, rank"))
    }
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
        add_ranks(&mut acc, list.ids.iter().copied(), list.weight, k);
    }
    into_order(acc)
}

/// Adds to `acc` the reciprocal-rank share `weight / (k + rank)` of each id of one list (best
/// first); an id repeated in the list counts at its first rank only.
fn add_ranks(
    acc: &mut HashMap<i64, Fused>,
    ids: impl ExactSizeIterator<Item = i64>,
    weight: f64,
    k: f64,
) {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    for (i, id) in ids.enumerate() {
        if !seen.insert(id) {
            continue;
        }
        let rank = i + 1;
        add(acc, id, rank, weight / (k + rank as f64));
    }
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

/// The scores a list's candidates were drawn from: the whole store's, for a dense list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Population {
    /// Their mean.
    pub mean: f64,
    /// Their (population) standard deviation.
    pub std_dev: f64,
    /// How many there were.
    pub count: usize,
}

/// One scored list (best first): ids with their scores in the list's own scale, and how much
/// it counts.
#[derive(Clone, Copy, Debug)]
pub struct Scored<'a> {
    /// `(id, score)` pairs, best first.
    pub ids: &'a [(i64, f64)],
    /// Multiplier of every contribution this list makes.
    pub weight: f64,
    /// The scores the list was drawn from, when known: its standard scores are then taken
    /// against them, less the chance margin. `None`: against its own candidates, no margin.
    pub population: Option<Population>,
}

/// Roughly how many deviations the best of `n` draws of noise stands above their mean:
/// `sqrt(2 ln n)` (3.0 for a hundred, 4.3 for ten thousand, 0 for one).
pub fn expected_best_of(n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    (2.0 * (n as f64).ln()).sqrt()
}

/// Fewest scores a standard score is taken over: of two scores, one is +1 and the other −1
/// deviations whatever they are.
pub const MIN_STANDARD_SAMPLE: usize = 3;

/// Fuses `lists` by standard score: an item gets, from each list that holds it,
/// `weight × max(0, z)`. Without a population, `z = (score − mean) / deviation` over that list's
/// candidates; with one, over the population, less `chance_margin × expected_best_of(count)`. A
/// list whose scores cannot tell its items apart (fewer than [`MIN_STANDARD_SAMPLE`] of them,
/// equal scores, no deviation) gives each of its items `weight`. An id repeated inside one list
/// counts at its first (best) score only. Ordered like [`reciprocal_rank_fusion`]: score
/// descending, then best rank, then id.
pub fn standard_score_fusion(lists: &[Scored<'_>], chance_margin: f64) -> Vec<Fused> {
    let mut acc: HashMap<i64, Fused> = HashMap::new();
    add_standard_scores(&mut acc, lists, chance_margin);
    into_order(acc)
}

/// The accumulation behind [`standard_score_fusion`].
fn add_standard_scores(acc: &mut HashMap<i64, Fused>, lists: &[Scored<'_>], chance_margin: f64) {
    for list in lists {
        let (mean, dev, margin) = match list.population {
            Some(p) => (p.mean, p.std_dev, chance_margin * expected_best_of(p.count)),
            None => {
                let n = list.ids.len() as f64;
                let mean = list.ids.iter().map(|x| x.1).sum::<f64>() / n.max(1.0);
                let var = list.ids.iter().map(|x| (x.1 - mean).powi(2)).sum::<f64>() / n.max(1.0);
                (mean, var.sqrt(), 0.0)
            }
        };
        let sample = list.population.map_or(list.ids.len(), |p| p.count);
        let spread = dev > f64::EPSILON && sample >= MIN_STANDARD_SAMPLE;
        let mut seen = std::collections::HashSet::with_capacity(list.ids.len());
        for (i, &(id, score)) in list.ids.iter().enumerate() {
            if !seen.insert(id) {
                continue;
            }
            let z = if spread {
                ((score - mean) / dev - margin).max(0.0)
            } else {
                1.0
            };
            add(acc, id, i + 1, list.weight * z);
        }
    }
}

/// [`reciprocal_rank_fusion`] of scored lists, by their order alone.
pub fn rank_fusion_of_scored(lists: &[Scored<'_>], k: f64) -> Vec<Fused> {
    let mut acc: HashMap<i64, Fused> = HashMap::new();
    for list in lists {
        add_ranks(&mut acc, list.ids.iter().map(|x| x.0), list.weight, k);
    }
    into_order(acc)
}

/// What a first place in one list adds in [`above_chance_fusion`], in deviations.
pub const RANK_SHARE: f64 = 1.0 / 3.0;

/// [`standard_score_fusion`] with `chance_margin`, plus [`reciprocal_rank_fusion`] of the same
/// lists at `rrf_k` scaled so a first place in one list adds [`RANK_SHARE`] of a deviation.
/// Every candidate keeps a place (a small store's entries that no list lifts above chance are
/// still returned, in rank-fused order), a match several lists agree on keeps some of the
/// credit ranks give it, and a standard score far above chance still decides.
pub fn above_chance_fusion(lists: &[Scored<'_>], chance_margin: f64, rrf_k: f64) -> Vec<Fused> {
    let mut acc: HashMap<i64, Fused> = HashMap::new();
    add_standard_scores(&mut acc, lists, chance_margin);
    // Scaled so a first place (`weight / (k + 1)`) adds `RANK_SHARE × weight`.
    let scale = RANK_SHARE * (rrf_k + 1.0);
    for list in lists {
        add_ranks(
            &mut acc,
            list.ids.iter().map(|x| x.0),
            scale * list.weight,
            rrf_k,
        );
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
                population: None,
            },
            Scored {
                ids: &keyword,
                weight: 1.0,
                population: None,
            },
        ];
        let fused = standard_score_fusion(&lists, 0.0);
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
    fn two_scores_are_too_few_for_a_standard_score() {
        // Of two matches the second would be −1 deviation, and count nothing, however close.
        let two = [(1, 3.8), (2, 2.9)];
        let three = [(1, 3.8), (2, 2.9), (3, 0.1)];
        let fuse = |ids| {
            standard_score_fusion(
                &[Scored {
                    ids,
                    weight: 1.0,
                    population: None,
                }],
                0.0,
            )
        };
        assert!(fuse(&two).iter().all(|f| f.score == 1.0));
        let scores: Vec<f64> = fuse(&three).iter().map(|f| f.score).collect();
        assert!(
            scores[0] > scores[1] && scores[1] > 0.0 && scores[2] == 0.0,
            "{scores:?}"
        );
    }

    #[test]
    fn standard_scores_of_a_flat_or_single_list_are_the_weight() {
        let one = [(7, 3.0)];
        let flat = [(1, 0.5), (2, 0.5)];
        let fused = standard_score_fusion(
            &[
                Scored {
                    ids: &one,
                    weight: 2.0,
                    population: None,
                },
                Scored {
                    ids: &flat,
                    weight: 1.0,
                    population: None,
                },
            ],
            0.0,
        );
        assert_eq!(fused[0].id, 7);
        assert!((fused[0].score - 2.0).abs() < 1e-12);
        assert!((fused[1].score - 1.0).abs() < 1e-12);
        assert!(standard_score_fusion(&[], 0.25).is_empty());
    }

    /// Scores `(id, mean + z × dev)` for the given standard scores.
    fn at_z(mean: f64, dev: f64, zs: &[(i64, f64)]) -> Vec<(i64, f64)> {
        zs.iter().map(|&(id, z)| (id, mean + z * dev)).collect()
    }

    #[test]
    fn the_best_of_n_by_chance_grows_like_the_root_of_twice_its_log() {
        assert_eq!(expected_best_of(0), 0.0);
        assert_eq!(expected_best_of(1), 0.0);
        assert!((expected_best_of(100) - 3.035).abs() < 1e-3);
        assert!((expected_best_of(10_000) - 4.292).abs() < 1e-3);
    }

    #[test]
    fn a_dense_head_at_chance_level_gives_way_to_a_keyword_winner() {
        // Two dense lists over 10,000 entries agree on 1 at 4 deviations: about what the best
        // of 10,000 reaches by chance (4.29). The keyword list has 2 far ahead of its matches.
        let population = Some(Population {
            mean: 0.5,
            std_dev: 0.05,
            count: 10_000,
        });
        let dense = at_z(0.5, 0.05, &[(1, 4.0), (3, 3.0), (4, 2.0)]);
        let keyword = [(2, 9.0), (5, 1.0), (6, 1.0), (7, 1.0)];
        let lists = |population| {
            [
                Scored {
                    ids: &dense,
                    weight: 1.0,
                    population,
                },
                Scored {
                    ids: &dense,
                    weight: 1.0,
                    population,
                },
                Scored {
                    ids: &keyword,
                    weight: 1.0,
                    population: None,
                },
            ]
        };
        // Without a margin the two agreeing heads outvote the keyword winner (8 against
        // 1.73); the same happens under rank fusion.
        assert_eq!(standard_score_fusion(&lists(population), 0.0)[0].id, 1);
        // Less a whole chance's worth, the dense heads count for nothing.
        let fused = standard_score_fusion(&lists(population), 1.0);
        assert_eq!(fused[0].id, 2);
        let head = fused.iter().find(|f| f.id == 1).expect("kept");
        assert_eq!(head.score, 0.0);
        // A quarter of it: 2 × (4 − 1.07) = 5.85.
        let fused = standard_score_fusion(&lists(population), 0.25);
        let want = 2.0 * (4.0 - 0.25 * expected_best_of(10_000));
        assert!((fused[0].score - want).abs() < 1e-9, "{fused:?}");
        // Against its own three candidates instead, the margin does not apply.
        assert_eq!(standard_score_fusion(&lists(None), 1.0)[0].id, 1);
    }

    #[test]
    fn above_chance_fusion_returns_every_candidate_and_ranks_the_rest_by_rank_fusion() {
        let population = Some(Population {
            mean: 0.5,
            std_dev: 0.1,
            count: 50,
        });
        // Nobody stands out of the population: every standard score is under the margin.
        let dense = at_z(0.5, 0.1, &[(10, 1.0), (20, 0.5), (30, 0.0)]);
        let other = at_z(0.5, 0.1, &[(20, 1.0), (30, 0.5), (40, -1.0)]);
        let lists = [
            Scored {
                ids: &dense,
                weight: 1.0,
                population,
            },
            Scored {
                ids: &other,
                weight: 1.0,
                population,
            },
        ];
        let fused = above_chance_fusion(&lists, 1.0, 60.0);
        let ids: Vec<i64> = fused.iter().map(|f| f.id).collect();
        // Rank fusion: 20 (2nd and 1st), 30 (3rd and 2nd), 10 (1st), 40 (3rd).
        assert_eq!(ids, [20, 30, 10, 40]);
        // A first place is worth a third of a deviation.
        let share = RANK_SHARE * 61.0;
        assert!((fused[0].score - share * (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!((fused[2].score - share / 61.0).abs() < 1e-12);
        // One that does stand out leads whatever the ranks say.
        let strong = at_z(0.5, 0.1, &[(40, 6.0)]);
        let with_strong = [
            lists[0],
            lists[1],
            Scored {
                ids: &strong,
                weight: 1.0,
                population,
            },
        ];
        assert_eq!(above_chance_fusion(&with_strong, 1.0, 60.0)[0].id, 40);
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
