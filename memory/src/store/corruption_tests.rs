//! A file the store cannot safely use (damaged, another program's, or from a newer version) is
//! refused with a clear error and left byte for byte as it was, and salvage knows every table.

use std::fs;
use std::path::Path;

use rusqlite::Connection;
use serde_json::json;

use super::test_support::{TempDir, watchdog};
use super::*;

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
