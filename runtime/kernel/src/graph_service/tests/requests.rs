//! The tools' requests that change or read the graph: commit and edit keep history, purges end
//! or forget facts, traits and people are listed, and merges fold or keep names apart.

use super::*;

#[test]
fn commit_and_edit_keep_history() {
    let mut s = scratch("edit");
    let told = s.ask(
        GraphRequest::Commit {
            subject: "user".into(),
            predicate: "works_at".into(),
            object: "Acme".into(),
            sentence: "I work at Acme".into(),
            media: Vec::new(),
        },
        T0,
    );
    let id = told["inserted"][0].as_str().unwrap().to_string();
    let edited = s.ask(
        GraphRequest::Edit {
            id: id.clone(),
            object: "Globex".into(),
            sentence: "no, it is Globex".into(),
        },
        T0 + 1,
    );
    assert_eq!(edited["superseded"], json!([id]), "{edited}");
    let why = s.ask(GraphRequest::Why { id }, T0 + 2);
    assert_eq!(why["superseded_by"], edited["inserted"][0], "{why}");
    let bad = s.graph.request(
        GraphRequest::Commit {
            subject: "user".into(),
            predicate: "Works At!".into(),
            object: "X".into(),
            sentence: String::new(),
            media: Vec::new(),
        },
        "",
        T0,
    );
    assert!(bad.is_err(), "an invalid predicate is refused: {bad:?}");
}

#[test]
fn a_soft_purge_ends_facts_as_history_and_a_hard_one_forgets_them() {
    let mut s = scratch("purge");
    s.say(T0, "I like tea. I like jazz. I live in Porto.");
    s.tick(T0 + DAY);
    let purge = |subject: &str, predicate: &str, hard: bool| GraphRequest::Purge {
        criteria: hearth_graph::PurgeCriteria {
            subject: Some(subject.into()),
            predicate: Some(predicate.into()),
            ..Default::default()
        },
        hard,
    };
    let e = s
        .graph
        .request(purge("Bob", "likes", false), "", T0 + DAY)
        .expect_err("Bob matches nothing");
    assert!(
        matches!(
            hearth_stages::HandlerError::from(e),
            hearth_stages::HandlerError::InvalidArguments(_)
        ),
        "a criterion matching nothing is the caller's mistake"
    );
    let soft = s.ask(purge("user", "likes", false), T0 + DAY);
    assert_eq!(soft, json!({"purged": 2, "mode": "soft"}));
    let hits = s.recall("tea jazz", T0 + 2 * DAY);
    let tea = find(&hits, "tea");
    assert_eq!(tea["status"], "past", "ended, kept as history: {tea}");
    assert_eq!(find(&hits, "Porto")["status"], "current", "{hits:?}");

    let hard = s.ask(purge("user", "lives_in", true), T0 + 2 * DAY);
    assert_eq!(hard, json!({"purged": 1, "mode": "hard"}));
    let hits = s.recall("Porto", T0 + 3 * DAY);
    assert!(
        hits.iter().all(|h| h["object"] != "Porto"),
        "forgotten: {hits:?}"
    );
}

#[test]
fn one_trait_is_answered_with_its_history_and_people_are_listed() {
    let mut s = scratch("trait");
    let set = |value: &str| GraphRequest::SetTrait {
        name: "Ana".into(),
        trait_words: "favourite colour".into(),
        value: value.into(),
        sentence: String::new(),
    };
    s.ask(set("green"), T0);
    s.ask(set("blue"), T0 + DAY);
    s.ask(
        GraphRequest::SetTrait {
            name: "Ana".into(),
            trait_words: "job".into(),
            value: "baker".into(),
            sentence: String::new(),
        },
        T0 + DAY,
    );
    let colour = s.ask(
        GraphRequest::Trait {
            name: "ana".into(),
            trait_words: "Favourite colour".into(),
        },
        T0 + 2 * DAY,
    );
    assert_eq!(colour["trait"], "favourite_colour");
    let values = colour["values"].as_array().unwrap();
    let seen: Vec<(&str, &str)> = values
        .iter()
        .map(|v| (v["object"].as_str().unwrap(), v["status"].as_str().unwrap()))
        .collect();
    assert_eq!(seen, [("blue", "current"), ("green", "past")], "{colour}");
    let people = s.ask(GraphRequest::People { limit: 10 }, T0 + 2 * DAY);
    assert_eq!(people[0]["name"], "Ana", "{people}");
    assert_eq!(
        people.as_array().unwrap().len(),
        1,
        "a colour is not a person"
    );
}

#[test]
fn merge_folds_two_names_and_keep_apart_is_remembered() {
    let mut s = scratch("merge");
    for (name, sentence) in [
        ("Ana Silva", "Ana Silva is my sister"),
        ("Ana Silvа", "typo"),
    ] {
        s.ask(
            GraphRequest::Relate {
                a: name.into(),
                relation: "sister of".into(),
                b: "me".into(),
                sentence: sentence.into(),
            },
            T0,
        );
    }
    let merged = s.ask(
        GraphRequest::Merge {
            source: "Ana Silvа".into(),
            target: "Ana Silva".into(),
            keep_apart: false,
        },
        T0 + 1,
    );
    assert_eq!(merged["relations_moved"], 1, "{merged}");
    let person = s.ask(
        GraphRequest::Person {
            name: "Ana Silvа".into(),
        },
        T0 + 2,
    );
    assert_eq!(
        person["name"], "Ana Silva",
        "the old name is an alias: {person}"
    );
    let network = s.ask(
        GraphRequest::Network {
            name: "me".into(),
            depth: 2,
        },
        T0 + 2,
    );
    assert_eq!(
        network.as_array().map(Vec::len),
        Some(1),
        "one relation, folded: {network}"
    );

    let kept = s.ask(
        GraphRequest::Merge {
            source: "Rui".into(),
            target: "Ruth".into(),
            keep_apart: true,
        },
        T0 + 3,
    );
    assert_eq!(kept["kept_apart"], json!(["Rui", "Ruth"]));
}
