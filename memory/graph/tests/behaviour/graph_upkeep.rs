//! Upkeep the model decides on: merge proposals by name similarity (at most five a tick, a
//! "do not merge" remembered), merging without duplicating, and relations handed out for review
//! once each.

use hearth_graph::{Fact, FactSource, Statement, USER};

use crate::support::{T0, assert_invariants, fact, graph};

fn tell(g: &mut crate::support::TestGraph, cold: i64, facts: Vec<Fact>) {
    let st = Statement {
        sentence: format!("sentence {cold}"),
        facts,
        events: vec![],
    };
    let source = FactSource {
        cold_item: Some(cold),
        turn_id: format!("t{cold}"),
        said_ms: T0,
    };
    g.graph.tell(&[st], &source).unwrap();
}

#[test]
fn similar_names_are_proposed_merged_or_remembered_apart() {
    let mut g = graph();
    tell(
        &mut g,
        1,
        vec![
            fact(USER, "visited", "New York City"),
            fact("Ana", "visited", "New York City"),
        ],
    );
    tell(
        &mut g,
        2,
        vec![
            fact(USER, "visited", "New York Cityy"),
            fact("Rui", "knows", "Ana"),
        ],
    );
    let proposals = g.graph.merge_candidates().unwrap();
    assert_eq!(proposals.len(), 1, "{proposals:?}");
    let p = &proposals[0];
    assert_eq!(
        (p.target.as_str(), p.source.as_str()),
        ("New York City", "New York Cityy")
    );
    assert!(p.similarity > 0.75);

    g.graph.reject_merge(&p.source, &p.target).unwrap();
    assert!(
        g.graph.merge_candidates().unwrap().is_empty(),
        "a rejected pair is not proposed again"
    );

    // The model changed its mind: merging folds the duplicate open relation into one.
    let moved = g
        .graph
        .merge_entities("New York Cityy", "New York City")
        .unwrap();
    assert_eq!(moved, 1);
    let hits = g.graph.recall("new york", T0, 10).unwrap();
    let visits: Vec<_> = hits
        .iter()
        .filter(|h| h.subject == USER && h.predicate == "visited")
        .collect();
    assert_eq!(visits.len(), 1, "{hits:#?}");
    assert_eq!(visits[0].mentions, 2);
    assert_eq!(
        g.graph.why(visits[0].id).unwrap().sources.len(),
        2,
        "both sources kept"
    );
    assert!(g.graph.merge_entities("Ana", "Ana").is_err());
    assert_invariants(g.graph.path());
}

#[test]
fn at_most_five_proposals_a_tick() {
    let mut g = graph();
    let facts = (0..8)
        .flat_map(|i| {
            [
                fact(USER, "visited", &format!("Springfield{i}")),
                fact(USER, "visited", &format!("Springfield{i}x")),
            ]
        })
        .collect();
    tell(&mut g, 1, facts);
    assert_eq!(g.graph.merge_candidates().unwrap().len(), 5);
}

#[test]
fn review_hands_out_each_relation_once() {
    let mut g = graph();
    tell(
        &mut g,
        1,
        (0..7)
            .map(|i| fact(USER, "visited", &format!("Place{i}")))
            .collect(),
    );
    let first = g.graph.review_batch(5).unwrap();
    assert_eq!(first.len(), 5);
    assert!(first.iter().all(|r| r.sentence == "sentence 1"));
    let second = g.graph.review_batch(5).unwrap();
    assert_eq!(second.len(), 2);
    assert!(first.iter().all(|a| second.iter().all(|b| a.id != b.id)));
    assert!(g.graph.review_batch(5).unwrap().is_empty());
}
