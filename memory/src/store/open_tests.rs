//! Opening a store must give a writer the durability it promises (WAL, full sync, the whole
//! schema, applied once), readers only a migrated file, and handles that can move to a service
//! thread.

use std::fs;

use serde_json::json;

use super::schema::MIGRATIONS;
use super::test_support::{TempDir, event, pragma_i64, watchdog};
use super::*;

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
fn store_handles_are_send() {
    fn send<T: Send>() {}
    send::<Store>();
    send::<StoreReader>();
    send::<StoreError>();
}
