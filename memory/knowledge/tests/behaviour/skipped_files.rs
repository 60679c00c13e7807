//! Files that cannot be indexed are listed with why, and never break the rest.

use hearth_knowledge::{KnowledgeError, tree};

use crate::support::{open, write_on_disk};

#[test]
fn non_utf8_and_oversized_files_are_listed_as_skipped() {
    let mut t = open(None);
    t.kb.create("good", "plain words about kites", false)
        .unwrap();
    write_on_disk(&t.file("binary"), &[b'k', b'i', 0xff, 0xfe, b't', b'e'], 0);
    write_on_disk(&t.file("huge"), &vec![b'k'; 1024 * 1024 + 1], 0);

    let report = t.kb.sync().unwrap();
    let skipped: Vec<&str> = report.skipped.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(skipped, ["binary", "huge"]);
    assert_eq!(report.added, 0);

    let docs = t.kb.list().unwrap();
    let by = |name: &str| docs.iter().find(|d| d.name == name).unwrap();
    let binary = by("binary").skipped.clone().unwrap();
    assert!(
        binary.contains("not UTF-8") && binary.contains("offset 2"),
        "{binary}"
    );
    let huge = by("huge").skipped.clone().unwrap();
    assert!(huge.contains("larger than 1 MiB"), "{huge}");
    assert_eq!(by("huge").bytes, 1024 * 1024 + 1);
    assert!(by("good").skipped.is_none());
    assert!(tree(&docs).contains("huge (skipped: larger than 1 MiB"));

    assert_eq!(t.names("kites"), ["good"]);
    assert!(matches!(
        t.kb.read("huge"),
        Err(KnowledgeError::TooLarge { .. })
    ));
    let err = t.kb.read("binary").unwrap_err();
    assert!(matches!(err, KnowledgeError::Io { .. }), "{err}");
    assert!(err.to_string().contains("binary/content.md"), "{err}");
}

#[test]
fn a_skipped_file_that_is_fixed_is_indexed() {
    let mut t = open(None);
    write_on_disk(&t.file("note"), &[0xc3, 0x28], 0);
    assert!(t.kb.list().unwrap()[0].skipped.is_some());
    write_on_disk(&t.file("note"), "fixed now".as_bytes(), 5);
    let report = t.kb.sync().unwrap();
    assert_eq!(report.updated, 1);
    assert!(report.skipped.is_empty());
    assert_eq!(t.names("fixed"), ["note"]);
    assert!(t.kb.list().unwrap()[0].skipped.is_none());
}

#[test]
fn a_skipped_file_can_still_be_deleted() {
    let mut t = open(None);
    write_on_disk(&t.file("junk"), &[0xff], 0);
    t.kb.delete("junk").unwrap();
    assert!(t.listed().is_empty());
    assert!(!t.root.join("junk").exists());
}
