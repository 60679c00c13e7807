//! The social tools' store side: a person's facts current and past with their sentences, a
//! trait that holds one value at a time, relations between people, and a bounded network walk.

use hearth_graph::{FactSource, FactStatus, GraphError, PERSON_KIND, USER};

use crate::support::{DAY, T0, assert_invariants, graph};

fn said(turn: &str, ms: i64) -> FactSource {
    FactSource {
        cold_item: None,
        turn_id: turn.into(),
        said_ms: ms,
    }
}

#[test]
fn a_trait_set_again_keeps_the_old_value_as_history_with_its_sentence() {
    let mut g = graph();
    g.graph
        .set_trait(
            "Ana",
            "favourite colour",
            "green",
            "Ana loves green",
            &said("t1", T0),
        )
        .unwrap();
    let later = T0 + 30 * DAY;
    let told = g
        .graph
        .set_trait("Ana", "Favourite colour", "blue", "", &said("t2", later))
        .unwrap();
    assert_eq!(
        told.closed.len(),
        1,
        "the old value is closed, not left beside"
    );

    let ana = g.graph.person("ana", later + DAY).unwrap();
    assert_eq!(ana.name, "Ana");
    assert_eq!(ana.kind, PERSON_KIND);
    let current: Vec<_> = ana.current().map(|f| f.object.as_str()).collect();
    assert_eq!(current, ["blue"]);
    let past = ana
        .facts
        .iter()
        .find(|f| f.status == FactStatus::Past)
        .expect("green is kept as past");
    assert_eq!(
        (past.object.as_str(), past.predicate.as_str()),
        ("green", "favourite_colour")
    );
    assert_eq!(past.sentence, "Ana loves green");
    assert_eq!(past.valid_to_ms, Some(later));
    // No sentence given: the tool's own statement is the provenance.
    assert_eq!(ana.facts[0].sentence, "Ana favourite colour blue");
    assert_invariants(g.graph.path());
}

#[test]
fn a_trait_on_a_many_valued_predicate_adds_a_value() {
    let mut g = graph();
    g.graph
        .set_trait("Rui", "likes", "jazz", "", &said("t1", T0))
        .unwrap();
    g.graph
        .set_trait("Rui", "likes", "surfing", "", &said("t2", T0 + DAY))
        .unwrap();
    let rui = g.graph.person("Rui", T0 + 2 * DAY).unwrap();
    let mut liked: Vec<_> = rui.current().map(|f| f.object.clone()).collect();
    liked.sort();
    assert_eq!(liked, ["jazz", "surfing"]);
}

#[test]
fn relations_between_people_are_seen_from_both_ends_and_walked_to_depth() {
    let mut g = graph();
    g.graph
        .relate(
            "me",
            "friend of",
            "Ana",
            "Ana is my friend",
            &said("t1", T0),
        )
        .unwrap();
    g.graph
        .relate("Ana", "sister_of", "Rui", "", &said("t2", T0))
        .unwrap();
    g.graph
        .relate("Rui", "works with", "Marta", "", &said("t3", T0))
        .unwrap();
    // A thing, not a person: never part of the network.
    g.graph
        .set_trait("Rui", "lives in", "Porto", "", &said("t4", T0))
        .unwrap();

    let rui = g.graph.person("Rui", T0 + DAY).unwrap();
    assert!(
        rui.facts
            .iter()
            .any(|f| f.subject == "Ana" && f.predicate == "sister_of" && f.object == "Rui"),
        "a relation pointing at Rui is one of his facts: {:?}",
        rui.facts
    );
    let me = g.graph.person("我", T0 + DAY).unwrap();
    assert_eq!(me.name, USER);

    let one = g.graph.network(USER, 1).unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!((one[0].to.as_str(), one[0].depth), ("Ana", 1));
    let two = g.graph.network(USER, 2).unwrap();
    let names: Vec<_> = two
        .iter()
        .map(|l| (l.from.as_str(), l.to.as_str(), l.depth))
        .collect();
    assert_eq!(names, [(USER, "Ana", 1), ("Ana", "Rui", 2)]);
    let three = g.graph.network(USER, 9).unwrap();
    assert_eq!(
        three.len(),
        3,
        "depth is cut to 3 and Porto is no person: {three:?}"
    );
    assert!(three.iter().all(|l| l.to != "Porto"));
    assert_invariants(g.graph.path());
}

#[test]
fn a_thing_named_as_a_person_becomes_one() {
    let mut g = graph();
    g.graph
        .set_trait("Bolt", "colour", "black", "", &said("t1", T0))
        .unwrap();
    assert_eq!(g.graph.person("Bolt", T0).unwrap().kind, PERSON_KIND);
    // `knows` makes no person of its object by itself; relate does.
    g.graph
        .relate("Ana", "knows", "Bolt", "", &said("t2", T0))
        .unwrap();
    assert_eq!(g.graph.network("Bolt", 1).unwrap().len(), 1);
}

#[test]
fn bad_people_calls_are_clear_errors_that_write_nothing() {
    let mut g = graph();
    assert!(matches!(
        g.graph.person("Nobody", T0),
        Err(GraphError::UnknownEntity { .. })
    ));
    assert!(matches!(
        g.graph.network("Nobody", 2),
        Err(GraphError::UnknownEntity { .. })
    ));
    for bad_trait in ["", "生日", "1st place", "a;b"] {
        assert!(
            matches!(
                g.graph.set_trait("Ana", bad_trait, "x", "", &said("t", T0)),
                Err(GraphError::InvalidPredicate { .. })
            ),
            "{bad_trait:?}"
        );
    }
    assert!(matches!(
        g.graph.set_trait("", "age", "3", "", &said("t", T0)),
        Err(GraphError::InvalidName { .. })
    ));
    assert!(matches!(
        g.graph
            .relate("Ana", "friend_of", "ana", "", &said("t", T0)),
        Err(GraphError::InvalidName { .. })
    ));
    assert!(matches!(
        g.graph.person("Ana", T0),
        Err(GraphError::UnknownEntity { .. })
    ));
    assert_eq!(g.graph.stats().unwrap().entities, 0);
}

#[test]
fn a_forgotten_trait_leaves_the_person_view() {
    let mut g = graph();
    let told = g
        .graph
        .set_trait("Ana", "age", "31", "", &said("t1", T0))
        .unwrap();
    g.graph
        .set_trait("Ana", "job", "nurse", "", &said("t1", T0))
        .unwrap();
    g.graph.forget(told.inserted[0]).unwrap();
    let ana = g.graph.person("Ana", T0).unwrap();
    let left: Vec<_> = ana.facts.iter().map(|f| f.predicate.as_str()).collect();
    assert_eq!(left, ["job"]);
}

#[test]
fn people_are_listed_most_mentioned_first_and_things_are_not_people() {
    let mut g = graph();
    assert!(g.graph.people(10).unwrap().is_empty());
    g.graph
        .relate("Ana", "sister of", "Rui", "", &said("t1", T0))
        .unwrap();
    g.graph
        .set_trait("Ana", "favourite colour", "green", "", &said("t2", T0 + 1))
        .unwrap();
    g.graph
        .set_trait("Ana", "job", "baker", "", &said("t3", T0 + 2))
        .unwrap();
    let people = g.graph.people(10).unwrap();
    let names: Vec<&str> = people.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Ana", "Rui"], "green and baker are not people");
    assert!(people[0].1 > people[1].1, "{people:?}");
    assert_eq!(g.graph.people(1).unwrap().len(), 1, "the limit holds");
}
