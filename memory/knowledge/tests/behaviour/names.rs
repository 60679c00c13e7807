//! Names that could leave the root or are malformed are refused before anything is written;
//! an existing document is replaced only when asked.

use hearth_knowledge::KnowledgeError;

use crate::support::{open, tree_of};

#[test]
fn malformed_and_escaping_names_are_refused() {
    let mut t = open(None);
    let long = "a".repeat(65);
    let bad = [
        "../x".to_owned(),
        "/abs".to_owned(),
        ".hidden".to_owned(),
        "a//b".to_owned(),
        "a/../b".to_owned(),
        "a/./b".to_owned(),
        String::new(),
        "a/b/c/d/e".to_owned(),
        long,
        "a/".to_owned(),
        "semi;colon".to_owned(),
        "new\nline".to_owned(),
        "x".repeat(50) + "/" + &"y".repeat(50) + "/" + &"z".repeat(50) + "/" + &"w".repeat(50),
    ];
    for name in &bad {
        let err = t.kb.create(name, "content", false).unwrap_err();
        assert!(
            matches!(&err, KnowledgeError::InvalidName { name: n, .. } if n == name),
            "{name:?}: {err}"
        );
        assert!(err.to_string().contains("invalid document name"), "{err}");
    }
    assert!(tree_of(&t.root).is_empty(), "{:?}", tree_of(&t.root));
    // Nothing outside the root either.
    assert!(!t.dir.path().join("x").exists());
    for name in ["../x", "/abs", "a/../b", ""] {
        assert!(matches!(
            t.kb.read(name),
            Err(KnowledgeError::InvalidName { .. })
        ));
        assert!(matches!(
            t.kb.delete(name),
            Err(KnowledgeError::InvalidName { .. })
        ));
    }
}

#[test]
fn names_at_the_limits_and_in_any_script_are_accepted() {
    let mut t = open(None);
    for name in [
        "a".repeat(64),
        "a/b/c/d".to_owned(),
        "食谱/家常菜/红烧肉".to_owned(),
        "v1.2 release-notes_final".to_owned(),
    ] {
        t.kb.create(&name, "ok", false).unwrap();
        assert_eq!(t.kb.read(&name).unwrap(), "ok");
    }
}

#[test]
fn an_existing_document_is_replaced_only_when_asked() {
    let mut t = open(None);
    let first = t.kb.create("todo", "water the plants", false).unwrap();
    assert!(!first.replaced);
    let err = t.kb.create("todo", "call mum", false).unwrap_err();
    assert!(
        matches!(&err, KnowledgeError::Exists { name } if name == "todo"),
        "{err}"
    );
    assert_eq!(t.kb.read("todo").unwrap(), "water the plants");

    let second = t.kb.create("todo", "call mum", true).unwrap();
    assert!(second.replaced);
    assert_eq!(t.kb.read("todo").unwrap(), "call mum");
    assert_eq!(t.names("mum"), ["todo"]);
    assert!(t.names("plants").is_empty());
    assert!(!t.root.join("todo/content.md.tmp").exists());
}

#[test]
fn a_document_is_not_written_through_a_symlink() {
    let mut t = open(None);
    let outside = t.dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, t.root.join("link")).unwrap();
    let err = t.kb.create("link/x", "content", false).unwrap_err();
    assert!(matches!(err, KnowledgeError::InvalidName { .. }), "{err}");
    assert!(tree_of(&outside).is_empty());
}
