//! A companion model's space adds to recall what only it knows without changing the main model's
//! scores, and its failure, deferral or late arrival never costs an archived entry its place.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::test_support::{
    ASKED, COMPANION_FP, CompanionEmbedder, CompanionMode, ConceptEmbedder, FIDDLE,
    INSTRUMENT_QUERY, TempDir, companion, concept_embedder, ids_of, seed_events, side_count,
    stored_form, user, with_fiddle,
};
use super::*;
use crate::test_support::watchdog;
use crate::{ColdVector, DenseVector};

#[test]
fn the_companion_finds_what_only_its_space_knows() {
    watchdog(30, || {
        let without_dir = TempDir::new("companion-off");
        let mut without = ColdContext::new(without_dir.store(), Some(concept_embedder()));
        let ids = with_fiddle(&mut without);
        let fiddle = ids[5];
        let alone = without.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(
            ids_of(&alone),
            [ids[0]],
            "neither keywords nor the main model"
        );

        let dir = TempDir::new("companion-on");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        assert_eq!(cold.companion_fingerprint(), Some(COMPANION_FP));
        let ids = with_fiddle(&mut cold);
        assert_eq!(ids[5], fiddle);
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        // Kitten: first in the main and keyword lists; fiddle: first in the companion's, which
        // it reaches only through the query's own embedding ("instrument").
        assert_eq!(ids_of(&hits)[..2], [ids[0], fiddle]);
        assert!(hits[1].keyword_score.is_none());

        // Weight 0: the companion counts for nothing, and recall is what it was without it.
        cold.set_config(RecallConfig {
            companion_weight: 0.0,
            ..RecallConfig::default()
        });
        let muted = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&muted), ids_of(&alone));
    });
}

#[test]
fn recalled_dense_cosine_is_the_main_model_s() {
    watchdog(30, || {
        let dir = TempDir::new("companion-cosine");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        let ids = with_fiddle(&mut cold);
        let hits = cold.peek(INSTRUMENT_QUERY, 2, ASKED).expect("peek");
        let fiddle = hits.iter().find(|h| h.id == ids[5]).expect("fiddle found");
        let main = crate::simd::Kernel::best().dot(
            &ConceptEmbedder::vector(INSTRUMENT_QUERY),
            &ConceptEmbedder::vector(FIDDLE),
        );
        let side = crate::simd::Kernel::best().dot(
            &CompanionEmbedder::vector(INSTRUMENT_QUERY, true),
            &CompanionEmbedder::vector(FIDDLE, false),
        );
        assert!(side > 0.99 && main < 0.05, "main {main}, companion {side}");
        let cosine = fiddle.dense_cosine.expect("the fiddle has a main vector");
        // Scored against the stored (quantized) vector, as every cold search is.
        let stored = crate::simd::Kernel::best().dot(
            &ConceptEmbedder::vector(INSTRUMENT_QUERY),
            &stored_form(&ConceptEmbedder::vector(FIDDLE)),
        );
        assert!(
            (cosine - stored).abs() < 1e-5 && (cosine - main).abs() < 0.01,
            "{cosine} is not the main {main} (stored form {stored})"
        );
    });
}

#[test]
fn archive_writes_a_companion_vector_for_every_entry_with_text() {
    watchdog(30, || {
        let dir = TempDir::new("companion-archive");
        let model = Arc::new(CompanionEmbedder::new(CompanionMode::Working));
        let mut cold =
            ColdContext::new(dir.store(), Some(concept_embedder())).with_companion(model.clone());
        let mut events = seed_events();
        events.extend((0..70).map(|i| user(6_000 + i, &format!("note {i} on the couch"))));
        events.push(user(7_000, ""));
        let ids = cold
            .archive_events(events, "import", 10_000)
            .expect("archive");
        assert_eq!(ids.len(), 76);
        let store = cold.store();
        let side: Vec<ColdVector> = store
            .cold_side_vectors(COMPANION_FP)
            .collect::<Result<_, _>>()
            .expect("scan");
        assert_eq!(side.len(), 75, "every entry but the one with no text");
        assert!(side.iter().all(|v| v.id != ids[75]));
        for v in &side {
            let text = store.cold_get(v.id).expect("get").expect("present").text;
            let want = CompanionEmbedder::vector(&text, false);
            // Renormalised after embedding, then quantized: the same direction up to rounding.
            assert_eq!(v.values.len(), want.len());
            let cosine = crate::simd::dot(&v.values, &stored_form(&want));
            assert!(
                cosine > 0.9999,
                "{text}: cosine {cosine} to the model's vector"
            );
        }
        assert!(
            store
                .cold_side_missing(COMPANION_FP)
                .expect("missing")
                .is_empty()
        );
        assert!(
            model.largest_batch.load(Ordering::Relaxed) <= EMBED_BATCH,
            "embedded in batches of at most {EMBED_BATCH}"
        );
        // The main space is where it was.
        assert_eq!(
            store.cold_vectors("concepts:0123456789ab:9:mean").count(),
            75
        );
        // Nothing to fill in.
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 0);
    });
}

#[test]
fn a_failing_companion_leaves_the_archive_and_recall_intact() {
    watchdog(30, || {
        let dir = TempDir::new("companion-fail");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Failing));
        let ids = with_fiddle(&mut cold);
        assert_eq!(ids.len(), 6);
        assert_eq!(cold.store().cold_count().expect("count"), 6);
        assert!(cold.store().events_window().expect("window").is_empty());
        assert_eq!(side_count(&cold), 0);
        assert_eq!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing"),
            ids,
            "left for a back-fill"
        );
        // Keywords and the main model still rank.
        let hits = cold.recall("pizza", 1, ASKED).expect("recall");
        assert_eq!(ids_of(&hits), [ids[2]]);
        let hits = cold.peek("my pet cat", 1, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);
        assert!(hits[0].dense_cosine.expect("main cosine") > 0.9);
        assert_eq!(
            ids_of(&cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek")),
            [ids[0]]
        );
        // A back-fill with the model still down does nothing, and says so by its count.
        assert_eq!(cold.backfill_companion(10).expect("backfill"), 0);
        assert_eq!(side_count(&cold), 0);
    });
}

#[test]
fn backfill_companion_catches_up_entries_archived_before_it() {
    watchdog(30, || {
        let dir = TempDir::new("companion-backfill");
        let mut before = ColdContext::new(dir.store(), Some(concept_embedder()));
        let ids = with_fiddle(&mut before);
        let store = before.into_store();
        let mut cold = ColdContext::new(store, Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        // The companion's index loads empty: nothing found through it yet.
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);

        assert_eq!(cold.backfill_companion(4).expect("backfill"), 4);
        assert_eq!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing"),
            ids[4..],
            "oldest first, at most the limit"
        );
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 2);
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 0);
        assert_eq!(side_count(&cold), 6);
        // The loaded index took the new vectors in: the fiddle is found now.
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits)[..2], [ids[0], ids[5]]);
    });
}

#[test]
fn a_deferred_companion_leaves_archived_entries_to_the_backfill() {
    watchdog(30, || {
        let dir = TempDir::new("companion-deferred");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working))
            .defer_companion();
        let ids = with_fiddle(&mut cold);
        assert_eq!(side_count(&cold), 0, "archive embedded for the companion");
        assert_eq!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing"),
            ids
        );
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);

        assert_eq!(cold.backfill_companion(100).expect("backfill"), ids.len());
        assert_eq!(side_count(&cold), ids.len());
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits)[..2], [ids[0], ids[5]]);
    });
}

#[test]
fn a_reopened_store_reloads_the_companion_index() {
    watchdog(30, || {
        let dir = TempDir::new("companion-reopen");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        let ids = with_fiddle(&mut cold);
        drop(cold);

        // Passages fail now: every companion vector ranked below was read from the store.
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::QueriesOnly));
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits)[..2], [ids[0], ids[5]]);

        // A write through `store_mut` reloads the companion's index too: the fiddle's vector
        // moved to the sofa concept, so the query no longer finds it first.
        cold.store_mut()
            .cold_set_side_dense(&[(
                ids[5],
                DenseVector::new(COMPANION_FP, CompanionEmbedder::vector("sofa", false)),
            )])
            .expect("rewrite");
        let hits = cold.peek(INSTRUMENT_QUERY, 2, ASKED).expect("peek");
        assert_eq!(hits[0].id, ids[0]);
        assert_ne!(hits[1].id, ids[5]);
    });
}
