//! Reopening reuses the index: unchanged documents are neither read nor embedded again; a new
//! embedder fingerprint re-embeds them from the stored passages.

use std::sync::Arc;

use crate::support::{ConceptEmbedder, FailingEmbedder, names, open};

fn fill(t: &mut crate::support::TestKb) {
    t.kb.create("shopping", "Buy a sourdough loaf.", false)
        .unwrap();
    t.kb.create("garage", "The automobile needs oil.", false)
        .unwrap();
    t.kb.create("plans/japan", "A journey to Kyoto.", false)
        .unwrap();
}

#[test]
fn reopening_gives_the_same_results_without_embedding_again() {
    let first = ConceptEmbedder::new("0123456789ab");
    let mut t = open(Some(first.clone() as Arc<_>));
    fill(&mut t);
    assert_eq!(first.texts(), 3);
    let before = t.kb.search("bread vehicle", 5).unwrap();
    // Equal cosines: the tie goes to the older document.
    assert_eq!(names(&before), ["shopping", "garage"]);

    let second = ConceptEmbedder::new("0123456789ab");
    t.reopen(Some(second.clone() as Arc<_>));
    let report = t.kb.sync().unwrap();
    assert_eq!((report.unchanged, report.embedded, report.added), (3, 0, 0));
    assert_eq!(second.texts(), 0);
    assert_eq!(t.kb.search("bread vehicle", 5).unwrap(), before);
    assert_eq!(second.texts(), 0);
}

#[test]
fn a_new_fingerprint_re_embeds_every_document() {
    let first = ConceptEmbedder::new("0123456789ab");
    let mut t = open(Some(first as Arc<_>));
    fill(&mut t);

    let other = ConceptEmbedder::new("ba9876543210");
    t.reopen(Some(other.clone() as Arc<_>));
    let report = t.kb.sync().unwrap();
    assert_eq!((report.unchanged, report.embedded), (3, 3));
    assert_eq!(other.texts(), 3);
    assert_eq!(t.names("trip"), ["plans/japan"]);
    // Done once: the next sync finds the vectors current.
    assert_eq!(t.kb.sync().unwrap().embedded, 0);
}

#[test]
fn documents_indexed_without_an_embedder_get_vectors_when_one_arrives() {
    let mut t = open(None);
    fill(&mut t);
    assert!(t.names("trip").is_empty());
    let embedder = ConceptEmbedder::new("0123456789ab");
    t.reopen(Some(embedder.clone() as Arc<_>));
    assert_eq!(t.kb.sync().unwrap().embedded, 3);
    assert_eq!(t.names("trip"), ["plans/japan"]);
}

#[test]
fn a_failing_embedder_leaves_keyword_search_working() {
    let mut t = open(Some(FailingEmbedder::new() as Arc<_>));
    // Creating succeeds (the file is written and indexed by keywords).
    t.kb.create("note", "keywords still work", false).unwrap();
    let report = t.kb.sync().unwrap();
    assert_eq!(report.embed_failures, 1);
    // The query cannot be embedded: that is an error naming the embedder.
    let err = t.kb.search("keywords", 5).unwrap_err();
    assert!(err.to_string().contains("embedding failed"), "{err}");
    // Reopened without it, the same index answers by keywords.
    t.reopen(None);
    assert_eq!(t.names("keywords"), ["note"]);
}
