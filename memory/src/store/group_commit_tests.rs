//! One writer per file, and a group of writes commits together under one fsync: visible at once,
//! durable by the next synced commit, and never claiming success when part of it was lost.

use serde_json::json;

use super::test_support::{TempDir, event, watchdog};
use super::*;

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
