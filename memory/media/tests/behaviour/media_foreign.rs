//! A `media.db` that is not a Hearth media store is refused and left byte for byte untouched.

use hearth_media::{MEDIA_SCHEMA_VERSION, MediaError, MediaStore};

fn assert_refused_untouched(dir: &std::path::Path) {
    let db = dir.join("media.db");
    let before = std::fs::read(&db).unwrap();
    match MediaStore::open(dir) {
        Err(MediaError::Foreign { path, reason }) => {
            assert_eq!(path, db);
            assert!(!reason.is_empty());
        }
        other => panic!("expected Foreign, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "byte for byte untouched"
    );
    assert!(!dir.join("media.db-wal").exists(), "no WAL was started");
    assert!(!dir.join("blobs").exists(), "nothing else was created");
}

#[test]
fn another_applications_sqlite_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("media.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
         INSERT INTO notes (body) VALUES ('somebody else''s data');",
    )
    .unwrap();
    drop(conn);
    assert_refused_untouched(tmp.path());
}

#[test]
fn a_file_with_another_application_id_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(tmp.path().join("media.db")).unwrap();
    conn.execute_batch("PRAGMA application_id = 1234;").unwrap();
    drop(conn);
    let err = MediaStore::open(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("application_id"), "{err}");
}

#[test]
fn a_newer_schema_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    drop(MediaStore::open(tmp.path()).unwrap());
    let conn = rusqlite::Connection::open(tmp.path().join("media.db")).unwrap();
    conn.pragma_update(None, "user_version", MEDIA_SCHEMA_VERSION + 1)
        .unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;")
        .unwrap();
    drop(conn);
    let db = tmp.path().join("media.db");
    let before = std::fs::read(&db).unwrap();
    let err = MediaStore::open(tmp.path()).unwrap_err();
    assert!(matches!(err, MediaError::Foreign { .. }), "{err:?}");
    assert!(err.to_string().contains("newer"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

#[test]
fn a_file_that_is_not_sqlite_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(tmp.path().join("media.db"), garbage).unwrap();
    assert_refused_untouched(tmp.path());
}
