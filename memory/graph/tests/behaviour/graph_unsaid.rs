//! The words of a forgotten fact: a forget notes each sentence no fact holds any more with the
//! turns it was said in, keeps a sentence another fact still comes from, and the notes last
//! until the memory store says they are done.

use hearth_graph::{FactId, FactSource, PurgeCriteria, Statement, USER, Unsaid};
use hearth_memory::RedactionScope;

use crate::support::{DAY, T0, fact, graph, item};

fn id_of(g: &crate::support::TestGraph, query: &str, object: &str) -> FactId {
    let hits = g.graph.recall(query, T0 + 2 * DAY, 20).unwrap();
    hits.iter()
        .find(|h| h.object == object)
        .unwrap_or_else(|| panic!("{object} not recalled: {hits:#?}"))
        .id
}

/// Each note as (words, turn, cold item, where they go: `said` verbatim, as a value from the
/// `replies` or from the whole `turn`).
fn words(unsaid: &[Unsaid]) -> Vec<(&str, &str, Option<i64>, &'static str)> {
    let mut w: Vec<_> = unsaid
        .iter()
        .map(|u| {
            let scope = match u.scope {
                RedactionScope::Verbatim => "said",
                RedactionScope::InReplies => "replies",
                RedactionScope::InTurn => "turn",
            };
            (u.sentence.as_str(), u.turn_id.as_str(), u.cold_item, scope)
        })
        .collect();
    w.sort();
    w
}

#[test]
fn a_forgotten_fact_leaves_its_sentences_unsaid_in_each_turn_until_done() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I moved to Porto last week. I like jazz."),
            item(2, T0 + DAY, "I moved to Porto last week, remember?"),
        ])
        .unwrap();
    let porto = id_of(&g, "where do I live", "Porto");

    let gone = g.graph.forget(porto).unwrap();
    let expected = [
        ("I moved to Porto last week", "turn-1", Some(1), "said"),
        (
            "I moved to Porto last week, remember",
            "turn-2",
            Some(2),
            "said",
        ),
        ("Porto", "turn-1", Some(1), "replies"),
        ("Porto", "turn-2", Some(2), "replies"),
    ];
    assert_eq!(
        words(&gone.unsaid),
        expected,
        "the move's event went too, noted once; the value as the replies may echo it"
    );
    assert!(gone.still_said.is_empty());
    // The jazz sentence holds its own fact: nothing of it is unsaid.
    assert_eq!(words(&g.graph.unsaid().unwrap()), expected);

    // Until the memory store says it is done, the notes outlive a restart.
    let path = g.graph.path().to_path_buf();
    let mut reopened = hearth_graph::GraphStore::open(&path).unwrap();
    assert_eq!(words(&reopened.unsaid().unwrap()), expected);
    let ids: Vec<i64> = gone.unsaid.iter().map(|u| u.id).collect();
    assert_eq!(reopened.unsaid_done(&ids[..1]).unwrap(), 1);
    assert_eq!(reopened.unsaid().unwrap().len(), 3);
    assert_eq!(reopened.unsaid_done(&ids).unwrap(), 3, "done twice is done");
    assert!(reopened.unsaid().unwrap().is_empty());
}

#[test]
fn a_sentence_another_fact_comes_from_stays_until_that_fact_goes_too() {
    let mut g = graph();
    let said = "I live in Lisbon and work at Acme";
    let statement = Statement {
        sentence: said.into(),
        facts: vec![
            fact(USER, "lives_in", "Lisbon"),
            fact(USER, "works_at", "Acme"),
        ],
        events: Vec::new(),
    };
    let source = FactSource {
        cold_item: Some(7),
        turn_id: "turn-7".into(),
        said_ms: T0,
    };
    g.graph.tell(&[statement], &source).unwrap();
    let lisbon = id_of(&g, "where do I live", "Lisbon");
    let acme = id_of(&g, "where do I work", "Acme");

    let gone = g.graph.forget(lisbon).unwrap();
    assert_eq!(
        words(&gone.unsaid),
        [("Lisbon", "turn-7", Some(7), "replies")],
        "the sentence stays, the value leaves the reply"
    );
    assert_eq!(gone.still_said.len(), 1);
    assert_eq!(gone.still_said[0].sentence, said);
    assert_eq!(gone.still_said[0].facts, [acme]);
    assert_eq!(g.graph.unsaid().unwrap().len(), 1);

    let gone = g.graph.forget(acme).unwrap();
    assert!(gone.still_said.is_empty());
    assert_eq!(
        words(&gone.unsaid),
        [
            ("Acme", "turn-7", Some(7), "replies"),
            (said, "turn-7", Some(7), "said")
        ]
    );
}

#[test]
fn a_value_another_fact_of_the_same_turn_holds_stays_in_its_reply() {
    let mut g = graph();
    let said = "I live in Porto and so does my sister Ana";
    let statement = Statement {
        sentence: said.into(),
        facts: vec![
            fact(USER, "lives_in", "Porto"),
            fact("Ana", "lives_in", "Porto"),
        ],
        events: Vec::new(),
    };
    let source = FactSource {
        cold_item: Some(3),
        turn_id: "turn-3".into(),
        said_ms: T0,
    };
    g.graph.tell(&[statement], &source).unwrap();
    let hits = g.graph.recall("where do I live", T0 + DAY, 20).unwrap();
    let mine = hits
        .iter()
        .find(|h| h.object == "Porto" && h.subject == USER)
        .unwrap_or_else(|| panic!("{hits:#?}"))
        .id;

    let gone = g.graph.forget(mine).unwrap();
    assert!(
        gone.unsaid.is_empty(),
        "Ana's fact keeps the sentence and the value: {gone:#?}"
    );
}

#[test]
fn a_fact_told_in_the_model_s_words_takes_its_value_from_the_whole_turn() {
    let mut g = graph();
    // As `memory_commit` tells it: the model's words, the turn it was called in, no cold item.
    let statement = Statement {
        sentence: "user lives_in Porto".into(),
        facts: vec![fact(USER, "lives_in", "Porto")],
        events: Vec::new(),
    };
    let source = FactSource {
        cold_item: None,
        turn_id: "req-5".into(),
        said_ms: T0,
    };
    g.graph.tell(&[statement], &source).unwrap();
    let porto = id_of(&g, "where do I live", "Porto");
    let gone = g.graph.forget(porto).unwrap();
    assert_eq!(
        words(&gone.unsaid),
        [
            ("Porto", "req-5", None, "turn"),
            ("user lives_in Porto", "req-5", None, "said")
        ],
        "the user said it in their own words: the value leaves them too"
    );
}

#[test]
fn a_fact_shown_to_the_model_leaves_the_replies_of_the_turns_it_was_shown_in() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I live in Porto."),
            item(2, T0, "My sister Ana lives in Porto."),
        ])
        .unwrap();
    let porto = id_of(&g, "where do I live", "Porto");
    // Shown in turn-9 and turn-10; turn-2 told Ana's fact with the same value, so its reply
    // may be repeating that one.
    let shown = [
        "turn-9".to_owned(),
        "turn-10".to_owned(),
        "turn-2".to_owned(),
    ];
    let mut asked = Vec::new();
    let gone = g
        .graph
        .forget_shown(porto, &mut |id, items| {
            asked.push((id, items.to_vec()));
            shown.to_vec()
        })
        .unwrap();
    assert_eq!(
        asked,
        [(porto, vec![1])],
        "asked once, with the item it came from"
    );
    assert_eq!(
        words(&gone.unsaid),
        [
            ("I live in Porto", "turn-1", Some(1), "said"),
            ("Porto", "turn-1", Some(1), "replies"),
            ("Porto", "turn-10", None, "replies"),
            ("Porto", "turn-9", None, "replies"),
        ]
    );
    assert_eq!(words(&g.graph.unsaid().unwrap()), words(&gone.unsaid));
    crate::support::assert_invariants(g.graph.path());
}

#[test]
fn a_hard_purge_notes_the_words_of_every_fact_it_removes() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I like tea."),
            item(2, T0 + DAY, "I like chess."),
        ])
        .unwrap();
    // Each fact was shown for the reply of a later turn, named after the item it came from.
    let gone = g
        .graph
        .purge_shown(
            &PurgeCriteria {
                predicate: Some("likes".into()),
                ..PurgeCriteria::default()
            },
            &mut |_, items| items.iter().map(|i| format!("turn-{}", i + 10)).collect(),
        )
        .unwrap();
    assert_eq!(gone.len(), 2);
    assert_eq!(
        words(&g.graph.unsaid().unwrap()),
        [
            ("I like chess", "turn-2", Some(2), "said"),
            ("I like tea", "turn-1", Some(1), "said"),
            ("chess", "turn-12", None, "replies"),
            ("chess", "turn-2", Some(2), "replies"),
            ("tea", "turn-1", Some(1), "replies"),
            ("tea", "turn-11", None, "replies"),
        ]
    );
}

#[test]
fn a_removed_cold_item_takes_the_facts_only_it_told_and_leaves_the_rest() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I live in Porto. I like jazz."),
            item(2, T0 + DAY, "I like jazz, really."),
        ])
        .unwrap();
    let porto = id_of(&g, "where do I live", "Porto");
    let jazz = id_of(&g, "what do I like", "jazz");

    let gone = g.graph.forget_cold_item(1).unwrap();
    let ids: Vec<FactId> = gone.iter().map(|f| f.id).collect();
    assert!(ids.contains(&porto), "{gone:#?}");
    assert!(!ids.contains(&jazz), "jazz was said in item 2 too");
    assert!(
        g.graph.why(porto).is_err(),
        "a fact told only by the removed item is forgotten"
    );
    let why = g.graph.why(jazz).unwrap();
    assert_eq!(
        why.sources.iter().map(|s| s.cold_item).collect::<Vec<_>>(),
        [Some(2)],
        "its provenance no longer points at the removed item"
    );
    assert!(
        g.graph.forget_cold_item(1).unwrap().is_empty(),
        "nothing left of it"
    );
    assert!(
        g.graph.forget_cold_item(99).unwrap().is_empty(),
        "an item that told nothing"
    );
    crate::support::assert_invariants(g.graph.path());
}

/// Two items forgotten together (one transaction) take the fact only they told, and leave what
/// another item told.
#[test]
fn items_forgotten_together_take_a_fact_told_by_both() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I like jazz."),
            item(2, T0 + DAY, "I like jazz, really."),
            item(3, T0 + 2 * DAY, "I live in Porto."),
        ])
        .unwrap();
    let jazz = id_of(&g, "what do I like", "jazz");
    let porto = id_of(&g, "where do I live", "Porto");
    let gone = g.graph.forget_turn_and_items("", &[1, 2]).unwrap();
    assert_eq!(gone.iter().map(|f| f.id).collect::<Vec<_>>(), [jazz]);
    assert!(g.graph.why(jazz).is_err());
    assert!(g.graph.why(porto).is_ok(), "item 3 was not forgotten");
    crate::support::assert_invariants(g.graph.path());
}

/// A turn taken back takes what only it told: the facts distilled from its item and those a
/// tool committed while serving it (no cold item names them), not a fact said elsewhere too.
#[test]
fn a_removed_turn_takes_what_it_told_and_what_was_committed_in_it() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I live in Porto. I like jazz."),
            item(2, T0 + DAY, "I like jazz, really."),
        ])
        .unwrap();
    let committed = Statement {
        sentence: "user works_at Quuxcorp".into(),
        facts: vec![fact(USER, "works_at", "Quuxcorp")],
        events: vec![],
    };
    let in_turn = FactSource {
        cold_item: None,
        turn_id: "turn-1".into(),
        said_ms: T0 + 60_000,
    };
    g.graph.tell(&[committed], &in_turn).unwrap();
    let porto = id_of(&g, "where do I live", "Porto");
    let jazz = id_of(&g, "what do I like", "jazz");
    let work = id_of(&g, "where do I work", "Quuxcorp");

    let gone: Vec<FactId> = g
        .graph
        .forget_turn("turn-1")
        .unwrap()
        .iter()
        .map(|f| f.id)
        .collect();
    assert!(gone.contains(&porto) && gone.contains(&work), "{gone:?}");
    assert!(!gone.contains(&jazz), "jazz was said in turn 2 too");
    assert!(
        g.graph.why(work).is_err(),
        "the committed fact is forgotten"
    );
    let why = g.graph.why(jazz).unwrap();
    assert_eq!(
        why.sources
            .iter()
            .map(|s| s.turn_id.as_str())
            .collect::<Vec<_>>(),
        ["turn-2"]
    );
    // Forgetting only the turn's cold item would have left what was committed in it.
    assert!(g.graph.forget_turn("turn-1").unwrap().is_empty());
    assert!(g.graph.forget_turn("").unwrap().is_empty(), "no turn");
    crate::support::assert_invariants(g.graph.path());
}

#[test]
fn a_correction_replaces_the_belief_and_keeps_what_was_said() {
    let mut g = graph();
    g.graph
        .distill_items(&[item(1, T0, "I like tea.")])
        .unwrap();
    let tea = id_of(&g, "what do I like", "tea");
    let source = FactSource {
        cold_item: None,
        turn_id: "tool-1".into(),
        said_ms: T0 + DAY,
    };
    g.graph
        .edit(tea, "coffee", "No, I like coffee.", &source)
        .unwrap();
    assert!(
        g.graph.why(tea).is_err(),
        "the old value of a many-valued fact goes"
    );
    assert!(
        g.graph.unsaid().unwrap().is_empty(),
        "the turn that said it is left as it was"
    );
}

#[test]
fn a_version_five_graph_keeps_its_notes_and_gains_the_echoes() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I live in Porto."),
            item(2, T0 + DAY, "I like jazz."),
        ])
        .unwrap();
    let porto = id_of(&g, "where do I live", "Porto");
    g.graph.forget(porto).unwrap();
    let path = g.graph.path().to_path_buf();
    drop(g.graph);
    // Back to version 5 as an older Hearth left it: its notes have no echo column.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DELETE FROM unsaid WHERE echo <> 0; DROP INDEX unsaid_once; \
         ALTER TABLE unsaid DROP COLUMN echo; \
         CREATE UNIQUE INDEX unsaid_once ON unsaid (sentence, turn_id, ifnull(cold_item, -1)); \
         PRAGMA user_version = 5;",
    )
    .unwrap();
    drop(conn);

    let mut reopened = hearth_graph::GraphStore::open(&path).unwrap();
    assert_eq!(
        words(&reopened.unsaid().unwrap()),
        [("I live in Porto", "turn-1", Some(1), "said")],
        "the older note is kept, as a sentence"
    );
    let jazz = reopened.recall("what do I like", T0 + 2 * DAY, 20).unwrap();
    let jazz = jazz.iter().find(|h| h.object == "jazz").expect("jazz").id;
    let gone = reopened.forget(jazz).unwrap();
    assert_eq!(
        words(&gone.unsaid),
        [
            ("I like jazz", "turn-2", Some(2), "said"),
            ("jazz", "turn-2", Some(2), "replies")
        ]
    );
    crate::support::assert_invariants(&path);
}
