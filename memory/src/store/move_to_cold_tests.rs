//! Moving events from the window to cold context keeps their original time and vector, and any
//! failure part-way leaves both tables as they were: nothing is lost or copied twice.

use super::test_support::{TempDir, cold_form, event, watchdog, window_inputs};
use super::*;

#[test]
fn store_move_to_cold_keeps_timestamp_and_vector() {
    watchdog(|| {
        let dir = TempDir::new("move");
        let mut store = Store::open(dir.db()).expect("open");
        let old = event(1_000, "北京 天气").with_response("晴");
        let dense = DenseVector::new("fp-a", vec![0.5, 0.25]);
        let a = store
            .event_append(&EventRecord::new(old.clone()).with_dense(dense.clone()))
            .expect("append");
        let b = store
            .event_append(&EventRecord::new(event(2_000, "keep me")))
            .expect("append");
        let moved = store
            .move_to_cold(
                &[ColdMove {
                    event_id: a,
                    text: "北京 天气 晴".into(),
                    tokens: "北京 天气 晴".into(),
                }],
                "prune",
                5_000,
            )
            .expect("move");
        assert_eq!(moved.len(), 1);
        assert_eq!(window_inputs(&store), ["keep me"]);
        assert!(store.event_get(b).expect("get").is_some());

        let cold = store.cold_get(moved[0]).expect("get").expect("in cold");
        assert_eq!(
            cold.event, old,
            "the archived event keeps its original timestamp"
        );
        assert_eq!(cold.event.timestamp_ms, 1_000);
        assert_eq!(
            cold.dense,
            Some(DenseVector::new("fp-a", cold_form(&dense.values)))
        );
        assert_eq!(
            (cold.access_count, cold.last_access_ms, cold.created_ms),
            (0, 5_000, 5_000)
        );
        assert_eq!(cold.archived_from, "prune");
        assert_eq!(cold.text, "北京 天气 晴");
        let hits = store.cold_fts("天气", 10).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), moved);
    });
}

#[test]
fn store_move_to_cold_unknown_or_repeated_id_moves_nothing() {
    watchdog(|| {
        let dir = TempDir::new("move-missing");
        let mut store = Store::open(dir.db()).expect("open");
        let a = store
            .event_append(&EventRecord::new(event(1, "a")))
            .expect("append");
        let mv = |id| ColdMove {
            event_id: id,
            text: "a".into(),
            tokens: "a".into(),
        };
        for moves in [vec![mv(a), mv(a + 7)], vec![mv(a), mv(a)]] {
            let err = store
                .move_to_cold(&moves, "prune", 9)
                .expect_err("must fail");
            assert!(matches!(err, StoreError::Missing { .. }), "{err}");
            assert_eq!(window_inputs(&store), ["a"]);
            assert_eq!(store.cold_count().expect("count"), 0);
            assert!(store.cold_fts("a", 5).expect("fts").is_empty());
        }
    });
}

#[test]
fn store_move_to_cold_failure_midway_moves_nothing() {
    watchdog(|| {
        let dir = TempDir::new("move-inject");
        let mut store = Store::open(dir.db()).expect("open");
        let ids = store
            .events_append(&[
                EventRecord::new(event(1, "one")),
                EventRecord::new(event(2, "two")),
                EventRecord::new(event(3, "three")),
            ])
            .expect("append");
        // Fail the second cold insert, after the first event was written to cold and deleted
        // from the window inside the transaction.
        store
            .db
            .conn
            .execute_batch(
                "CREATE TEMP TRIGGER fail_second BEFORE INSERT ON main.cold \
                 WHEN (SELECT count(*) FROM main.cold) >= 1 \
                 BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
            )
            .expect("trigger");
        let moves: Vec<ColdMove> = ids
            .iter()
            .map(|&id| ColdMove {
                event_id: id,
                text: "t".into(),
                tokens: "t".into(),
            })
            .collect();
        let err = store
            .move_to_cold(&moves, "prune", 10)
            .expect_err("injected");
        assert!(err.to_string().contains("injected failure"), "{err}");
        assert_eq!(window_inputs(&store), ["one", "two", "three"]);
        assert_eq!(store.cold_count().expect("count"), 0);

        store
            .db
            .conn
            .execute_batch("DROP TRIGGER temp.fail_second")
            .expect("drop trigger");
        let cold = store.move_to_cold(&moves, "prune", 10).expect("move");
        assert_eq!(cold.len(), 3);
        assert!(window_inputs(&store).is_empty());
        assert_eq!(store.cold_count().expect("count"), 3);
    });
}
