//! The working window's events come back exactly as written and in time order, and a batch
//! write either lands whole or not at all.

use proptest::prelude::*;

use super::events::floats_from_blob;
use super::test_support::{TempDir, event, watchdog, window_inputs};
use super::*;
use crate::ToolOutput;

#[test]
fn store_events_round_trip_in_time_order() {
    watchdog(|| {
        let dir = TempDir::new("events");
        let mut store = Store::open(dir.db()).expect("open");
        let mut first = event(100, "first").with_response("answer");
        first.id = "evt-1".into();
        first.tools_used = vec!["search".into()];
        first.tool_results = vec![ToolOutput {
            name: "search".into(),
            output: "found".into(),
        }];
        let rec = EventRecord::new(first.clone())
            .with_dense(DenseVector::new("fp-a", vec![1.0, -0.5, f32::MIN_POSITIVE]))
            .with_sparse(r#"{"3":0.5}"#);
        // Input, response and tool output, each by the estimate.
        assert_eq!(rec.tokens, (2 + 2 + 2) as u64);
        let id1 = store.event_append(&rec).expect("append");
        let ids = store
            .events_append(&[
                EventRecord::new(event(300, "third")),
                EventRecord::new(event(50, "older, recalled")),
                EventRecord::new(event(100, "tie after first")),
            ])
            .expect("append many");
        assert_eq!(ids.len(), 3);
        assert!(ids.iter().all(|&id| id > id1), "ids grow");

        assert_eq!(
            window_inputs(&store),
            ["older, recalled", "first", "tie after first", "third"]
        );
        let got = store.event_get(id1).expect("get").expect("present");
        assert_eq!(got.record, rec, "every field comes back as written");
        assert_eq!(store.event_get(9999).expect("get"), None);

        // The vector is stored as little-endian f32 bytes, nothing else.
        let blob: Vec<u8> = store
            .db
            .conn
            .query_row("SELECT dense FROM events WHERE id = ?1", [id1], |r| {
                r.get(0)
            })
            .expect("blob");
        let mut expected = Vec::new();
        for v in [1.0f32, -0.5, f32::MIN_POSITIVE] {
            expected.extend_from_slice(&v.to_le_bytes());
        }
        assert_eq!(blob, expected);

        let stats = store.events_stats().expect("stats");
        let sum: u64 = store
            .events_window()
            .expect("window")
            .iter()
            .map(|e| e.record.tokens)
            .sum();
        assert_eq!(
            stats,
            WindowStats {
                events: 4,
                tokens: sum
            }
        );
    });
}

#[test]
fn store_events_append_many_is_all_or_nothing() {
    watchdog(|| {
        let dir = TempDir::new("events-atomic");
        let mut store = Store::open(dir.db()).expect("open");
        let err = store
            .events_append(&[
                EventRecord::new(event(1, "a")),
                EventRecord::new(event(2, "b")).with_sparse("{not json"),
                EventRecord::new(event(3, "c")),
            ])
            .expect_err("invalid sparse JSON is refused");
        assert_eq!(err.op(), "events_append");
        assert!(store.events_window().expect("window").is_empty());
    });
}

#[test]
fn store_events_set_dense_replaces_and_unknown_id_fails_batch() {
    watchdog(|| {
        let dir = TempDir::new("events-dense");
        let mut store = Store::open(dir.db()).expect("open");
        let id = store
            .event_append(&EventRecord::new(event(1, "a")))
            .expect("append");
        let new = DenseVector::new("fp-b", vec![0.25; 4]);
        let err = store
            .events_set_dense(&[(id, new.clone()), (id + 100, new.clone())])
            .expect_err("unknown id");
        assert!(matches!(err, StoreError::Missing { id: bad, .. } if bad == id + 100));
        assert_eq!(
            store
                .event_get(id)
                .expect("get")
                .expect("some")
                .record
                .dense,
            None
        );
        store.events_set_dense(&[(id, new.clone())]).expect("set");
        assert_eq!(
            store
                .event_get(id)
                .expect("get")
                .expect("some")
                .record
                .dense,
            Some(new)
        );
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn store_dense_blob_round_trips_bit_exact(bits in proptest::collection::vec(any::<u32>(), 0..64)) {
        let values: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
        let blob = DenseVector::new("fp", values).to_blob();
        prop_assert_eq!(blob.len(), bits.len() * 4);
        let back = floats_from_blob(&blob).expect("multiple of 4");
        prop_assert_eq!(back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), bits);
        if !blob.is_empty() {
            prop_assert!(floats_from_blob(&blob[1..]).is_none());
        }
    }
}
