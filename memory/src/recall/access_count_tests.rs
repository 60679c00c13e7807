//! Recall is a read that counts: it deletes nothing, a peek counts nothing, and the counts decide
//! which idle entries become distillation candidates.

use super::test_support::{ASKED, HOUR_MS, TempDir, concept_embedder, seeded};
use crate::test_support::watchdog;

#[test]
fn recall_is_non_destructive_and_counts_accesses() {
    watchdog(30, || {
        let dir = TempDir::new("touch");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        let before = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("present");
        assert_eq!(before.access_count, 0);
        let hits = cold.recall("pizza", 1, 20_000).expect("recall");
        assert_eq!(hits[0].id, ids[2]);
        cold.recall("pizza dinner", 1, 30_000).expect("recall");
        let after = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("present");
        assert_eq!(after.access_count, 2);
        assert_eq!(after.last_access_ms, 30_000);
        assert_eq!(cold.store().cold_count().expect("count"), 5);
        // Peeking counts nothing.
        cold.peek("pizza", 1, ASKED).expect("peek");
        let peeked = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("present");
        assert_eq!(peeked.access_count, 2);
    });
}

#[test]
fn find_cold_is_72h_idle_and_at_most_two_accesses() {
    watchdog(30, || {
        let dir = TempDir::new("find-cold");
        let (mut cold, ids) = seeded(&dir, None);
        let archived_at = 10_000;
        assert!(
            cold.find_cold(archived_at + 72 * HOUR_MS)
                .expect("find")
                .is_empty()
        );
        let all = cold
            .find_cold(archived_at + 72 * HOUR_MS + 1)
            .expect("find");
        assert_eq!(all.len(), 5);
        // Three recalls of the pizza entry: no longer a distillation candidate.
        for t in 1..=3 {
            cold.recall("pizza", 1, archived_at + t).expect("recall");
        }
        let left = cold.find_cold(archived_at + 80 * HOUR_MS).expect("find");
        assert_eq!(left.len(), 4);
        assert!(!left.contains(&ids[2]));
    });
}
