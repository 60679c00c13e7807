//! Deleting removes exactly one document: its file, its directory when empty, its index rows.

use hearth_knowledge::KnowledgeError;

use crate::support::{count, open};

#[test]
fn deleting_an_unknown_name_is_not_found_and_touches_nothing() {
    let mut t = open(None);
    t.kb.create("recipes/bread", "flour", false).unwrap();
    t.kb.create("recipes/cake", "flour and sugar", false)
        .unwrap();
    std::fs::write(t.root.join("recipes/notes.txt"), "mine").unwrap();
    for name in ["recipes", "recipes/pie", "bread", "recipes/bread/x"] {
        let err = t.kb.delete(name).unwrap_err();
        assert!(
            matches!(&err, KnowledgeError::NotFound { name: n } if n == name),
            "{name}: {err}"
        );
    }
    assert_eq!(t.listed(), ["recipes/bread", "recipes/cake"]);
    assert!(t.root.join("recipes/notes.txt").exists());
    assert_eq!(t.names("flour").len(), 2);
}

#[test]
fn delete_removes_the_file_the_empty_directory_and_the_index_rows() {
    let mut t = open(None);
    t.kb.create("recipes/bread", "sourdough starter", false)
        .unwrap();
    t.kb.create("recipes/cake", "sponge", false).unwrap();
    t.kb.delete("recipes/bread").unwrap();

    assert!(!t.root.join("recipes/bread").exists());
    assert!(t.root.join("recipes/cake/content.md").exists());
    assert!(t.names("sourdough").is_empty());
    assert_eq!(t.listed(), ["recipes/cake"]);
    assert!(matches!(
        t.kb.read("recipes/bread"),
        Err(KnowledgeError::NotFound { .. })
    ));

    t.reopen(None);
    assert!(t.names("sourdough").is_empty());
    assert_eq!(t.names("sponge"), ["recipes/cake"]);
    assert_eq!(count(&t.index, "SELECT count(*) FROM docs"), 1);
    // Only the cake's passage is left, in the table and in the full-text index.
    assert_eq!(count(&t.index, "SELECT count(*) FROM passages"), 1);
    assert_eq!(
        count(
            &t.index,
            "SELECT count(*) FROM passages_fts WHERE passages_fts MATCH 'sourdough'"
        ),
        0
    );
}

#[test]
fn deleting_a_document_keeps_the_documents_below_it() {
    let mut t = open(None);
    t.kb.create("garden", "overview", false).unwrap();
    t.kb.create("garden/roses", "prune in march", false)
        .unwrap();
    t.kb.delete("garden").unwrap();
    assert!(!t.root.join("garden/content.md").exists());
    assert_eq!(t.listed(), ["garden/roses"]);
}
