//! Created documents are found by their words, in English and in Chinese, and listed as a tree.

use hearth_knowledge::{KnowledgeError, render_hits, tree};

use crate::support::open;

#[test]
fn created_documents_are_found_by_english_and_chinese_keywords() {
    let mut t = open(None);
    t.kb.create("recipes/bread", "我喜欢做酸面包。", false)
        .unwrap();
    t.kb.create("recipes/soup", "Tomato soup with basil and garlic.", false)
        .unwrap();
    t.kb.create("travel", "A trip to Kyoto in the autumn.", false)
        .unwrap();

    assert_eq!(t.names("面包"), ["recipes/bread"]);
    assert_eq!(t.names("garlic"), ["recipes/soup"]);
    assert_eq!(t.names("Kyoto autumn"), ["travel"]);
    assert!(t.names("elephant").is_empty());

    let hits = t.kb.search("basil", 5).unwrap();
    assert_eq!(hits[0].category, "recipes");
    assert_eq!(hits[0].snippet, "Tomato soup with basil and garlic.");
    assert!(hits[0].score > 0.0);
    assert_eq!(
        render_hits(&hits),
        "[recipes/soup]\nTomato soup with basil and garlic."
    );
}

#[test]
fn a_document_is_found_by_the_words_of_its_name() {
    let mut t = open(None);
    t.kb.create("garden/tomatoes", "Water every morning.", false)
        .unwrap();
    assert_eq!(t.names("tomatoes"), ["garden/tomatoes"]);
    assert_eq!(t.names("garden"), ["garden/tomatoes"]);
}

#[test]
fn list_and_tree_show_categories() {
    let mut t = open(None);
    for name in ["travel", "recipes/soup", "recipes/bread", "家/猫"] {
        t.kb.create(name, "text", false).unwrap();
    }
    let docs = t.kb.list().unwrap();
    let names: Vec<&str> = docs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["recipes/bread", "recipes/soup", "travel", "家/猫"]);
    assert_eq!(docs[0].category, "recipes");
    assert_eq!(docs[2].category, "");
    assert_eq!(docs[0].bytes, 4);
    assert!(
        docs.iter()
            .all(|d| d.skipped.is_none() && d.modified_ms > 0)
    );
    assert_eq!(
        tree(&docs),
        "recipes/\n  bread\n  soup\ntravel\n家/\n  猫\n"
    );
}

#[test]
fn long_documents_are_searched_by_passage_and_snippets_are_bounded() {
    let mut t = open(None);
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!("Filler sentence number {i} about nothing much. "));
    }
    text.push_str("The spare key is under the blue flowerpot. ");
    text.push_str(&"More filler. ".repeat(40));
    t.kb.create("house", &text, false).unwrap();
    let hits = t.kb.search("flowerpot", 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].snippet.contains("flowerpot"), "{}", hits[0].snippet);
    assert!(hits[0].snippet.chars().count() <= hearth_knowledge::SNIPPET_CHARS);
}

#[test]
fn empty_queries_and_zero_k_are_invalid_arguments() {
    let mut t = open(None);
    for (query, k) in [("", 5), ("   ", 5), ("bread", 0)] {
        let err = t.kb.search(query, k).unwrap_err();
        assert!(
            matches!(err, KnowledgeError::InvalidArguments(_)),
            "{query:?} {k}: {err}"
        );
    }
    // Punctuation alone is a query, but matches nothing.
    assert!(t.kb.search("?!", 5).unwrap().is_empty());
}

#[test]
fn search_honours_k() {
    let mut t = open(None);
    for i in 0..7 {
        t.kb.create(&format!("notes/n{i}"), "shared word here", false)
            .unwrap();
    }
    assert_eq!(t.kb.search("shared", 3).unwrap().len(), 3);
    assert_eq!(t.kb.search("shared", 10).unwrap().len(), 7);
}

#[test]
fn content_over_one_mib_is_refused() {
    let mut t = open(None);
    let big = "a".repeat(1024 * 1024 + 1);
    let err = t.kb.create("big", &big, false).unwrap_err();
    assert!(
        matches!(err, KnowledgeError::TooLarge { bytes, .. } if bytes == 1024 * 1024 + 1),
        "{err}"
    );
    assert!(crate::support::tree_of(&t.root).is_empty());
}
