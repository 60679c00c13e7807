//! Recall fuses the dense and keyword rankings into scores that can be worked out by hand, scores
//! only vectors of the current model, and still answers from keywords alone when there is none.

use super::test_support::{
    ASKED, ConceptEmbedder, DAY_MS, HOUR_MS, TempDir, concept_embedder, ids_of, seeded, user,
};
use super::*;
use crate::test_support::watchdog;
use crate::{ColdRecord, ContextEvent, DenseVector, Fingerprint, Pooling};

#[test]
fn recall_fuses_dense_and_keyword_rankings_by_rrf() {
    watchdog(30, || {
        let dir = TempDir::new("fuse");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        cold.set_config(RecallConfig {
            fusion: FusionMethod::Rank,
            rrf_k: 60.0,
            // Exact fused scores: no weighing by age, every dense candidate kept.
            recency_half_life_days: 0.0,
            dense_relative_floor: 0.0,
            ..RecallConfig::default()
        });
        // "kitten" is a keyword of entry 0 only; the concept "pet" is entry 0's dense concept.
        // Dense ranking: entry 0 first, then every other (cosine equal: 0.1 · 0.1 terms), by id.
        // Keyword ranking: entry 0 only. So entry 0 scores 1/61 + 1/61.
        let hits = cold.peek("kitten", 3, ASKED).expect("peek");
        assert_eq!(hits[0].id, ids[0]);
        assert!(
            (hits[0].score - 2.0 / 61.0).abs() < 1e-9,
            "{}",
            hits[0].score
        );
        assert!(hits[0].keyword_score.is_some());
        assert!(hits[0].dense_cosine.expect("cosine") > 0.9);
        // The rest come from the dense list only, in its order: ranks 2 and 3.
        assert!((hits[1].score - 1.0 / 62.0).abs() < 1e-9);
        assert!((hits[2].score - 1.0 / 63.0).abs() < 1e-9);
        assert!(hits[1].keyword_score.is_none());
        // With the default floor the weak dense matches (cosine ~0.01 against ~0.99) are no
        // candidates at all: only the real match is left.
        cold.set_config(RecallConfig {
            fusion: FusionMethod::Rank,
            ..RecallConfig::default()
        });
        let hits = cold.peek("kitten", 3, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);
    });
}

#[test]
fn recall_by_default_counts_a_dense_match_by_how_far_it_stands_out_of_the_store() {
    watchdog(30, || {
        let dir = TempDir::new("above-chance");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        cold.set_config(RecallConfig {
            recency_half_life_days: 0.0,
            dense_relative_floor: 0.0,
            ..RecallConfig::default()
        });
        assert_eq!(cold.config().fusion, FusionMethod::AboveChance);
        let hits = cold.peek("kitten", 5, ASKED).expect("peek");
        assert_eq!(hits.len(), 5, "every candidate keeps a place");
        // The dense list's standard score is taken against all five entries' cosines, less a
        // quarter of what chance gives the best of five; the keyword list has entry 0 alone
        // (weight 1); a first place in each list adds a third of a deviation.
        let cosines: Vec<f64> = hits
            .iter()
            .map(|h| f64::from(h.dense_cosine.expect("cosine")))
            .collect();
        let mean = cosines.iter().sum::<f64>() / 5.0;
        let dev = (cosines.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / 5.0).sqrt();
        let z = (cosines[0] - mean) / dev - 0.25 * expected_best_of(5);
        let share = RANK_SHARE * 61.0;
        let want = z + 1.0 + share * 2.0 / 61.0;
        assert_eq!(hits[0].id, ids[0]);
        assert!(
            (hits[0].score - want).abs() < 1e-6,
            "{} vs {want}",
            hits[0].score
        );
        // The others stand below the store's mean: only their ranks count, in the dense
        // list's order.
        assert!(cosines[1..].windows(2).all(|w| w[0] >= w[1]), "{cosines:?}");
        for (rank, h) in hits[1..].iter().enumerate() {
            let tie = share / (60.0 + 2.0 + rank as f64);
            assert!((h.score - tie).abs() < 1e-12, "{} vs {tie}", h.score);
        }
    });
}

#[test]
fn vectors_of_another_fingerprint_are_never_scored() {
    watchdog(30, || {
        let dir = TempDir::new("fingerprint");
        let (mut cold, _) = seeded(&dir, Some(concept_embedder()));
        // An entry whose vector is exactly the query's, but from another model, and whose text
        // shares no word with the query.
        let foreign = Fingerprint::new("concepts", "ffffffffffff", 9, Pooling::Mean)
            .expect("fingerprint")
            .to_string();
        // Every dense candidate counts, however weak: the test is about which are scored.
        cold.set_config(RecallConfig {
            dense_relative_floor: 0.0,
            ..RecallConfig::default()
        });
        let query = "piano song";
        let alien = cold
            .store_mut()
            .cold_insert(
                &ColdRecord {
                    event: user(6_000, "zzz qqq"),
                    text: "zzz qqq".into(),
                    tokens: "zzz qqq".into(),
                    dense: Some(DenseVector::new(foreign, ConceptEmbedder::vector(query))),
                    archived_from: "import".into(),
                },
                10_000,
            )
            .expect("insert");
        let hits = cold.peek(query, 10, ASKED).expect("peek");
        assert_eq!(hits.len(), 5, "only the current space's entries are ranked");
        assert!(hits.iter().all(|h| h.id != alien));
        // The same entry with a vector of the current space is found first.
        let own = cold
            .store_mut()
            .cold_insert(
                &ColdRecord {
                    event: user(7_000, "yyy"),
                    text: "yyy".into(),
                    tokens: "yyy".into(),
                    dense: Some(DenseVector::new(
                        "concepts:0123456789ab:9:mean",
                        ConceptEmbedder::vector(query),
                    )),
                    archived_from: "import".into(),
                },
                10_000,
            )
            .expect("insert");
        let hits = cold.peek(query, 1, ASKED).expect("peek");
        assert_eq!(hits[0].id, own);
    });
}

#[test]
fn keyword_only_recall_works_without_a_model() {
    watchdog(30, || {
        let dir = TempDir::new("sparse");
        let (mut cold, ids) = seeded(&dir, None);
        let hits = cold
            .recall("where is the garage?", 2, 20_000)
            .expect("recall");
        assert_eq!(hits[0].id, ids[4]);
        assert!(hits[0].dense_cosine.is_none());
        let block = cold
            .auto_inject("parking garage", 10_000, 21_000)
            .expect("inject");
        assert!(block.contains("parking garage level two"), "{block}");
    });
}

/// The keyword list read from the full-text index alone (dates from the vector index) equals the
/// one read with every matching row's date from the store, including when the priors drop most
/// matches and the search has to widen.
#[test]
fn keyword_hits_from_the_index_alone_equal_the_row_reading_ones() {
    watchdog(30, || {
        // The past entries are long, so they rank below every future one: the first page of
        // matches holds only future entries and the search must widen to find the past ones.
        let filler = "with many other words about the weather the neighbours and the week";
        let events: Vec<ContextEvent> = (0..40)
            .map(|i| {
                let words = ["garden", "garden tomatoes", "garden shed paint", "tomatoes"];
                let what = words[i as usize % 4];
                let text = if i < 10 {
                    format!("{what} note {i} {filler}")
                } else {
                    format!("{what} {i}")
                };
                user(i * DAY_MS, &text)
            })
            .collect();
        // Asked on day 9: days 10..40 are the future, three quarters of the matches.
        let asked = 9 * DAY_MS + HOUR_MS;
        let config = RecallConfig {
            depth: 3,
            dense_weight: 0.0,
            exclude_future: true,
            ..RecallConfig::default()
        };
        let fast_dir = TempDir::new("keyword-fast");
        let mut fast = ColdContext::new(fast_dir.store(), Some(concept_embedder()))
            .with_config(config.clone());
        fast.archive_events(events.clone(), "import", asked)
            .expect("archive");
        let slow_dir = TempDir::new("keyword-slow");
        let mut slow = ColdContext::new(slow_dir.store(), None).with_config(config);
        slow.archive_events(events, "import", asked)
            .expect("archive");
        // "shed" is said on days 2 and 6 only, before the question.
        for (query, found) in [
            ("garden tomatoes", 3),
            ("paint the shed", 2),
            ("tomatoes", 3),
        ] {
            let got = fast.peek(query, 3, asked).expect("peek");
            let want = slow.peek(query, 3, asked).expect("peek");
            let view = |hits: &[Recalled]| -> Vec<(i64, Option<f64>)> {
                hits.iter()
                    .map(|h| (h.event.timestamp_ms, h.keyword_score))
                    .collect()
            };
            assert_eq!(view(&got), view(&want), "{query}");
            assert_eq!(got.len(), found, "{query}");
            assert!(
                got.iter().all(|h| h.event.timestamp_ms < 10 * DAY_MS),
                "{query}"
            );
        }
    });
}

/// `explain` tells where an entry stands in each list and in the fusion, as `peek` ranks it;
/// an entry no list holds stands nowhere, and nothing counts as an access.
#[test]
fn explain_places_an_entry_in_each_list_as_peek_ranks_it() {
    watchdog(30, || {
        let dir = TempDir::new("explain");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        let hits = cold.peek("kitten", 3, ASKED).expect("peek");
        let explained = cold
            .explain("kitten", ASKED, &[ids[0], -1])
            .expect("explain");
        let first = &explained[0];
        assert_eq!(first.id, ids[0]);
        assert_eq!(first.fused.map(|f| f.0), Some(1), "first, as peek has it");
        assert!((first.fused.expect("fused").1 - hits[0].score).abs() < 1e-9);
        assert_eq!(
            first.keyword.map(|k| k.0),
            Some(1),
            "the only keyword match"
        );
        assert!(first.dense.expect("dense").1 > 0.9, "{first:?}");
        assert_eq!(first.prior, Some(1.0), "no time named, the user's words");
        let unknown = &explained[1];
        assert_eq!(
            (unknown.fused, unknown.dense, unknown.keyword, unknown.prior),
            (None, None, None, None)
        );
        let entry = cold.store().cold_get(ids[0]).expect("get").expect("entry");
        assert_eq!(entry.access_count, 0, "explaining is no access");
    });
}
