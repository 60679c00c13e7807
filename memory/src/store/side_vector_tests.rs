//! A companion model's vectors live beside the main ones: one per entry and space, written
//! all-or-nothing, found missing for a back-fill, and gone with their entry.

use super::test_support::{TempDir, cold_form, cold_record, side_rows, side_values, watchdog};
use super::*;

#[test]
fn store_side_vectors_take_little_more_than_their_bytes() {
    watchdog(|| {
        const N: i64 = 64;
        const DIM: usize = 384;
        let dir = TempDir::new("side-size");
        let mut store = Store::open(dir.db()).expect("open");
        let ids: Vec<i64> = (0..N)
            .map(|n| {
                store
                    .cold_insert(&cold_record(n, &format!("entry {n}")), 1)
                    .expect("insert")
            })
            .collect();
        let updates: Vec<(i64, DenseVector)> = ids
            .iter()
            .map(|&id| (id, DenseVector::new("fp-side", vec![id as f32; DIM])))
            .collect();
        store.cold_set_side_dense(&updates).expect("side vectors");
        let file_bytes: i64 = store
            .db
            .conn
            .query_row(
                "SELECT sum(pgsize) FROM dbstat WHERE name = 'cold_side_vectors'",
                [],
                |r| r.get(0),
            )
            .expect("dbstat");
        let data = N * (DIM as i64) * 4;
        // Two vectors share a page (~1.4 times their size); one that spilled onto an overflow
        // page of its own took ~2.7 times its size.
        assert!(
            file_bytes * 2 <= data * 3,
            "{file_bytes} bytes of file for {data} bytes of vectors"
        );
    });
}

#[test]
fn store_side_dense_upserts_and_an_unknown_id_fails_the_batch() {
    watchdog(|| {
        let dir = TempDir::new("side-upsert");
        let mut store = Store::open(dir.db()).expect("open");
        let main = DenseVector::new("fp-main", vec![0.5, 0.5]);
        let a = store
            .cold_insert(
                &ColdRecord {
                    dense: Some(main.clone()),
                    ..cold_record(1, "alpha")
                },
                10,
            )
            .expect("insert");
        let b = store
            .cold_insert(&cold_record(2, "beta"), 10)
            .expect("insert");
        store
            .cold_set_side_dense(&[
                (a, DenseVector::new("fp-side", vec![1.0, 2.0, 3.0])),
                (b, DenseVector::new("fp-side", vec![4.0, 5.0, 6.0])),
            ])
            .expect("set");
        store
            .cold_set_side_dense(&[(a, DenseVector::new("fp-side", vec![7.0, 8.0, 9.0]))])
            .expect("replace");
        assert_eq!(
            side_values(&store, "fp-side"),
            [
                (a, cold_form(&[7.0, 8.0, 9.0])),
                (b, cold_form(&[4.0, 5.0, 6.0]))
            ]
        );
        assert_eq!(side_rows(&store), 2, "a replacement adds no row");
        assert_eq!(
            store.cold_get(a).expect("get").expect("some").dense,
            Some(DenseVector::new("fp-main", cold_form(&main.values))),
            "the main vector is another column, untouched"
        );

        let err = store
            .cold_set_side_dense(&[
                (a, DenseVector::new("fp-side", vec![0.0, 0.0, 0.0])),
                (b + 100, DenseVector::new("fp-side", vec![1.0, 1.0, 1.0])),
            ])
            .expect_err("unknown id");
        assert!(
            matches!(err, StoreError::Missing { id, op: "cold_set_side_dense", .. } if id == b + 100),
            "{err}"
        );
        let err = store
            .cold_set_side_dense(&[
                (b, DenseVector::new("fp-side", vec![0.0, 0.0, 0.0])),
                (a, DenseVector::new("fp-side", Vec::new())),
            ])
            .expect_err("empty vector");
        assert!(matches!(err, StoreError::Data { .. }), "{err}");
        assert_eq!(
            side_values(&store, "fp-side"),
            [
                (a, cold_form(&[7.0, 8.0, 9.0])),
                (b, cold_form(&[4.0, 5.0, 6.0]))
            ],
            "a failed batch writes nothing, not even its first rows"
        );
        assert_eq!(side_rows(&store), 2);
    });
}

#[test]
fn store_side_vectors_stream_one_fingerprint_in_id_order_across_batches() {
    watchdog(|| {
        let dir = TempDir::new("side-stream");
        let mut store = Store::open(dir.db()).expect("open");
        let mut ids = Vec::new();
        for i in 0..700 {
            let record = ColdRecord {
                // The main column holds vectors under the side fingerprint's name too: the side
                // scan must not read them, nor the main scan the side table.
                dense: (i % 7 == 0).then(|| DenseVector::new("fp-s1", vec![-1.0])),
                ..cold_record(i, "v")
            };
            ids.push(store.cold_insert(&record, 1).expect("insert"));
        }
        let s1: Vec<(i64, DenseVector)> = ids
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 != 0)
            .map(|(i, &id)| (id, DenseVector::new("fp-s1", vec![i as f32, 1.0])))
            .collect();
        let s2: Vec<(i64, DenseVector)> = ids
            .iter()
            .step_by(10)
            .map(|&id| (id, DenseVector::new("fp-s2", vec![2.0; 3])))
            .collect();
        // Written in reverse: the scan orders by id, not by insertion.
        let mut reversed = s1.clone();
        reversed.reverse();
        store.cold_set_side_dense(&reversed).expect("s1");
        store.cold_set_side_dense(&s2).expect("s2");

        let got = side_values(&store, "fp-s1");
        let expected: Vec<(i64, Vec<f32>)> = s1
            .iter()
            .map(|(id, d)| (*id, cold_form(&d.values)))
            .collect();
        assert_eq!(got.len(), 560, "more than one batch");
        assert_eq!(got, expected);
        let first = store
            .cold_side_vectors("fp-s1")
            .next()
            .expect("a row")
            .expect("scan");
        assert_eq!((first.timestamp_ms, first.source.as_str()), (1, "cli"));
        assert_eq!(store.cold_side_vectors("fp-s2").count(), 70);
        assert_eq!(store.cold_side_vectors("fp-none").count(), 0);
        assert_eq!(
            store.cold_vectors("fp-s1").count(),
            100,
            "the main scan reads the main column only"
        );
    });
}

#[test]
fn store_side_missing_lists_entries_without_a_vector_of_that_space() {
    watchdog(|| {
        let dir = TempDir::new("side-missing");
        let mut store = Store::open(dir.db()).expect("open");
        let a = store.cold_insert(&cold_record(1, "a"), 1).expect("insert");
        let b = store.cold_insert(&cold_record(2, "b"), 1).expect("insert");
        let c = store.cold_insert(&cold_record(3, "c"), 1).expect("insert");
        let empty = store.cold_insert(&cold_record(4, ""), 1).expect("insert");
        assert_eq!(store.cold_side_missing("fp-x").expect("missing"), [a, b, c]);
        store
            .cold_set_side_dense(&[
                (b, DenseVector::new("fp-x", vec![1.0])),
                (c, DenseVector::new("fp-y", vec![1.0])),
            ])
            .expect("set");
        assert_eq!(
            store.cold_side_missing("fp-x").expect("missing"),
            [a, c],
            "a vector of another space does not count"
        );
        assert_eq!(store.cold_side_missing("fp-y").expect("missing"), [a, b]);
        assert!(
            !store
                .cold_side_missing("fp-x")
                .expect("missing")
                .contains(&empty)
        );
        // A back-fill step asks past its cursor, for a few at a time.
        let next = |after, limit| store.cold_side_missing_after("fp-y", after, limit);
        assert_eq!(next(i64::MIN, 1).expect("missing"), [a]);
        assert_eq!(next(a, 5).expect("missing"), [b]);
        assert!(next(b, 5).expect("missing").is_empty());
        assert!(next(i64::MIN, 0).expect("missing").is_empty());
    });
}

#[test]
fn store_removing_a_cold_entry_removes_its_side_vectors() {
    watchdog(|| {
        let dir = TempDir::new("side-remove");
        let mut store = Store::open(dir.db()).expect("open");
        let a = store.cold_insert(&cold_record(1, "a"), 1).expect("insert");
        let b = store.cold_insert(&cold_record(2, "b"), 1).expect("insert");
        store
            .cold_set_side_dense(&[
                (a, DenseVector::new("fp-x", vec![1.0])),
                (a, DenseVector::new("fp-y", vec![2.0])),
                (b, DenseVector::new("fp-x", vec![3.0])),
            ])
            .expect("set");
        assert_eq!(side_rows(&store), 3);
        assert_eq!(store.cold_remove(&[a]).expect("remove"), 1);
        assert_eq!(side_rows(&store), 1, "no orphan of the removed entry");
        assert_eq!(side_values(&store, "fp-x"), [(b, cold_form(&[3.0]))]);
        assert_eq!(store.cold_side_vectors("fp-y").count(), 0);
        // The id is never reused, so a late write for it fails rather than resurrecting a row.
        let err = store
            .cold_set_side_dense(&[(a, DenseVector::new("fp-x", vec![1.0]))])
            .expect_err("removed entry");
        assert!(matches!(err, StoreError::Missing { .. }), "{err}");
        store.integrity_check().expect("intact");
    });
}
