//! A file written by any earlier schema version opens as the current one with every row it held
//! still there and indexed, and a migration that fails leaves the file at the version before it.

use rusqlite::Connection;

use super::schema::{MIGRATIONS, Migration, migrate};
use super::test_support::{TempDir, cold_form, event, side_rows, side_values, watchdog};
use super::*;

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
fn store_failed_migration_leaves_previous_version() {
    watchdog(|| {
        let dir = TempDir::new("migrate-fail");
        let broken = [
            MIGRATIONS[0],
            Migration {
                version: 2,
                name: "broken",
                sql: "CREATE TABLE half_done (a INTEGER); SELECT no_such_function();",
                rewrite: None,
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
fn store_migration_11_counts_a_kept_window_by_todays_estimate() {
    watchdog(|| {
        let dir = TempDir::new("migrate-tokens");
        {
            let mut conn = Connection::open(dir.db()).expect("raw open");
            migrate(&mut conn, &dir.db(), &MIGRATIONS[..10]).expect("v10");
            // Two per character, as version 10 counted: 11 + 3 runes, and a tool output of 5.
            conn.execute(
                "INSERT INTO events (timestamp_ms, source, input, response, tool_results, tokens) \
                 VALUES (1, 'cli', 'hello there', 'hi!', '[{\"name\":\"t\",\"output\":\"found\"}]', 38)",
                [],
            )
            .expect("v10 row");
            // Outputs of a shape no event has: the row keeps its count.
            conn.execute(
                "INSERT INTO events (timestamp_ms, source, input, tool_results, tokens) \
                 VALUES (2, 'cli', 'odd', '[1]', 6)",
                [],
            )
            .expect("v10 row");
        }
        let store = Store::open(dir.db()).expect("open migrates");
        assert_eq!(store.schema_version().expect("version"), 11);
        let stats = store.events_stats().expect("stats");
        let today = crate::estimate_tokens("hello there")
            + crate::estimate_tokens("hi!")
            + crate::estimate_tokens("found");
        assert_eq!(today, 4 + 2 + 2);
        assert_eq!(stats.tokens, (today + 6) as u64);
    });
}
