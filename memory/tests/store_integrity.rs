//! The store's open protocol on real damaged files: a missing or empty database beside a WAL,
//! a page overwritten with garbage, and the salvage of what is left; and the files' modes under
//! a permissive umask. Every refusal must leave the files byte-for-byte as they were.

use std::fs;
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use hearth_memory::{
    ColdRecord, ContextEvent, FrameRecord, Recovery, Store, StoreError, StoreHealth, TableSalvage,
};
use rusqlite::{Connection, OpenFlags};
use serde_json::json;

mod common;
use common::{TempDir, watchdog};

const LIMIT: Duration = Duration::from_secs(60);
const JOURNAL_ROWS: u64 = 1500;
const COLD_ROWS: u64 = 60;
const PAGE: u64 = 4096;

fn db_in(dir: &TempDir) -> PathBuf {
    dir.path().join("memory.db")
}

fn sibling(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn request_id(n: u64) -> String {
    format!("req-{n:05}")
}

/// Journals `from..to` (each with a payload of a few hundred bytes, so the journal spans many
/// pages), replying to every other one.
fn write_journal(store: &mut Store, from: u64, to: u64) {
    for n in from..to {
        let id = request_id(n);
        let payload = json!({ "seq": n, "text": format!("message {n} {}", "x".repeat(200)) });
        store
            .journal_accept(&id, "cli", "input", &payload, 1_000 + n as i64)
            .expect("accept");
        if n % 2 == 0 {
            store
                .journal_reply(
                    &id,
                    &json!({ "text": format!("reply {n}") }),
                    2_000 + n as i64,
                )
                .expect("reply");
        }
    }
}

/// Journal rows `0..rows` as `write_journal` writes them, in one transaction (one fsync
/// rather than one per row).
fn bulk_journal(db: &Path, rows: u64) {
    let mut conn = Connection::open(db).expect("raw");
    let tx = conn.transaction().expect("tx");
    for n in 0..rows {
        let payload = json!({ "seq": n, "text": format!("message {n} {}", "x".repeat(200)) });
        let reply = (n % 2 == 0).then(|| json!({ "text": format!("reply {n}") }).to_string());
        tx.execute(
            "INSERT INTO journal (request_id, source, kind, payload, accepted_ms, reply, replied_ms) \
             VALUES (?1, 'cli', 'input', ?2, ?3, ?4, ?5)",
            rusqlite::params![
                request_id(n),
                payload.to_string(),
                1_000 + n as i64,
                reply,
                reply.as_ref().map(|_| 2_000 + n as i64)
            ],
        )
        .expect("insert");
    }
    tx.commit().expect("commit");
}

fn fill_other_tables(store: &mut Store) {
    for n in 0..COLD_ROWS {
        let text = format!("lantern{n} harbour evening note {n}");
        let mut event = ContextEvent::new(n as i64, "cli", text.clone());
        event.id = format!("turn-{n}");
        // Each reply was shown one of three facts.
        event.shown = vec![format!("r{}", n % 3)];
        let record = ColdRecord {
            event,
            text: text.clone(),
            tokens: text,
            dense: None,
            archived_from: "prune".into(),
        };
        store.cold_insert(&record, 10).expect("cold insert");
    }
    for n in 0..3u64 {
        let frame = FrameRecord {
            task_id: n,
            request_id: request_id(n),
            level: 2,
            preempt_count: 1,
            frame: json!({ "step": n }),
            stack_pos: n as u32,
        };
        store.frames_save(&frame, 5).expect("frame");
    }
}

/// A store whose database file holds `JOURNAL_ROWS` journal entries plus cold entries and
/// frames (checkpointed), and whose WAL holds 40 more entries that were never checkpointed: the
/// files a process leaves behind when it is killed. Made by copying the files of a live store.
fn store_with_wal(dir: &TempDir) -> PathBuf {
    let scratch = TempDir::new("store-integrity-scratch");
    let live = db_in(&scratch);
    drop(Store::open(&live).expect("create"));
    bulk_journal(&live, JOURNAL_ROWS);
    let mut store = Store::open(&live).expect("open");
    fill_other_tables(&mut store);
    store.checkpoint().expect("checkpoint");
    write_journal(&mut store, JOURNAL_ROWS, JOURNAL_ROWS + 40);
    let db = db_in(dir);
    fs::copy(&live, &db).expect("copy db");
    fs::copy(sibling(&live, "-wal"), sibling(&db, "-wal")).expect("copy wal");
    drop(store);
    db
}

/// A store that was never checkpointed: everything but the first page is only in the WAL.
fn store_only_in_wal(dir: &TempDir, rows: u64) -> PathBuf {
    let scratch = TempDir::new("store-integrity-scratch");
    let live = db_in(&scratch);
    let mut store = Store::open(&live).expect("open");
    write_journal(&mut store, 0, rows);
    let db = db_in(dir);
    fs::copy(&live, &db).expect("copy db");
    fs::copy(sibling(&live, "-wal"), sibling(&db, "-wal")).expect("copy wal");
    drop(store);
    db
}

/// The second leaf page of the journal's b-tree (the first keeps the lowest keys readable).
fn journal_leaf_page(db: &Path) -> u64 {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("ro");
    conn.query_row::<i64, _, _>(
        "SELECT pageno FROM dbstat WHERE name = 'journal' AND pagetype = 'leaf' \
         ORDER BY pageno LIMIT 1 OFFSET 1",
        [],
        |r| r.get(0),
    )
    .map(|p| p as u64)
    .expect("a journal leaf page")
}

/// Overwrites page `page` of `db` with deterministic garbage.
fn smash_page(db: &Path, page: u64) {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ page;
    let garbage: Vec<u8> = (0..PAGE)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let mut f = fs::OpenOptions::new()
        .write(true)
        .open(db)
        .expect("open db");
    f.seek(SeekFrom::Start((page - 1) * PAGE)).expect("seek");
    f.write_all(&garbage).expect("write garbage");
    f.sync_all().expect("sync");
}

/// The report of one table.
fn report<'a>(recovery: &'a Recovery, name: &str) -> &'a TableSalvage {
    let Recovery::Recovered { tables, .. } = recovery else {
        panic!("nothing recovered: {recovery}");
    };
    tables
        .iter()
        .find(|t| t.table == name)
        .unwrap_or_else(|| panic!("no report for {name}: {recovery}"))
}

/// Asserts that the journal holds the entries `ns`.
fn assert_journaled(store: &Store, ns: impl IntoIterator<Item = u64>) {
    for n in ns {
        assert!(
            store.journal_get(&request_id(n)).expect("get").is_some(),
            "entry {n} is missing"
        );
    }
}

/// The bytes of each file of the store (`None` for a missing one).
fn snapshot(db: &Path) -> Vec<Option<Vec<u8>>> {
    ["", "-wal"]
        .iter()
        .map(|s| fs::read(sibling(db, s)).ok())
        .collect()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

/// Asserts the refusal of a damaged store: the error says what to do and where the copies
/// are, every file is as it was, and the copies hold the same bytes (private).
fn assert_refused_untouched(db: &Path, what: &str) -> PathBuf {
    let before = snapshot(db);
    let err = Store::open(db)
        .err()
        .unwrap_or_else(|| panic!("{what}: opened"));
    let shown = err.to_string();
    let StoreError::Damaged { backup, .. } = &err else {
        panic!("{what}: not refused as damaged: {shown}");
    };
    assert!(shown.contains(&db.display().to_string()), "{shown}");
    let recover = format!(
        "hearth store recover --data-dir {}",
        db.parent().expect("dir").display()
    );
    assert!(shown.contains(&recover), "{shown}");
    assert_eq!(
        snapshot(db),
        before,
        "{what}: files changed by the refused open"
    );
    let backup = backup.clone().expect("a backup was made");
    assert!(shown.contains(&backup.display().to_string()), "{shown}");
    assert_eq!(mode(&backup), 0o700, "backup dir mode");
    for (suffix, bytes) in ["", "-wal"].iter().zip(&before) {
        let copy = backup.join(format!("memory.db{suffix}"));
        assert_eq!(
            fs::read(&copy).ok(),
            *bytes,
            "{what}: backup of memory.db{suffix}"
        );
        if bytes.is_some() {
            assert_eq!(mode(&copy), 0o600, "backup file mode");
        }
    }
    // A second attempt changes nothing either (and makes a second copy).
    assert!(matches!(Store::open(db), Err(StoreError::Damaged { .. })));
    assert_eq!(
        snapshot(db),
        before,
        "{what}: files changed by a second open"
    );
    assert!(matches!(
        Store::check(db).expect("check"),
        StoreHealth::Damaged { .. }
    ));
    backup
}

#[test]
fn store_open_refuses_an_empty_database_beside_a_wal() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-empty-db");
        let db = store_only_in_wal(&dir, 50);
        fs::write(&db, b"").expect("truncate db");
        assert!(fs::metadata(sibling(&db, "-wal")).expect("wal").len() > 0);
        assert_refused_untouched(&db, "empty db beside a WAL");
    });
}

#[test]
fn store_open_refuses_a_missing_database_beside_a_wal() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-missing-db");
        let db = store_only_in_wal(&dir, 50);
        fs::remove_file(&db).expect("delete db");
        assert_refused_untouched(&db, "missing db beside a WAL");
        assert!(!db.exists(), "no database was created over the WAL");
    });
}

#[test]
fn store_open_refuses_a_damaged_page_and_changes_nothing() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-damaged-page");
        let db = store_with_wal(&dir);
        smash_page(&db, journal_leaf_page(&db));
        let backup = assert_refused_untouched(&db, "garbage page");
        let err = Store::open(&db).err().expect("refused");
        assert!(err.to_string().contains("quick_check"), "{err}");
        assert!(backup.join("memory.db-wal").exists(), "the WAL was copied");
    });
}

#[test]
fn store_recover_salvages_the_rows_around_a_damaged_page() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-recover");
        let db = store_with_wal(&dir);
        smash_page(&db, journal_leaf_page(&db));
        let damaged = snapshot(&db);

        let recovery = Store::recover(&db).expect("recover");
        let shown = recovery.to_string();
        let table = |name: &str| report(&recovery, name);
        let Recovery::Recovered { damaged_files, .. } = &recovery else {
            panic!("nothing recovered: {shown}");
        };
        let total = JOURNAL_ROWS + 40;
        let journal = table("journal");
        assert!(
            journal.salvaged < total && journal.salvaged > total - 40,
            "one page of entries lost, no more: {shown}"
        );
        assert_eq!(journal.lost_ranges.len(), 1, "{shown}");
        assert_eq!(table("cold").salvaged, COLD_ROWS, "{shown}");
        assert_eq!(table("frames").salvaged, 3, "{shown}");

        // The damaged files are kept, byte for byte.
        assert_eq!(snapshot(&damaged_files.join("memory.db")), damaged);
        assert!(
            !sibling(&db, "-wal").exists(),
            "the old WAL went aside with its database"
        );

        let store = Store::open(&db).expect("the recovered store opens");
        store.integrity_check().expect("integrity");
        let (lo, hi) = journal.lost_ranges[0];
        let mut present = 0;
        for n in 0..total {
            let seq = n as i64 + 1;
            let entry = store.journal_get(&request_id(n)).expect("journal_get");
            if seq < lo || seq > hi {
                let entry =
                    entry.unwrap_or_else(|| panic!("entry {n} outside the lost range is gone"));
                assert_eq!(entry.payload["seq"], n);
                assert_eq!(entry.reply.is_some(), n % 2 == 0, "reply of {n}");
            }
            present += u64::from(store.journal_get(&request_id(n)).expect("get").is_some());
        }
        assert_eq!(present, journal.salvaged);
        assert_eq!(store.cold_count().expect("count"), COLD_ROWS);
        let hits = store.cold_fts("lantern7", 5).expect("fts");
        assert_eq!(hits.len(), 1, "the full-text index was rebuilt: {hits:?}");
        let shown = store.turns_shown(&["r1".to_owned()]).expect("shown");
        assert_eq!(
            shown.len(),
            (0..COLD_ROWS).filter(|n| n % 3 == 1).count(),
            "the index of what replies were shown was rebuilt: {shown:?}"
        );
        assert_eq!(store.frames_load().expect("frames").len(), 3);
        assert_eq!(mode(&db), 0o600);
        // The recovered store takes new writes.
        drop(store);
        let mut store = Store::open(&db).expect("reopen");
        write_journal(&mut store, total, total + 1);
    });
}

#[test]
fn store_recover_skips_one_row_whose_overflow_page_is_damaged() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-recover-overflow");
        let db = db_in(&dir);
        let mut store = Store::open(&db).expect("open");
        write_journal(&mut store, 0, 20);
        // One entry far larger than a page: its payload continues on overflow pages.
        let big = json!({ "seq": 20, "text": "y".repeat(3 * PAGE as usize) });
        store
            .journal_accept(&request_id(20), "cli", "input", &big, 1)
            .expect("big");
        write_journal(&mut store, 21, 40);
        drop(store);
        let conn = Connection::open_with_flags(&db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("ro");
        let page: i64 = conn
            .query_row(
                "SELECT pageno FROM dbstat WHERE name = 'journal' AND pagetype = 'overflow' \
                 ORDER BY pageno LIMIT 1",
                [],
                |r| r.get(0),
            )
            .expect("an overflow page");
        drop(conn);
        smash_page(&db, page as u64);

        let recovery = Store::recover(&db).expect("recover");
        let journal = report(&recovery, "journal");
        assert_eq!(journal.salvaged, 39, "every other entry: {recovery}");
        assert_eq!(
            journal.unreadable_rows + journal.rejected,
            1,
            "only the big entry is lost: {recovery}"
        );
        let store = Store::open(&db).expect("open recovered");
        assert!(store.journal_get(&request_id(20)).expect("get").is_none());
        assert_journaled(&store, (0..20).chain(21..40));
    });
}

#[test]
fn store_recover_without_a_readable_schema_fails_and_leaves_everything() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-recover-page1");
        let db = store_with_wal(&dir);
        // Page 1 holds the header and the schema; the WAL holds a newer page 1, so it goes too.
        smash_page(&db, 1);
        fs::remove_file(sibling(&db, "-wal")).expect("drop the WAL");
        let before = snapshot(&db);
        let err = Store::recover(&db).expect_err("nothing to salvage without a schema");
        assert!(
            matches!(
                err,
                StoreError::Unrecoverable { .. } | StoreError::Corrupt { .. }
            ),
            "{err}"
        );
        assert_eq!(
            snapshot(&db),
            before,
            "the damaged files are where they were"
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".recovering-"))
            .collect();
        assert!(
            leftovers.is_empty(),
            "work copies left behind: {leftovers:?}"
        );
    });
}

#[test]
fn store_recover_rebuilds_a_store_from_its_wal_when_the_database_is_gone() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-recover-wal");
        let db = store_only_in_wal(&dir, 60);
        fs::remove_file(&db).expect("delete db");
        let recovery = Store::recover(&db).expect("recover");
        let journal = report(&recovery, "journal");
        assert_eq!(journal.salvaged, 60, "{recovery}");
        assert!(journal.lost_ranges.is_empty(), "{recovery}");
        let store = Store::open(&db).expect("open recovered");
        assert_journaled(&store, 0..60);
    });
}

#[test]
fn store_healthy_store_with_a_wal_opens_and_keeps_everything() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-healthy");
        let db = store_with_wal(&dir);
        assert_eq!(Store::check(&db).expect("check"), StoreHealth::Healthy);
        let before = snapshot(&db);
        assert!(matches!(
            Store::recover(&db).expect("recover"),
            Recovery::NotNeeded(StoreHealth::Healthy)
        ));
        assert_eq!(
            snapshot(&db),
            before,
            "check and recover of a healthy store write nothing"
        );
        let store = Store::open(&db).expect("open");
        assert_journaled(&store, [0, JOURNAL_ROWS - 1, JOURNAL_ROWS + 39]);
        assert_eq!(store.cold_count().expect("count"), COLD_ROWS);
        drop(store);

        // A cleanly closed store is one file; checking it creates no other.
        let listing = || {
            let mut names: Vec<_> = fs::read_dir(dir.path())
                .expect("list")
                .map(|e| e.expect("entry").file_name())
                .collect();
            names.sort();
            names
        };
        let before = listing();
        assert_eq!(before, ["memory.db"]);
        let bytes = fs::read(&db).expect("read");
        assert_eq!(Store::check(&db).expect("check"), StoreHealth::Healthy);
        assert_eq!(listing(), before);
        assert_eq!(fs::read(&db).expect("read"), bytes);
    });
}

#[test]
fn store_open_makes_an_existing_world_readable_store_private() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-tighten");
        let db = store_with_wal(&dir);
        for suffix in ["", "-wal"] {
            fs::set_permissions(sibling(&db, suffix), fs::Permissions::from_mode(0o644))
                .expect("chmod");
        }
        let store = Store::open(&db).expect("open");
        for suffix in ["", "-wal", "-shm"] {
            assert_eq!(mode(&sibling(&db, suffix)), 0o600, "memory.db{suffix}");
        }
        drop(store);
    });
}

/// Starts the crash test's writer process on `db` (under `umask`) and waits for its first line.
fn start_writer(db: &Path, umask: &str) -> (std::process::Child, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_store_crash_writer"))
        .arg(db)
        .arg("live")
        .arg("20")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn writer");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("a line").expect("read");
    // Keep draining, so the writer never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, first)
}

#[test]
fn store_check_while_a_writer_writes_finds_it_healthy() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-check-live");
        let db = db_in(&dir);
        let (mut child, _) = start_writer(&db, "022");
        let mut results = Vec::new();
        for _ in 0..40 {
            results.push(Store::check(&db));
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        for r in results {
            assert_eq!(r.expect("check"), StoreHealth::Healthy);
        }
    });
}

/// The umask a process runs with, from `/proc/<pid>/status`.
fn umask_of(pid: u32) -> Option<String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|v| v.trim().to_owned())
}

#[test]
fn store_files_are_private_under_umask_000() {
    watchdog(LIMIT, || {
        let dir = TempDir::new("store-umask");
        let db = db_in(&dir);
        // A real writer process started under umask 000; its files are checked while it writes.
        let (mut child, first) = start_writer(&db, "000");
        assert!(first.starts_with("ACK "), "{first}");
        let umask = umask_of(child.id());
        let modes: Vec<(String, u32)> = ["", "-wal", "-shm"]
            .iter()
            .map(|s| (format!("memory.db{s}"), mode(&sibling(&db, s))))
            .collect();
        let _ = child.kill();
        let _ = child.wait();
        if let Some(umask) = umask {
            assert_eq!(umask, "0000", "the writer ran under umask 000");
        }
        for (name, mode) in modes {
            assert_eq!(mode, 0o600, "{name} is {mode:o}");
        }
    });
}
