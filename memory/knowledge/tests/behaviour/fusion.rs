//! Keywords and meaning fused: a document found only by meaning needs the embedder, and one
//! found both ways ranks above those found one way.

use std::sync::Arc;

use crate::support::{ConceptEmbedder, open};

#[test]
fn a_document_matching_only_by_meaning_needs_the_embedder() {
    let embedder = ConceptEmbedder::new("0123456789ab");
    let mut t = open(Some(embedder as Arc<_>));
    t.kb.create("garage", "The automobile needs new tyres.", false)
        .unwrap();
    t.kb.create("kitchen", "Descale the kettle.", false)
        .unwrap();
    let hits = t.kb.search("vehicle", 5).unwrap();
    assert_eq!(crate::support::names(&hits), ["garage"]);
    assert_eq!(hits[0].snippet, "The automobile needs new tyres.");
    // Chinese query, English document: the same concept.
    assert_eq!(t.names("汽车"), ["garage"]);

    t.reopen(None);
    assert!(t.names("vehicle").is_empty());
    assert!(t.names("汽车").is_empty());
}

#[test]
fn a_document_matching_both_ways_ranks_first() {
    let embedder = ConceptEmbedder::new("0123456789ab");
    let mut t = open(Some(embedder as Arc<_>));
    // Meaning only (automobile ~ car); keywords only (brakes, no concept); both.
    t.kb.create("a-meaning", "The automobile is parked outside.", false)
        .unwrap();
    t.kb.create("b-keyword", "Bicycle brakes squeak in the rain.", false)
        .unwrap();
    t.kb.create("c-both", "My car needs new brakes.", false)
        .unwrap();
    t.kb.create("d-neither", "Water the roses.", false).unwrap();

    let hits = t.kb.search("car brakes", 5).unwrap();
    let names = crate::support::names(&hits);
    assert_eq!(names[0], "c-both", "{hits:?}");
    assert_eq!(names.len(), 3, "{hits:?}");
    assert!(names.contains(&"a-meaning".to_owned()));
    assert!(names.contains(&"b-keyword".to_owned()));
    assert!(hits[0].score > hits[1].score);
}

#[test]
fn the_dense_floor_keeps_weak_matches_out() {
    let embedder = ConceptEmbedder::new("0123456789ab");
    let mut t = open(Some(embedder as Arc<_>));
    // One concept word among several of another: cosine with "car" is 1/sqrt(10) < 0.3.
    t.kb.create(
        "mixed",
        "loaf loaf loaf bread bread bread sourdough sourdough sourdough automobile",
        false,
    )
    .unwrap();
    assert!(t.names("car").is_empty());
    t.kb.set_min_cosine(0.1);
    assert_eq!(t.names("car"), ["mixed"]);
}
