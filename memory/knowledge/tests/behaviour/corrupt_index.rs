//! The index is derived: a damaged or foreign index file is moved aside and rebuilt from the
//! files, never fatal and never deleted.

use hearth_knowledge::{KNOWLEDGE_APPLICATION_ID, KnowledgeBase};

use crate::support::{count, open};

const GARBAGE: &[u8] = b"this is not a database, just bytes someone wrote here......";

#[test]
fn a_garbage_index_is_moved_aside_and_rebuilt_from_the_files() {
    let mut t = open(None);
    t.kb.create("recipes/bread", "sourdough starter", false)
        .unwrap();
    t.kb.create("travel", "我想去杭州旅行", false).unwrap();
    drop(t.kb);
    let garbage = GARBAGE.repeat(100);
    std::fs::write(&t.index, &garbage).unwrap();

    let mut kb = KnowledgeBase::open(&t.root, &t.index, None).expect("open despite garbage");
    let aside = kb.moved_aside().expect("moved aside").to_path_buf();
    assert!(
        aside
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("knowledge.db.corrupt-"),
        "{}",
        aside.display()
    );
    assert_eq!(std::fs::read(&aside).unwrap(), garbage);

    let report = kb.sync().unwrap();
    assert_eq!(report.added, 2);
    assert_eq!(kb.search("sourdough", 5).unwrap()[0].name, "recipes/bread");
    assert_eq!(kb.search("杭州", 5).unwrap()[0].name, "travel");
    assert_eq!(
        count(&t.index, "PRAGMA application_id"),
        KNOWLEDGE_APPLICATION_ID
    );
}

#[test]
fn a_foreign_sqlite_file_is_moved_aside_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("knowledge.db");
    {
        let conn = rusqlite::Connection::open(&index).unwrap();
        conn.execute_batch("CREATE TABLE mine (x); INSERT INTO mine VALUES (42);")
            .unwrap();
    }
    let mut kb = KnowledgeBase::open(&dir.path().join("kb"), &index, None).unwrap();
    let aside = kb.moved_aside().unwrap().to_path_buf();
    assert_eq!(count(&aside, "SELECT x FROM mine"), 42);
    kb.create("a", "works", false).unwrap();
    assert_eq!(kb.search("works", 5).unwrap().len(), 1);
}

#[test]
fn a_healthy_index_is_kept() {
    let mut t = open(None);
    t.kb.create("a", "one", false).unwrap();
    t.reopen(None);
    assert!(t.kb.moved_aside().is_none());
    let report = t.kb.sync().unwrap();
    assert_eq!((report.unchanged, report.added), (1, 0));
}

#[test]
fn files_are_created_private() {
    use std::os::unix::fs::PermissionsExt;
    let t = open(None);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&t.root), 0o700);
    assert_eq!(mode(&t.index), 0o600);
    assert_eq!(count(&t.index, "PRAGMA user_version"), 1);
}
