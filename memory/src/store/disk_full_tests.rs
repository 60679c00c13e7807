//! A full disk rolls back the whole operation that hit it and leaves the file intact, and the
//! error says which operation and which file.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::test_support::{TempDir, event, pragma_i64, watchdog};
use super::*;

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
