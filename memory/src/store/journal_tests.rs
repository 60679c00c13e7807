//! The journal records each accepted input once and its one reply, so pending work survives a
//! restart, and trimming never drops what is unanswered or what a channel needs as its history.

use rusqlite::Connection;
use serde_json::json;

use super::schema::{MIGRATIONS, migrate};
use super::test_support::{TempDir, watchdog};
use super::*;

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
fn store_marks_only_a_turn_still_owing_its_reply_to_be_forgotten_once_answered() {
    watchdog(|| {
        let dir = TempDir::new("journal-forget-mark");
        {
            // A row journaled before migration 10 reads as unmarked.
            let mut conn = Connection::open(dir.db()).expect("raw open");
            migrate(&mut conn, &dir.db(), &MIGRATIONS[..9]).expect("v9");
            conn.execute(
                "INSERT INTO journal (request_id, source, kind, payload, accepted_ms) \
                 VALUES ('old', 'cli', 'input', '{}', 1)",
                [],
            )
            .expect("v9 row");
        }
        let mut store = Store::open(dir.db()).expect("open migrates");
        assert!(!store.journal_forgets_when_answered("old").expect("read"));
        for id in ["running", "answered"] {
            store
                .journal_accept(id, "cli", "input", &json!({}), 2)
                .expect("accept");
        }
        let replied = store
            .journal_reply("answered", &json!({"content": "ok"}), 3)
            .expect("reply");
        assert!(!replied.forget_when_answered);
        assert!(store.journal_awaits_reply("running").expect("read"));
        assert!(!store.journal_awaits_reply("answered").expect("read"));
        assert!(!store.journal_awaits_reply("nobody").expect("read"));
        assert!(store.journal_forget_when_answered("running").expect("mark"));
        assert!(
            !store
                .journal_forget_when_answered("answered")
                .expect("mark"),
            "a replied turn is forgotten at once, never marked"
        );
        assert!(!store.journal_forget_when_answered("nobody").expect("mark"));
        assert!(
            store
                .journal_forgets_when_answered("running")
                .expect("read")
        );
        assert!(
            !store
                .journal_forgets_when_answered("answered")
                .expect("read")
        );
        // Listed for a start's sweep only once answered.
        assert!(store.journal_answered_to_forget().expect("list").is_empty());
        let replied = store
            .journal_reply("running", &json!({"content": "ok"}), 4)
            .expect("reply");
        // The reply says so itself: its caller forgets the turn with no second read.
        assert!(replied.forget_when_answered);
        assert_eq!(
            store.journal_answered_to_forget().expect("list"),
            ["running"]
        );
        assert!(store.journal_clear_forget_mark("running").expect("clear"));
        assert!(!store.journal_clear_forget_mark("running").expect("clear"));
        assert!(store.journal_answered_to_forget().expect("list").is_empty());
    });
}
