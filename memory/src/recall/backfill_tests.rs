//! Vectors a model did not give at archive time are given in idle time: entries archived with
//! no model, with a model since replaced, or while it failed are found by meaning afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::test_support::{
    ASKED, COMPANION_FP, CompanionMode, ConceptEmbedder, Flaky, TempDir, companion,
    concept_embedder, ids_of, seed_events, side_count, user,
};
use super::*;
use crate::Embedder;
use crate::test_support::watchdog;

/// By meaning only: no word in common with the kitten entry, which the test model puts in the
/// same concept.
const PET_QUERY: &str = "a pet cat";

/// The main model's fingerprint in these tests.
fn main_fp() -> String {
    concept_embedder().fingerprint().to_string()
}

fn stale(cold: &ColdContext) -> Vec<i64> {
    cold.store().cold_stale_vectors(&main_fp()).expect("stale")
}

/// Checks that `PET_QUERY` finds the kitten entry by its vector, as a user's question would.
fn found_by_meaning(cold: &mut ColdContext, kitten: i64) {
    let hits = cold.peek(PET_QUERY, 3, ASKED).expect("peek");
    assert_eq!(ids_of(&hits).first(), Some(&kitten), "{hits:?}");
    assert!(hits[0].dense_cosine.expect("a main cosine") > 0.9);
}

#[test]
fn entries_archived_without_a_model_are_embedded_in_idle_time() {
    watchdog(30, || {
        let dir = TempDir::new("backfill-no-model");
        let mut before = ColdContext::new(dir.store(), None);
        let ids = before
            .archive_events(seed_events(), "import", 10_000)
            .expect("archive");
        let mut cold = ColdContext::new(before.into_store(), Some(concept_embedder()));
        assert_eq!(stale(&cold), ids);
        assert!(
            cold.peek(PET_QUERY, 3, ASKED).expect("peek").is_empty(),
            "neither keywords nor a vector find it yet"
        );

        assert_eq!(
            cold.backfill_main(2).expect("backfill"),
            2,
            "at most the limit"
        );
        assert_eq!(stale(&cold), ids[2..], "oldest first");
        assert_eq!(cold.backfill_main(100).expect("backfill"), 3);
        assert_eq!(cold.backfill_main(100).expect("backfill"), 0);
        assert!(stale(&cold).is_empty());
        // The loaded index took the new vectors in.
        found_by_meaning(&mut cold, ids[0]);
        // And so does a fresh load from the store.
        let mut reopened = ColdContext::new(cold.into_store(), Some(concept_embedder()));
        found_by_meaning(&mut reopened, ids[0]);
    });
}

#[test]
fn entries_embedded_by_a_replaced_model_are_embedded_again() {
    watchdog(30, || {
        let dir = TempDir::new("backfill-replaced");
        let old: Arc<dyn Embedder> = Arc::new(ConceptEmbedder::new("aaaaaaaaaaaa"));
        let mut before = ColdContext::new(dir.store(), Some(old));
        let ids = before
            .archive_events(seed_events(), "import", 10_000)
            .expect("archive");
        let mut cold = ColdContext::new(before.into_store(), Some(concept_embedder()));
        assert_eq!(stale(&cold), ids, "vectors of another model never count");
        let hits = cold.peek(PET_QUERY, 3, ASKED).expect("peek");
        assert!(hits.is_empty(), "{hits:?}");

        assert_eq!(cold.backfill(100).expect("backfill"), ids.len());
        assert!(stale(&cold).is_empty());
        found_by_meaning(&mut cold, ids[0]);
    });
}

#[test]
fn entries_archived_while_the_model_failed_are_caught_up_after_the_cursor_moved_on() {
    watchdog(30, || {
        let dir = TempDir::new("backfill-failed");
        let up = Arc::new(AtomicBool::new(true));
        let flaky = Flaky::new(&up);
        let fp = flaky.fingerprint.to_string();
        let mut cold = ColdContext::new(dir.store(), Some(Arc::new(flaky)));
        let ids = cold
            .archive_events(seed_events(), "import", 10_000)
            .expect("archive");
        // Nothing to fill: the cursor moves to the end.
        assert_eq!(cold.backfill_main(100).expect("backfill"), 0);

        up.store(false, Ordering::SeqCst);
        let late = cold
            .archive_events(
                vec![user(6_000, "my kitten chased a moth")],
                "prune",
                11_000,
            )
            .expect("archive")[0];
        assert_eq!(cold.store().cold_stale_vectors(&fp).expect("stale"), [late]);
        assert_eq!(
            cold.backfill_main(100).expect("backfill"),
            0,
            "still down: nothing stored, said by the count"
        );
        up.store(true, Ordering::SeqCst);
        assert_eq!(cold.backfill_main(100).expect("backfill"), 1);
        assert!(
            cold.store()
                .cold_stale_vectors(&fp)
                .expect("stale")
                .is_empty()
        );
        let hits = cold.peek("moth", 1, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [late]);
        assert!(hits[0].dense_cosine.is_some());
        assert!(late > ids[4]);
    });
}

#[test]
fn the_main_model_is_filled_before_the_companion() {
    watchdog(30, || {
        let dir = TempDir::new("backfill-order");
        let mut before = ColdContext::new(dir.store(), None);
        let ids = before
            .archive_events(seed_events(), "import", 10_000)
            .expect("archive");
        let mut cold = ColdContext::new(before.into_store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        assert_eq!(cold.backfill(3).expect("backfill"), 3);
        assert_eq!(stale(&cold), ids[3..]);
        assert_eq!(side_count(&cold), 0);
        assert_eq!(cold.backfill(3).expect("backfill"), 2);
        assert!(stale(&cold).is_empty());
        assert_eq!(side_count(&cold), 0);
        assert_eq!(cold.backfill(3).expect("backfill"), 3, "then the companion");
        assert_eq!(cold.backfill(3).expect("backfill"), 2);
        assert_eq!(cold.backfill(3).expect("backfill"), 0);
        assert_eq!(side_count(&cold), ids.len());
        assert!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing")
                .is_empty()
        );
    });
}
