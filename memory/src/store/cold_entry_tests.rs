//! Cold entries are only ever counted, read and touched, never deleted behind the caller's back,
//! so the idle and access bounds that pick distillation candidates are exact.

use super::test_support::{TempDir, cold_record, watchdog};
use super::*;

const HOUR_MS: i64 = 60 * 60 * 1000;

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

/// More entries than a page: the walk reads each once, in id order.
#[test]
fn store_cold_entries_reads_every_entry_once_in_id_order_across_pages() {
    watchdog(|| {
        let dir = TempDir::new("cold-entries");
        let mut store = Store::open(dir.db()).expect("open");
        let ids: Vec<i64> = (0..super::cold_entries::PAGE as i64 * 2 + 3)
            .map(|i| {
                store
                    .cold_insert(&cold_record(i, &format!("turn {i}")), i)
                    .expect("insert")
            })
            .collect();
        let read: Vec<i64> = store.cold_entries().map(|e| e.expect("entry").id).collect();
        assert_eq!(read, ids);
        let first = store.cold_entries().next().expect("one").expect("ok");
        assert_eq!(first.text, "turn 0");
    });
}
