//! Helpers shared by the store's unit tests: each test runs under a watchdog and in its own
//! directory, and reads rows back the way the assertions compare them.

use super::*;
use crate::ContextEvent;

const LIMIT_SECS: u64 = 30;

/// Every store test runs under the crate's watchdog with one limit.
pub(super) fn watchdog<F: FnOnce() + Send + 'static>(body: F) {
    crate::test_support::watchdog(LIMIT_SECS, body)
}

pub(super) use crate::test_support::TempDir;

pub(super) fn event(ts: i64, input: &str) -> ContextEvent {
    ContextEvent::new(ts, "cli", input)
}

pub(super) fn cold_record(ts: i64, tokens: &str) -> ColdRecord {
    ColdRecord {
        event: event(ts, tokens),
        text: tokens.to_owned(),
        tokens: tokens.to_owned(),
        dense: None,
        archived_from: "prune".to_owned(),
    }
}

pub(super) fn pragma_i64(store: &Store, name: &str) -> i64 {
    store
        .db
        .conn
        .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
        .expect("pragma")
}

pub(super) fn window_inputs(store: &Store) -> Vec<String> {
    store
        .events_window()
        .expect("window")
        .into_iter()
        .map(|e| e.record.event.input)
        .collect()
}

pub(super) fn side_rows(store: &Store) -> i64 {
    store
        .db
        .conn
        .query_row("SELECT count(*) FROM cold_side_vectors", [], |r| r.get(0))
        .expect("count")
}

pub(super) fn side_values(store: &Store, fp: &str) -> Vec<(i64, Vec<f32>)> {
    store
        .cold_side_vectors(fp)
        .map(|row| row.map(|v| (v.id, v.values)))
        .collect::<Result<_, _>>()
        .expect("scan")
}

/// What a cold vector reads back as: the direction of `values`, quantized (a version-3 store's
/// `f32` rows read back as they were written).
pub(super) fn cold_form(values: &[f32]) -> Vec<f32> {
    let mut q = vec![0i8; values.len()];
    crate::simd::quantize(values, &mut q);
    crate::simd::dequantize(&q)
}
