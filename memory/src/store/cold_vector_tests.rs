//! Cold vectors are stored compactly yet read back as the direction they were written in, one
//! model's space at a time, so a search never mixes vectors of different models.

use rusqlite::Connection;

use super::events::floats_from_blob;
use super::test_support::{TempDir, cold_form, cold_record, event, watchdog};
use super::*;

#[test]
fn store_cold_vectors_stream_one_fingerprint_across_batches() {
    watchdog(|| {
        let dir = TempDir::new("vectors");
        let mut store = Store::open(dir.db()).expect("open");
        let records: Vec<EventRecord> = (0..1_200)
            .map(|i| {
                let fp = if i % 3 == 0 { "fp-b" } else { "fp-a" };
                EventRecord::new(event(i, "v"))
                    .with_dense(DenseVector::new(fp, vec![i as f32, -1.0]))
            })
            .chain((0..5).map(|i| EventRecord::new(event(i, "no vector"))))
            .collect();
        let ids = store.events_append(&records).expect("append");
        let moves: Vec<ColdMove> = ids
            .iter()
            .map(|&id| ColdMove {
                event_id: id,
                text: "v".into(),
                tokens: "v".into(),
            })
            .collect();
        let cold = store.move_to_cold(&moves, "prune", 1).expect("move");

        let got: Vec<(i64, Vec<f32>)> = store
            .cold_vectors("fp-a")
            .map(|row| row.map(|v| (v.id, v.values)))
            .collect::<Result<_, _>>()
            .expect("scan");
        let expected: Vec<(i64, Vec<f32>)> = (0..1_200)
            .filter(|i| i % 3 != 0)
            .map(|i| (cold[i as usize], cold_form(&[i as f32, -1.0])))
            .collect();
        assert_eq!(got.len(), 800);
        assert_eq!(got, expected);
        let first = store
            .cold_vectors("fp-a")
            .next()
            .expect("a row")
            .expect("scan");
        assert_eq!((first.timestamp_ms, first.source.as_str()), (1, "cli"));
        assert_eq!(store.cold_vectors("fp-b").count(), 400);
        assert_eq!(store.cold_vectors("fp-none").count(), 0);

        let stale = store.cold_stale_vectors("fp-a").expect("stale");
        assert_eq!(stale.len(), 405);
        let fix: Vec<(i64, DenseVector)> = stale
            .iter()
            .map(|&id| (id, DenseVector::new("fp-a", vec![0.0, 0.0])))
            .collect();
        store.cold_set_dense(&fix).expect("backfill");
        assert!(store.cold_stale_vectors("fp-a").expect("stale").is_empty());
        assert_eq!(store.cold_vectors("fp-a").count(), 1_205);
    });
}

#[test]
fn store_cold_blobs_are_quantized_and_f32_rows_still_read() {
    watchdog(|| {
        let dir = TempDir::new("compact-blob");
        let mut store = Store::open(dir.db()).expect("open");
        let values: Vec<f32> = (0..384).map(|i| ((i * 37) % 101) as f32 - 50.0).collect();
        let id = store
            .cold_insert(
                &ColdRecord {
                    dense: Some(DenseVector::new("fp-q", values.clone())),
                    ..cold_record(1, "a note")
                },
                10,
            )
            .expect("insert");
        store
            .cold_set_side_dense(&[(id, DenseVector::new("fp-side", values.clone()))])
            .expect("side");
        let conn = Connection::open(dir.db()).expect("open");
        let main: Vec<u8> = conn
            .query_row("SELECT dense FROM cold WHERE id = ?1", [id], |r| r.get(0))
            .expect("blob");
        let side: Vec<u8> = conn
            .query_row("SELECT dense FROM cold_side_vectors", [], |r| r.get(0))
            .expect("blob");
        // 8 bytes of header and one byte per component, against 1,536 as f32.
        assert_eq!((main.len(), side.len()), (392, 392));
        let read = store.cold_get(id).expect("get").expect("row");
        assert_eq!(read.dense.expect("dense").values, cold_form(&values));
        // A row written as f32 before quantization reads back exactly.
        let f32_blob: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        conn.execute(
            "UPDATE cold SET dense = ?1 WHERE id = ?2",
            rusqlite::params![f32_blob, id],
        )
        .expect("old-style row");
        let read = store.cold_get(id).expect("get").expect("row");
        assert_eq!(read.dense.expect("dense").values, values);
        // A quantized blob whose length disagrees with its width is damage, not a vector.
        let mut bad = main.clone();
        bad[4] = 200;
        conn.execute(
            "UPDATE cold SET dense = ?1 WHERE id = ?2",
            rusqlite::params![bad, id],
        )
        .expect("damaged row");
        assert!(
            store.cold_get(id).is_err(),
            "a malformed quantized blob is an error"
        );
        assert_eq!(floats_from_blob(&bad), None);
    });
}
