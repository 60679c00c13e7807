//! Unit tests of the durable store. Every test runs under a watchdog and in its own directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use rusqlite::Connection;
use serde_json::json;

use super::common_terms::COMMON_TERM_MIN_ENTRIES;
use super::events::floats_from_blob;
use super::schema::{MIGRATIONS, Migration, migrate};
use super::*;
use crate::{ContextEvent, ToolOutput};

const LIMIT_SECS: u64 = 30;
const HOUR_MS: i64 = 60 * 60 * 1000;

/// Every store test runs under the crate's watchdog with one limit.
fn watchdog<F: FnOnce() + Send + 'static>(body: F) {
    crate::test_support::watchdog(LIMIT_SECS, body)
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("hearth-store-{name}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create test dir");
        Self(dir)
    }

    fn db(&self) -> PathBuf {
        self.0.join("memory.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn event(ts: i64, input: &str) -> ContextEvent {
    ContextEvent::new(ts, "cli", input)
}

fn cold_record(ts: i64, tokens: &str) -> ColdRecord {
    ColdRecord {
        event: event(ts, tokens),
        text: tokens.to_owned(),
        tokens: tokens.to_owned(),
        dense: None,
        archived_from: "prune".to_owned(),
    }
}

fn pragma_i64(store: &Store, name: &str) -> i64 {
    store
        .db
        .conn
        .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
        .expect("pragma")
}

fn window_inputs(store: &Store) -> Vec<String> {
    store
        .events_window()
        .expect("window")
        .into_iter()
        .map(|e| e.record.event.input)
        .collect()
}

#[test]
fn store_open_sets_wal_full_sync_and_schema() {
    watchdog(|| {
        let dir = TempDir::new("open");
        let store = Store::open(dir.db()).expect("open");
        let mode: String = store
            .db
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("mode");
        assert_eq!(mode, "wal");
        assert_eq!(pragma_i64(&store, "synchronous"), 2, "synchronous = FULL");
        assert_eq!(pragma_i64(&store, "foreign_keys"), 1);
        assert_eq!(pragma_i64(&store, "busy_timeout"), 5000);
        assert_eq!(
            pragma_i64(&store, "application_id"),
            i64::from(STORE_APPLICATION_ID)
        );
        assert_eq!(
            store.schema_version().expect("version"),
            STORE_SCHEMA_VERSION
        );
        assert_eq!(
            MIGRATIONS.last().map(|m| m.version),
            Some(STORE_SCHEMA_VERSION)
        );
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "migrations are numbered 1, 2, …");
        }
        store.integrity_check().expect("fresh store is intact");
        drop(store);

        let again = Store::open(dir.db()).expect("reopen");
        let rows: i64 = again
            .db
            .conn
            .query_row("SELECT count(*) FROM schema_version", [], |r| r.get(0))
            .expect("count");
        assert_eq!(
            rows,
            i64::from(STORE_SCHEMA_VERSION),
            "reopen applies nothing twice"
        );
    });
}

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
        assert_eq!(rec.tokens, (5 * 2 + 6 * 2 + 5 * 2) as u64);
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

#[test]
fn store_cold_touch_counts_access_and_never_deletes() {
    watchdog(|| {
        let dir = TempDir::new("touch");
        let mut store = Store::open(dir.db()).expect("open");
        let id = store
            .cold_insert(&cold_record(10, "rust sqlite"), 100)
            .expect("insert");
        assert_eq!(store.cold_touch(&[id], 200).expect("touch"), 1);
        assert_eq!(store.cold_touch(&[id, id + 50], 300).expect("touch"), 1);
        let entry = store.cold_get(id).expect("get").expect("still there");
        assert_eq!((entry.access_count, entry.last_access_ms), (2, 300));
        // A clock that went backwards does not make an entry look idle longer.
        store.cold_touch(&[id], 250).expect("touch");
        let entry = store.cold_get(id).expect("get").expect("still there");
        assert_eq!((entry.access_count, entry.last_access_ms), (3, 300));
        assert_eq!(entry.event.timestamp_ms, 10);
        assert_eq!(store.cold_count().expect("count"), 1);
        assert_eq!(store.cold_fts("sqlite", 3).expect("fts").len(), 1);
        // Reading is not an access.
        store.cold_get(id).expect("get");
        assert_eq!(
            store.cold_get(id).expect("get").expect("some").access_count,
            3
        );
    });
}

#[test]
fn a_keyword_ranking_is_not_parsed_again_when_its_limit_changes() {
    watchdog(|| {
        let dir = TempDir::new("fts-limit");
        let mut store = Store::open(dir.db()).expect("open");
        for ts in 0..20 {
            store
                .cold_insert(&cold_record(ts, &format!("garden tomato note{ts}")), 1)
                .expect("insert");
        }
        for limit in [3, 5, 8, 13, 3, 5] {
            assert_eq!(store.cold_fts("tomato", limit).expect("fts").len(), limit);
        }
        let stmt = store
            .conn
            .prepare_cached(cold::RANKED_MATCHES)
            .expect("cached");
        // The first run after the prepare may re-plan once; a bound limit read as a planning
        // hint re-prepares on every change (5 more here).
        let again = stmt.get_status(rusqlite::StatementStatus::RePrepare);
        assert!(again <= 1, "re-prepared {again} times over 6 runs");
    });
}

#[test]
fn store_cold_fts_ranks_higher_is_better() {
    watchdog(|| {
        let dir = TempDir::new("fts");
        let mut store = Store::open(dir.db()).expect("open");
        let both = store
            .cold_insert(&cold_record(1, "北京 天气 晴朗 北京"), 1)
            .expect("insert");
        let one = store
            .cold_insert(&cold_record(2, "上海 天气 多云 下雨 很 冷"), 1)
            .expect("insert");
        let other = store
            .cold_insert(&cold_record(3, "rust sqlite fts5"), 1)
            .expect("insert");

        let hits = store.cold_fts("北京 天气", 10).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [both, one]);
        assert!(
            hits[0].1 > hits[1].1,
            "better match scores higher: {hits:?}"
        );
        assert!(hits.iter().all(|h| h.1 > 0.0));
        assert_eq!(store.cold_fts("北京 天气", 1).expect("fts").len(), 1);
        assert_eq!(store.cold_fts("SQLite", 10).expect("fts")[0].0, other);
        // A time bound leaves out later entries and reports each hit's time and source.
        let before = store.cold_fts_before("天气", 10, 2).expect("fts");
        assert_eq!(before.len(), 1, "{before:?}");
        assert_eq!(
            (
                before[0].id,
                before[0].timestamp_ms,
                before[0].source.as_str()
            ),
            (both, 1, "cli")
        );
        assert!(
            store
                .cold_fts_before("天气", 10, 1)
                .expect("fts")
                .is_empty()
        );
        assert!(store.cold_fts("广州", 10).expect("fts").is_empty());
        assert!(store.cold_fts("", 10).expect("fts").is_empty());
        assert!(store.cold_fts("天气", 0).expect("fts").is_empty());
        // FTS5 syntax in the query is literal, not an error.
        assert!(store.cold_fts("\"rust OR NEAR( *", 10).expect("fts").len() == 1);

        assert_eq!(store.cold_remove(&[other, other]).expect("remove"), 1);
        assert!(store.cold_fts("rust", 10).expect("fts").is_empty());
        assert_eq!(store.cold_get(other).expect("get"), None);
    });
}

#[test]
fn store_cold_fts_skips_terms_held_by_most_entries_once_the_store_is_large() {
    watchdog(|| {
        let dir = TempDir::new("fts-common");
        let mut store = Store::open(dir.db()).expect("open");
        let mut ids = Vec::new();
        for n in 0..COMMON_TERM_MIN_ENTRIES as i64 {
            let tokens = format!("turn number n{n}");
            ids.push(
                store
                    .cold_insert(&cold_record(n, &tokens), 1)
                    .expect("insert"),
            );
        }
        let rare = store
            .cold_insert(&cold_record(1_000, "turn lisbon"), 1)
            .expect("insert");
        // "turn" is in every entry: it weighs nothing, so only the entries the other words
        // match come back, in the same order and with the scores they had with it.
        let hits = store.cold_fts("turn n17 lisbon", 50).expect("fts");
        let got: Vec<i64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(got.len(), 2, "{hits:?}");
        assert!(got.contains(&ids[17]) && got.contains(&rare), "{hits:?}");
        let before = store
            .cold_fts_before("TURN n17", 50, i64::MAX)
            .expect("fts");
        assert_eq!(before.iter().map(|h| h.id).collect::<Vec<_>>(), [ids[17]]);
        // Only common words: nothing to rank by, nothing read.
        assert!(store.cold_fts("turn number", 50).expect("fts").is_empty());
        // A rare word is kept whatever its case.
        assert_eq!(store.cold_fts("Lisbon", 50).expect("fts").len(), 1);
        // A read-only reader drops the same terms (its count table is its own temp table).
        let reader = StoreReader::open(dir.db()).expect("reader");
        assert_eq!(reader.cold_fts("turn n17", 50).expect("fts").len(), 1);
    });
}

#[test]
fn store_cold_fts_skips_a_term_held_by_exactly_half_of_the_entries() {
    watchdog(|| {
        let dir = TempDir::new("fts-half");
        let mut store = Store::open(dir.db()).expect("open");
        // The user's every message opens with the same word; the replies never say it.
        let mut said = Vec::new();
        for n in 0..COMMON_TERM_MIN_ENTRIES as i64 {
            let user = cold_record(2 * n, &format!("hey n{n}"));
            said.push(store.cold_insert(&user, 1).expect("insert"));
            let reply = cold_record(2 * n + 1, &format!("reply r{n}"));
            store.cold_insert(&reply, 1).expect("insert");
        }
        let hits = store.cold_fts("hey n17", 50).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [said[17]]);
    });
}

#[test]
fn store_cold_fts_skips_a_nearly_weightless_term_and_keeps_a_weak_one() {
    watchdog(|| {
        let dir = TempDir::new("fts-weak");
        let mut store = Store::open(dir.db()).expect("open");
        // Just under half of the entries say "hey" (idf 0.04): a word said once weighs 150
        // times more. One user entry in ten says "stove" (idf 2.9): it still ranks.
        let mut said = Vec::new();
        for n in 0..COMMON_TERM_MIN_ENTRIES as i64 {
            let stove = if n % 10 == 0 { " stove" } else { "" };
            let user = cold_record(2 * n, &format!("hey n{n}{stove}"));
            said.push(store.cold_insert(&user, 1).expect("insert"));
            let reply = cold_record(2 * n + 1, &format!("reply r{n}"));
            store.cold_insert(&reply, 1).expect("insert");
        }
        for n in 0..10 {
            let extra = cold_record(10_000 + n, &format!("note x{n}"));
            store.cold_insert(&extra, 1).expect("insert");
        }
        let hits = store.cold_fts("hey n17", 50).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [said[17]]);
        let hits = store.cold_fts("hey n17 stove", 50).expect("fts");
        assert_eq!(
            hits.len(),
            1 + COMMON_TERM_MIN_ENTRIES as usize / 10 + 1,
            "{hits:?}"
        );
        assert_eq!(hits[0].0, said[17]);
        // A word never said is still the query's strongest: "hey" does not stand in for it.
        assert!(store.cold_fts("hey n9999", 50).expect("fts").is_empty());
    });
}

#[test]
fn store_cold_fts_keeps_common_terms_in_a_small_store() {
    watchdog(|| {
        let dir = TempDir::new("fts-small");
        let mut store = Store::open(dir.db()).expect("open");
        for n in 0..10 {
            store
                .cold_insert(&cold_record(n, &format!("turn n{n}")), 1)
                .expect("insert");
        }
        assert_eq!(store.cold_fts("turn", 50).expect("fts").len(), 10);
    });
}

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
fn store_cold_find_cold_boundaries_are_exact() {
    watchdog(|| {
        let dir = TempDir::new("find-cold");
        let mut store = Store::open(dir.db()).expect("open");
        let now = 1_000 * HOUR_MS;
        let edge = now - COLD_MAX_IDLE_MS;
        // (last access, accesses)
        let cases = [
            (edge - 1, 2), // idle just over 72 h, accessed twice: cold
            (edge, 2),     // idle exactly 72 h: not yet
            (edge - 1, 3), // accessed three times: kept
            (edge - HOUR_MS, 0),
            (now, 0),
        ];
        let mut ids = Vec::new();
        for (last, accesses) in cases {
            let id = store
                .cold_insert(&cold_record(1, "x"), last)
                .expect("insert");
            for _ in 0..accesses {
                store.cold_touch(&[id], last).expect("touch");
            }
            let e = store.cold_get(id).expect("get").expect("some");
            assert_eq!((e.last_access_ms, e.access_count), (last, accesses));
            ids.push(id);
        }
        let found = store
            .cold_find_cold(now, COLD_MAX_IDLE_MS, COLD_MAX_ACCESS)
            .expect("find");
        assert_eq!(found, [ids[3], ids[0]], "least recently used first");
        assert_eq!(
            store
                .cold_find_cold(now + 1, COLD_MAX_IDLE_MS, COLD_MAX_ACCESS)
                .expect("find"),
            [ids[3], ids[0], ids[1]]
        );
        assert_eq!(
            store
                .cold_find_cold(now, COLD_MAX_IDLE_MS, 3)
                .expect("find"),
            [ids[3], ids[0], ids[2]]
        );
        assert_eq!(
            store.cold_count().expect("count"),
            5,
            "finding deletes nothing"
        );
    });
}

#[test]
fn store_journal_keeps_trust_and_reads_pre_trust_rows_as_external() {
    watchdog(|| {
        let dir = TempDir::new("journal-trust");
        {
            let mut conn = Connection::open(dir.db()).expect("raw open");
            assert_eq!(
                migrate(&mut conn, &dir.db(), &MIGRATIONS[..3]).expect("v3"),
                3
            );
            conn.execute(
                "INSERT INTO journal (request_id, source, kind, payload, accepted_ms) \
                 VALUES ('old', 'cli', 'interrupt', '{\"priority\": \"L4\"}', 1)",
                [],
            )
            .expect("v3 row");
        }
        let mut store = Store::open(dir.db()).expect("open migrates");
        store
            .journal_accept_with_trust("cli-l4", "cli", "interrupt", "local", &json!({}), 2)
            .expect("accept");
        store
            .journal_accept("plain", "qq", "input", &json!({}), 3)
            .expect("accept");
        let bad = store
            .journal_accept_with_trust("root", "qq", "input", "root", &json!({}), 4)
            .expect_err("an unknown trust is refused");
        assert!(matches!(bad, StoreError::Sqlite { .. }), "{bad}");
        drop(store);

        // Across a reopen: what was recorded, and external where nothing was.
        let store = Store::open(dir.db()).expect("reopen");
        let pending = store
            .reader()
            .expect("reader")
            .journal_pending()
            .expect("pending");
        let trust: Vec<(&str, &str)> = pending
            .iter()
            .map(|e| (e.request_id.as_str(), e.trust.as_str()))
            .collect();
        assert_eq!(
            trust,
            [
                ("old", "external"),
                ("cli-l4", "local"),
                ("plain", "external")
            ]
        );
        assert!(store.journal_get("root").expect("get").is_none());
    });
}

#[test]
fn store_journal_recent_is_one_source_newest_last_and_bounded() {
    watchdog(|| {
        let dir = TempDir::new("journal-recent");
        let mut store = Store::open(dir.db()).expect("open");
        for (i, source) in ["http", "cli", "http", "http"].iter().enumerate() {
            let id = format!("r{i}");
            store
                .journal_accept(&id, source, "input", &json!({"content": id}), i as i64)
                .expect("accept");
        }
        let ids = |v: Vec<crate::store::JournalEntry>| {
            v.into_iter().map(|e| e.request_id).collect::<Vec<_>>()
        };
        assert_eq!(
            ids(store.journal_recent("http", 10).expect("all")),
            ["r0", "r2", "r3"]
        );
        assert_eq!(
            ids(store.journal_recent("http", 2).expect("two")),
            ["r2", "r3"]
        );
        assert!(store.journal_recent("nobody", 5).expect("none").is_empty());
    });
}

#[test]
fn store_journal_accept_reply_pending() {
    watchdog(|| {
        let dir = TempDir::new("journal");
        let mut store = Store::open(dir.db()).expect("open");
        let reader = store.reader().expect("reader");
        store
            .journal_accept("r1", "cli", "input", &json!({"text": "hi"}), 10)
            .expect("accept");
        store
            .journal_accept("r2", "web", "interrupt", &json!({"text": "stop"}), 11)
            .expect("accept");
        // Visible to another connection as soon as the call returned.
        let pending = reader.journal_pending().expect("pending");
        assert_eq!(
            pending
                .iter()
                .map(|e| e.request_id.as_str())
                .collect::<Vec<_>>(),
            ["r1", "r2"]
        );
        assert_eq!(pending[1].payload, json!({"text": "stop"}));
        assert_eq!(
            (pending[1].source.as_str(), pending[1].kind.as_str()),
            ("web", "interrupt")
        );

        let dup = store
            .journal_accept("r1", "cli", "input", &json!({"text": "again"}), 12)
            .expect_err("duplicate");
        assert!(matches!(dup, StoreError::DuplicateRequest { .. }), "{dup}");
        assert_eq!(
            store.journal_get("r1").expect("get").expect("some").payload,
            json!({"text": "hi"})
        );

        store
            .journal_reply("r1", &json!({"status": "ok"}), 20)
            .expect("reply");
        let again = store
            .journal_reply("r1", &json!({"status": "second"}), 21)
            .expect_err("second reply");
        assert!(
            matches!(again, StoreError::AlreadyReplied { .. }),
            "{again}"
        );
        let unknown = store
            .journal_reply("nope", &json!(null), 21)
            .expect_err("unknown");
        assert!(
            matches!(unknown, StoreError::UnknownRequest { .. }),
            "{unknown}"
        );

        let r1 = reader.journal_get("r1").expect("get").expect("some");
        assert_eq!(
            (r1.reply, r1.replied_ms),
            (Some(json!({"status": "ok"})), Some(20))
        );
        let pending = reader.journal_pending().expect("pending");
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].request_id, "r2");

        assert_eq!(store.journal_trim(11, 0).expect("trim"), 1);
        assert_eq!(
            store.journal_trim(100, 0).expect("trim"),
            0,
            "r2 has no reply"
        );
        assert_eq!(store.journal_get("r1").expect("get"), None);
        drop(reader);
        drop(store);

        let reopened = Store::open(dir.db()).expect("reopen");
        let pending = reopened.journal_pending().expect("pending");
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].request_id, "r2");
    });
}

#[test]
fn store_journal_trim_keeps_the_pending_the_recent_and_each_channel_s_newest() {
    watchdog(|| {
        let dir = TempDir::new("journal-trim");
        let mut store = Store::open(dir.db()).expect("open");
        // Six old web turns, three old cli turns, one old turn never answered, a new one.
        let turn = |store: &mut Store, id: &str, source: &str, at: i64, reply: bool| {
            store
                .journal_accept(id, source, "input", &json!({"content": id}), at)
                .expect("accept");
            if reply {
                store
                    .journal_reply(id, &json!({"content": "ok"}), at)
                    .expect("reply");
            }
        };
        for i in 0..6 {
            turn(&mut store, &format!("w{i}"), "web", i, true);
        }
        for i in 0..3 {
            turn(&mut store, &format!("c{i}"), "cli", 10 + i, true);
        }
        turn(&mut store, "pending", "web", 20, false);
        turn(&mut store, "new", "cli", 1_000, true);

        let ids = |store: &Store, source: &str| -> Vec<String> {
            store
                .journal_recent(source, 100)
                .expect("recent")
                .into_iter()
                .map(|e| e.request_id)
                .collect()
        };
        assert_eq!(store.journal_trim(500, 2).expect("trim"), 7);
        assert_eq!(
            ids(&store, "web"),
            ["w5", "pending"],
            "the newest two of the channel, and the one never answered"
        );
        assert_eq!(
            ids(&store, "cli"),
            ["c2", "new"],
            "a newer turn counts among the two"
        );
        assert_eq!(store.journal_pending().expect("pending").len(), 1);
        assert_eq!(store.journal_trim(500, 2).expect("again"), 0);
        assert_eq!(store.journal_trim(2_000, 0).expect("all"), 3);
        assert_eq!(ids(&store, "web"), ["pending"]);
    });
}

#[test]
fn store_frames_load_in_stack_order() {
    watchdog(|| {
        let dir = TempDir::new("frames");
        let mut store = Store::open(dir.db()).expect("open");
        let frame = |task_id, pos| FrameRecord {
            task_id,
            request_id: format!("req-{task_id}"),
            level: 2,
            preempt_count: 1,
            frame: json!({"step": "llm", "task": task_id}),
            stack_pos: pos,
        };
        store.frames_save(&frame(7, 2), 1).expect("save");
        store.frames_save(&frame(3, 0), 1).expect("save");
        store.frames_save(&frame(5, 1), 1).expect("save");
        let order: Vec<u64> = store
            .frames_load()
            .expect("load")
            .iter()
            .map(|f| f.task_id)
            .collect();
        assert_eq!(order, [3, 5, 7]);

        let mut moved = frame(7, 0);
        moved.preempt_count = u32::MAX;
        moved.level = u8::MAX;
        store.frames_save(&moved, 2).expect("replace");
        let loaded = store.frames_load().expect("load");
        assert_eq!(loaded.len(), 3);
        assert_eq!(
            loaded[1], moved,
            "task 7 replaced, now at the bottom (tie by id)"
        );

        assert!(store.frames_remove(3).expect("remove"));
        assert!(!store.frames_remove(3).expect("remove"));
        assert!(!store.frames_remove(u64::MAX).expect("remove"));
        let err = store
            .frames_save(&frame(u64::MAX, 0), 1)
            .expect_err("too large");
        assert!(matches!(err, StoreError::Data { .. }), "{err}");
        drop(store);
        let reopened = Store::open(dir.db()).expect("reopen");
        let ids: Vec<u64> = reopened
            .frames_load()
            .expect("load")
            .iter()
            .map(|f| f.task_id)
            .collect();
        assert_eq!(ids, [7, 5]);
    });
}

#[test]
fn store_migrates_a_version_1_database() {
    watchdog(|| {
        let dir = TempDir::new("migrate");
        {
            let mut conn = Connection::open(dir.db()).expect("raw open");
            assert_eq!(
                migrate(&mut conn, &dir.db(), &MIGRATIONS[..1]).expect("v1"),
                1
            );
            conn.execute(
                "INSERT INTO cold (event, timestamp_ms, source, text, tokens, last_access_ms, \
                 created_ms, archived_from) VALUES (?1, 5, 'cli', 'old', '旧 记忆 alpha', 7, 7, 'prune')",
                [serde_json::to_string(&event(5, "old")).expect("json")],
            )
            .expect("v1 row");
            let fts: bool = conn
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'cold_fts')",
                    [],
                    |r| r.get(0),
                )
                .expect("query");
            assert!(!fts, "a version-1 file has no FTS index");
        }
        let store = Store::open(dir.db()).expect("open migrates");
        assert_eq!(
            store.schema_version().expect("version"),
            STORE_SCHEMA_VERSION
        );
        let hits = store.cold_fts("记忆", 5).expect("fts");
        assert_eq!(
            hits.len(),
            1,
            "rows written by version 1 are indexed by version 2"
        );
        let entry = store.cold_get(hits[0].0).expect("get").expect("some");
        assert_eq!(entry.event, event(5, "old"));
        assert_eq!(
            store.cold_count().expect("count"),
            1,
            "the count starts from the rows already there"
        );
        store.integrity_check().expect("intact");
    });
}

#[test]
fn the_cold_count_follows_every_insert_and_delete_on_any_connection() {
    watchdog(|| {
        let dir = TempDir::new("cold-count");
        let mut store = Store::open(dir.db()).expect("open");
        let ids: Vec<i64> = (1..=4)
            .map(|i| {
                store
                    .cold_insert(&cold_record(i, "counted words"), 10)
                    .expect("insert")
            })
            .collect();
        assert_eq!(store.cold_count().expect("count"), 4);
        assert_eq!(store.cold_remove(&ids[..1]).expect("remove"), 1);
        assert_eq!(store.cold_count().expect("count"), 3);
        // A row written around the store's own methods is counted too: triggers keep it.
        store
            .db
            .conn
            .execute("DELETE FROM cold WHERE id = ?1", [ids[1]])
            .expect("raw delete");
        assert_eq!(store.cold_count().expect("count"), 2);
        let reader = StoreReader::open(dir.db()).expect("reader");
        assert_eq!(reader.cold_count().expect("count"), 2);
        let real: i64 = store
            .db
            .conn
            .query_row("SELECT count(*) FROM cold", [], |r| r.get(0))
            .expect("count(*)");
        assert_eq!(real, 2);
    });
}

#[test]
fn store_migrates_a_version_2_database_keeping_cold_entries() {
    watchdog(|| {
        let dir = TempDir::new("migrate-v2");
        {
            let mut conn = Connection::open(dir.db()).expect("raw open");
            assert_eq!(
                migrate(&mut conn, &dir.db(), &MIGRATIONS[..2]).expect("v2"),
                2
            );
            let blob: Vec<u8> = [0.5f32, -0.25]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            conn.execute(
                "INSERT INTO cold (event, timestamp_ms, source, text, tokens, dense, dense_fp, \
                 last_access_ms, created_ms, archived_from) \
                 VALUES (?1, 5, 'cli', 'old words', 'old words', ?2, 'fp-main', 7, 7, 'prune')",
                rusqlite::params![
                    serde_json::to_string(&event(5, "old words")).expect("json"),
                    blob
                ],
            )
            .expect("v2 row");
            let side: bool = conn
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'cold_side_vectors')",
                    [],
                    |r| r.get(0),
                )
                .expect("query");
            assert!(!side, "a version-2 file has no side vectors");
        }
        let mut store = Store::open(dir.db()).expect("open migrates");
        assert_eq!(
            store.schema_version().expect("version"),
            STORE_SCHEMA_VERSION
        );
        let hits = store.cold_fts("words", 5).expect("fts");
        assert_eq!(hits.len(), 1, "the version-2 entry is still indexed");
        let id = hits[0].0;
        let entry = store.cold_get(id).expect("get").expect("some");
        assert_eq!(entry.event, event(5, "old words"));
        assert_eq!(
            entry.dense,
            Some(DenseVector::new("fp-main", vec![0.5, -0.25]))
        );
        assert_eq!(store.cold_vectors("fp-main").count(), 1);
        assert_eq!(store.cold_side_vectors("fp-side").count(), 0);
        assert_eq!(
            store.cold_side_missing("fp-side").expect("missing"),
            [id],
            "an entry from before the side table waits for a back-fill"
        );
        store
            .cold_set_side_dense(&[(id, DenseVector::new("fp-side", vec![1.0]))])
            .expect("side vector");
        assert!(
            store
                .cold_side_missing("fp-side")
                .expect("missing")
                .is_empty()
        );
        store.integrity_check().expect("intact");
    });
}

fn side_rows(store: &Store) -> i64 {
    store
        .db
        .conn
        .query_row("SELECT count(*) FROM cold_side_vectors", [], |r| r.get(0))
        .expect("count")
}

fn side_values(store: &Store, fp: &str) -> Vec<(i64, Vec<f32>)> {
    store
        .cold_side_vectors(fp)
        .map(|row| row.map(|v| (v.id, v.values)))
        .collect::<Result<_, _>>()
        .expect("scan")
}

#[test]
fn store_migrates_a_version_3_database_keeping_side_vectors() {
    watchdog(|| {
        let dir = TempDir::new("migrate-v3");
        let blob = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        {
            let mut conn = Connection::open(dir.db()).expect("raw open");
            assert_eq!(
                migrate(&mut conn, &dir.db(), &MIGRATIONS[..3]).expect("v3"),
                3
            );
            for (id, words) in [(1, "first words"), (2, "second words")] {
                conn.execute(
                    "INSERT INTO cold (id, event, timestamp_ms, source, text, tokens, \
                     last_access_ms, created_ms, archived_from) \
                     VALUES (?1, ?2, 5, 'cli', ?3, ?3, 7, 7, 'prune')",
                    rusqlite::params![
                        id,
                        serde_json::to_string(&event(5, words)).expect("json"),
                        words
                    ],
                )
                .expect("v3 cold row");
                for (fp, x) in [("fp-a", 1.0f32), ("fp-b", 2.0)] {
                    conn.execute(
                        "INSERT INTO cold_side_vectors (cold_id, fp, dense) VALUES (?1, ?2, ?3)",
                        rusqlite::params![id, fp, blob(&[x, id as f32])],
                    )
                    .expect("v3 side row");
                }
            }
        }
        let mut store = Store::open(dir.db()).expect("open migrates");
        assert_eq!(
            store.schema_version().expect("version"),
            STORE_SCHEMA_VERSION
        );
        assert_eq!(
            side_values(&store, "fp-a"),
            [(1, vec![1.0, 1.0]), (2, vec![1.0, 2.0])]
        );
        assert_eq!(
            side_values(&store, "fp-b"),
            [(1, vec![2.0, 1.0]), (2, vec![2.0, 2.0])]
        );
        store
            .cold_set_side_dense(&[(1, DenseVector::new("fp-a", vec![9.0]))])
            .expect("upsert after the migration");
        assert_eq!(side_values(&store, "fp-a")[0], (1, cold_form(&[9.0])));
        assert_eq!(side_rows(&store), 4, "the upsert replaced, it did not add");
        store.cold_remove(&[1]).expect("remove");
        assert_eq!(
            side_rows(&store),
            2,
            "the delete trigger survived the migration"
        );
        store.integrity_check().expect("intact");
    });
}

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

#[test]
fn store_failed_migration_leaves_previous_version() {
    watchdog(|| {
        let dir = TempDir::new("migrate-fail");
        let broken = [
            MIGRATIONS[0],
            Migration {
                version: 2,
                name: "broken",
                sql: "CREATE TABLE half_done (a INTEGER); SELECT no_such_function();",
            },
        ];
        let mut conn = Connection::open(dir.db()).expect("raw open");
        let err = migrate(&mut conn, &dir.db(), &broken).expect_err("broken migration");
        assert!(err.to_string().contains("migration 2 (broken)"), "{err}");
        let version: i64 = conn
            .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(version, 1);
        let half: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'half_done')",
                [],
                |r| r.get(0),
            )
            .expect("query");
        assert!(!half, "the failed migration's statements were rolled back");
        drop(conn);
        // The real migrations pick up from version 1.
        let store = Store::open(dir.db()).expect("open");
        assert_eq!(
            store.schema_version().expect("version"),
            STORE_SCHEMA_VERSION
        );
    });
}

#[test]
fn store_refuses_newer_schema_untouched() {
    watchdog(|| {
        let dir = TempDir::new("too-new");
        let store = Store::open(dir.db()).expect("open");
        store
            .db
            .conn
            .execute(
                "INSERT INTO schema_version (version, name, applied_ms) VALUES (99, 'future', 0)",
                [],
            )
            .expect("future version");
        drop(store);
        let before = fs::read(dir.db()).expect("read");
        let err = Store::open(dir.db()).err().expect("too new");
        assert!(
            matches!(
                err,
                StoreError::TooNew {
                    found: 99,
                    known: STORE_SCHEMA_VERSION,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains(&dir.db().display().to_string()));
        let err = StoreReader::open(dir.db()).err().expect("too new");
        assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
        assert_eq!(fs::read(dir.db()).expect("read"), before, "file untouched");
    });
}

fn assert_corrupt_untouched(path: &Path, what: &str) {
    let before = fs::read(path).expect("read");
    let err = Store::open(path).err().expect(what);
    let StoreError::Damaged { backup, .. } = &err else {
        panic!("{what}: {err}");
    };
    let shown = err.to_string();
    assert!(shown.contains(&path.display().to_string()), "{shown}");
    assert!(shown.contains("changed none of its files"), "{shown}");
    assert_eq!(
        fs::read(path).expect("read"),
        before,
        "{what}: file untouched"
    );
    let name = path.file_name().expect("file name");
    let copy = backup.as_ref().expect("backup").join(name);
    assert_eq!(fs::read(copy).expect("backup copy"), before, "{what}: copy");
}

#[test]
fn store_corrupt_file_is_a_clear_error_and_kept() {
    watchdog(|| {
        let dir = TempDir::new("corrupt");
        let text = dir.0.join("notes.db");
        fs::write(&text, "these are my notes, not a database\n".repeat(40)).expect("write");
        assert_corrupt_untouched(&text, "text file");

        let mut store = Store::open(dir.db()).expect("open");
        store
            .journal_accept("r", "cli", "input", &json!({}), 1)
            .expect("accept");
        drop(store);
        let mut bytes = fs::read(dir.db()).expect("read");
        bytes[..16].copy_from_slice(b"garbage garbage!");
        fs::write(dir.db(), &bytes).expect("write");
        assert_corrupt_untouched(&dir.db(), "bad header");
    });
}

#[test]
fn store_recover_covers_every_table_of_the_schema() {
    watchdog(|| {
        let dir = TempDir::new("recover-tables");
        let store = Store::open(dir.db()).expect("open");
        let mut stmt = store
            .db
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'cold_fts_%'")
            .expect("prepare");
        let tables: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let covered = super::recover::covered_tables();
        for table in &tables {
            assert!(
                covered.contains(&table.as_str()),
                "table {table} is neither salvaged by recover nor listed as derived"
            );
        }
    });
}

#[test]
fn store_refuses_foreign_sqlite_database() {
    watchdog(|| {
        let dir = TempDir::new("foreign");
        {
            let conn = Connection::open(dir.db()).expect("raw");
            conn.execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
                .expect("table");
        }
        let before = fs::read(dir.db()).expect("read");
        let err = Store::open(dir.db()).err().expect("foreign");
        assert!(matches!(err, StoreError::Foreign { .. }), "{err}");
        assert_eq!(fs::read(dir.db()).expect("read"), before);
    });
}

#[test]
fn store_disk_full_rolls_back_whole_operation() {
    watchdog(|| {
        let dir = TempDir::new("full");
        let mut store = Store::open(dir.db()).expect("open");
        // Six pages to write into, counting the free pages the migrations left.
        let pages = pragma_i64(&store, "page_count") - pragma_i64(&store, "freelist_count");
        let _: i64 = store
            .db
            .conn
            .query_row(&format!("PRAGMA max_page_count = {}", pages + 6), [], |r| {
                r.get(0)
            })
            .expect("limit");
        let big = "x".repeat(6_000);
        let mut written = Vec::new();
        let full = loop {
            assert!(written.len() < 100, "the page limit never filled");
            match store.event_append(&EventRecord::new(event(written.len() as i64, &big))) {
                Ok(id) => written.push(id),
                Err(e) => break e,
            }
        };
        assert!(
            matches!(
                full,
                StoreError::DiskFull {
                    op: "event_append",
                    ..
                }
            ),
            "{full}"
        );
        assert!(full.to_string().contains("rolled back"));
        let window = store.events_window().expect("window");
        assert_eq!(window.iter().map(|e| e.id).collect::<Vec<_>>(), written);

        let err = store
            .journal_accept("big", "cli", "input", &json!({ "text": big }), 1)
            .expect_err("full");
        assert!(matches!(err, StoreError::DiskFull { .. }), "{err}");
        assert_eq!(store.journal_get("big").expect("get"), None);

        let moves: Vec<ColdMove> = written
            .iter()
            .map(|&id| ColdMove {
                event_id: id,
                text: big.clone(),
                tokens: big.clone(),
            })
            .collect();
        let err = store.move_to_cold(&moves, "prune", 1).expect_err("full");
        assert!(matches!(err, StoreError::DiskFull { .. }), "{err}");
        assert_eq!(store.events_window().expect("window").len(), written.len());
        assert_eq!(store.cold_count().expect("count"), 0);
        store.integrity_check().expect("intact after SQLITE_FULL");

        let _: i64 = store
            .db
            .conn
            .query_row("PRAGMA max_page_count = 1000000", [], |r| r.get(0))
            .expect("limit");
        store.move_to_cold(&moves, "prune", 1).expect("room again");
        assert_eq!(store.cold_count().expect("count"), written.len() as u64);
    });
}

#[test]
fn store_reader_needs_migrated_file_and_sees_commits() {
    watchdog(|| {
        let dir = TempDir::new("reader");
        fs::write(dir.db(), b"").expect("empty file");
        let err = StoreReader::open(dir.db()).err().expect("not migrated");
        assert!(
            matches!(err, StoreError::NotMigrated { found: 0, .. }),
            "{err}"
        );

        let mut store = Store::open(dir.db()).expect("open");
        let reader = store.reader().expect("reader");
        assert!(reader.events_window().expect("window").is_empty());
        store
            .event_append(&EventRecord::new(event(1, "seen")))
            .expect("append");
        assert_eq!(reader.events_window().expect("window").len(), 1);
        assert_eq!(reader.path(), dir.db());
        reader.integrity_check().expect("intact");
    });
}

#[test]
fn store_checkpoint_truncates_wal_and_keeps_data() {
    watchdog(|| {
        let dir = TempDir::new("checkpoint");
        let mut store = Store::open(dir.db()).expect("open");
        store
            .journal_accept("r", "cli", "input", &json!({"n": 1}), 1)
            .expect("accept");
        let wal = dir.0.join("memory.db-wal");
        assert!(fs::metadata(&wal).expect("wal").len() > 0);
        store.checkpoint().expect("checkpoint");
        assert_eq!(fs::metadata(&wal).expect("wal").len(), 0);
        assert!(store.journal_get("r").expect("get").is_some());
    });
}

#[test]
fn store_error_names_op_and_path() {
    let err = StoreError::DiskFull {
        op: "journal_accept",
        path: PathBuf::from("/data/memory.db"),
    };
    assert_eq!(err.op(), "journal_accept");
    assert_eq!(err.path(), Path::new("/data/memory.db"));
    assert!(
        err.to_string()
            .starts_with("journal_accept: disk full writing /data/memory.db")
    );
}

#[test]
fn store_handles_are_send() {
    fn send<T: Send>() {}
    send::<Store>();
    send::<StoreReader>();
    send::<StoreError>();
}

proptest! {
    // Each case opens a real store file.
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The index-first keyword search answers exactly what the join of every match does, with
    /// entries later than the bound mixed in anywhere in the ranking.
    #[test]
    fn keyword_search_before_a_time_equals_the_filtered_join(
        entries in proptest::collection::vec((0i64..40, proptest::collection::vec(0usize..6, 1..5)), 1..40),
        before in 0i64..45,
        limit in 1usize..12,
        query in proptest::collection::vec(0usize..6, 1..3),
    ) {
        const WORDS: [&str; 6] = ["alpha", "beta", "gamma", "delta", "eps", "zeta"];
        let dir = TempDir::new("fts-before-prop");
        let mut store = Store::open(dir.db()).expect("open");
        for (ts, words) in &entries {
            let text: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
            store.cold_insert(&cold_record(*ts, &text.join(" ")), 1).expect("insert");
        }
        let query: Vec<&str> = query.iter().map(|&w| WORDS[w]).collect();
        let query = query.join(" ");
        let fast = store.cold_fts_before(&query, limit, before).expect("fast");
        let terms = store.informative_terms(&query).expect("terms");
        let (built, lim) = super::cold::fts_args(&terms, limit).expect("query");
        let joined = store.filtered_matches(&built, lim, before).expect("join");
        prop_assert_eq!(fast, joined);
    }
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

// --- One writer per file, group commit --------------------------------------------------------

#[test]
fn a_second_writer_on_one_file_is_refused_until_the_first_is_dropped() {
    watchdog(|| {
        let dir = TempDir::new("claim");
        let first = Store::open(dir.db()).expect("first writer");
        let err = Store::open(dir.db()).err().expect("second writer refused");
        assert!(matches!(err, StoreError::AlreadyOpen { .. }), "{err}");
        // Another spelling of the same file is the same claim.
        let dotted = dir.0.join(".").join("memory.db");
        let err = Store::open(&dotted)
            .err()
            .expect("same file, other spelling");
        assert!(matches!(err, StoreError::AlreadyOpen { .. }), "{err}");
        // Readers are not writers.
        StoreReader::open(dir.db()).expect("a reader opens beside the writer");
        drop(first);
        Store::open(dir.db()).expect("the file is free once its writer is gone");
    });
}

#[test]
fn an_unsynced_group_is_visible_at_once_and_synced_by_the_next_synced_commit_or_sync_wal() {
    watchdog(|| {
        let dir = TempDir::new("group-unsynced");
        let mut store = Store::open(dir.db()).expect("open");
        let reader = store.reader().expect("reader");
        let synchronous = |store: &Store| -> i64 {
            store
                .db
                .conn
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .expect("pragma")
        };
        assert_eq!(synchronous(&store), 2, "FULL by default");
        store.begin_group_unsynced().expect("begin");
        assert_eq!(synchronous(&store), 1, "NORMAL inside the group");
        store
            .events_append(&[EventRecord::new(event(1, "window"))])
            .expect("append");
        store.commit_group().expect("commit");
        assert_eq!(synchronous(&store), 2, "FULL again after the group");
        assert!(store.has_unsynced());
        assert_eq!(reader.events_window().expect("window").len(), 1);

        // A synced group's fsync covers the WAL before it.
        store.begin_group().expect("begin");
        store
            .journal_accept("a", "cli", "input", &json!({}), 2)
            .expect("accept");
        store.commit_group().expect("commit");
        assert!(!store.has_unsynced());

        store.begin_group_unsynced().expect("begin");
        store
            .events_append(&[EventRecord::new(event(3, "again"))])
            .expect("append");
        store.rollback_group();
        assert!(!store.has_unsynced(), "nothing was committed");
        assert_eq!(synchronous(&store), 2);

        store.begin_group_unsynced().expect("begin");
        store
            .events_append(&[EventRecord::new(event(4, "later"))])
            .expect("append");
        store.commit_group().expect("commit");
        assert!(store.has_unsynced());
        store.sync_wal().expect("sync");
        assert!(!store.has_unsynced());
        drop(store);
        let reopened = Store::open(dir.db()).expect("reopen");
        assert_eq!(reopened.events_window().expect("window").len(), 2);
    });
}

#[test]
fn a_group_commits_all_its_writes_at_once_and_a_failed_write_only_itself() {
    watchdog(|| {
        let dir = TempDir::new("group");
        let mut store = Store::open(dir.db()).expect("open");
        let reader = store.reader().expect("reader");
        store.begin_group().expect("begin");
        store
            .journal_accept("a", "cli", "input", &json!({"content": "a"}), 1)
            .expect("a");
        let dup = store.journal_accept("a", "cli", "input", &json!({}), 2);
        assert!(matches!(dup, Err(StoreError::DuplicateRequest { .. })));
        store
            .journal_accept("b", "cli", "input", &json!({"content": "b"}), 3)
            .expect("b");
        assert!(store.group_intact());
        assert!(
            reader.journal_pending().expect("pending").is_empty(),
            "nothing of a group is visible before its commit"
        );
        store.commit_group().expect("commit");
        let ids: Vec<String> = reader
            .journal_pending()
            .expect("pending")
            .into_iter()
            .map(|e| e.request_id)
            .collect();
        assert_eq!(
            ids,
            ["a", "b"],
            "both writes, the failed duplicate rolled back alone"
        );

        store.begin_group().expect("begin");
        store
            .journal_accept("c", "cli", "input", &json!({}), 4)
            .expect("c");
        store.rollback_group();
        assert_eq!(store.journal_pending().expect("pending").len(), 2);
    });
}

#[test]
fn a_full_disk_inside_a_group_loses_the_whole_group_and_says_so() {
    watchdog(|| {
        let dir = TempDir::new("group-full");
        let mut store = Store::open(dir.db()).expect("open");
        store
            .journal_accept("kept", "cli", "input", &json!({}), 1)
            .expect("kept");
        store.cap_pages(0).expect("cap");
        store.begin_group().expect("begin");
        let _ = store.journal_accept("small", "cli", "input", &json!({}), 2);
        let big = json!({"content": "x".repeat(64 * 1024)});
        let full = store.journal_accept("big", "cli", "input", &big, 3);
        assert!(matches!(full, Err(StoreError::DiskFull { .. })), "{full:?}");
        let committed = store.commit_group();
        assert!(
            committed.is_err(),
            "a group with a full disk must not claim success"
        );
        let ids: Vec<String> = store
            .journal_pending()
            .expect("pending")
            .into_iter()
            .map(|e| e.request_id)
            .collect();
        assert!(
            !ids.contains(&"big".to_string()),
            "the write that hit the cap is not there: {ids:?}"
        );
        assert!(ids.contains(&"kept".to_string()));
    });
}

/// What a cold vector reads back as: the direction of `values`, quantized (a version-3 store's
/// `f32` rows read back as they were written).
fn cold_form(values: &[f32]) -> Vec<f32> {
    let mut q = vec![0i8; values.len()];
    crate::simd::quantize(values, &mut q);
    crate::simd::dequantize(&q)
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

#[test]
fn store_cold_text_reads_one_entry_s_text_and_none_for_a_missing_id() {
    watchdog(|| {
        let dir = TempDir::new("cold-text");
        let mut store = Store::open(dir.db()).expect("open");
        let id = store
            .cold_insert(&cold_record(1, "the spare key is under the mat"), 10)
            .expect("insert");
        assert_eq!(
            store.cold_text(id).expect("text").as_deref(),
            Some("the spare key is under the mat")
        );
        assert_eq!(store.cold_remove(&[id]).expect("remove"), 1);
        assert_eq!(store.cold_text(id).expect("text"), None);
    });
}
