//! Recall returns no duplicate rows and reads a bounded number of them however large the
//! neighbourhood, and uses the speaker and the predicate the query names.

use std::collections::HashSet;

use hearth_graph::{RecallLimits, Statement};

use crate::support::{DAY, T0, fact, graph, source};

#[test]
fn a_hub_is_read_within_the_budget_and_without_duplicates() {
    let mut g = graph();
    // One hub with 3,000 neighbours, each with its own neighbour: depth 2 reaches 6,000 rows.
    let statements: Vec<Statement> = (0..3000)
        .flat_map(|i| {
            [
                Statement {
                    sentence: format!("Hub knows Person{i}"),
                    facts: vec![fact("Hub", "knows", &format!("Person{i}"))],
                    events: vec![],
                },
                Statement {
                    sentence: format!("Person{i} likes Thing{i}"),
                    facts: vec![fact(&format!("Person{i}"), "likes", &format!("Thing{i}"))],
                    events: vec![],
                },
            ]
        })
        .collect();
    g.graph.tell(&statements, &source(None)).unwrap();

    let limits = RecallLimits {
        row_budget: 100,
        ..RecallLimits::default()
    };
    let hits = g.graph.recall_with("Hub", T0, 1000, limits).unwrap();
    let ids: HashSet<_> = hits.iter().map(|h| h.id).collect();
    assert_eq!(ids.len(), hits.len(), "no duplicate rows");
    // Direct lists contribute at most `list` rows each; the BFS at most `row_budget`.
    assert!(hits.len() <= 100 + 3 * limits.list, "{}", hits.len());
    assert!(
        hits.iter().any(|h| h.hop == 1 && h.predicate == "likes"),
        "a neighbour's facts are reached"
    );
    for w in hits.windows(2) {
        assert!(w[0].score >= w[1].score, "ordered by score");
    }
}

#[test]
fn a_common_term_does_not_drown_a_rare_one() {
    let mut g = graph();
    let statements: Vec<Statement> = (0..2500)
        .map(|i| Statement {
            sentence: format!("Person{i} likes coffee"),
            facts: vec![fact(&format!("Person{i}"), "likes", "coffee")],
            events: vec![],
        })
        .chain(std::iter::once(Statement {
            sentence: "Zelda likes coffee from Quixaba".into(),
            facts: vec![fact("Zelda", "likes", "Quixaba coffee")],
            events: vec![],
        }))
        .collect();
    g.graph.tell(&statements, &source(None)).unwrap();
    let hits = g.graph.recall("coffee from quixaba", T0, 3).unwrap();
    assert_eq!(hits[0].subject, "Zelda", "{hits:#?}");
    // With only the common term, the newest are returned instead of a bm25 over thousands.
    let hits = g.graph.recall("coffee", T0, 5).unwrap();
    assert_eq!(hits.len(), 5);
}

#[test]
fn without_the_speaker_expanded_i_reads_only_what_the_query_names() {
    let mut g = graph();
    let statements: Vec<Statement> = [
        ("I work at Acme.", "works_at", "Acme"),
        ("Home is Porto these days.", "lives_in", "Porto"),
        ("My favourite drink is tea.", "likes", "Tea"),
    ]
    .into_iter()
    .map(|(sentence, predicate, object)| Statement {
        sentence: sentence.into(),
        facts: vec![fact("user", predicate, object)],
        events: vec![],
    })
    .collect();
    g.graph.tell(&statements, &source(None)).unwrap();
    let narrow = RecallLimits {
        expand_speaker: false,
        ..RecallLimits::default()
    };
    let objects = |query: &str, limits: RecallLimits| -> Vec<String> {
        // Asked ten days after the facts were told.
        let hits = g
            .graph
            .recall_with(query, T0 + 10 * DAY, 8, limits)
            .unwrap();
        hits.into_iter().map(|h| h.object).collect()
    };

    let unrelated = "what should I cook tonight";
    assert!(
        objects(unrelated, RecallLimits::default()).contains(&"Acme".to_owned()),
        "expanded, \"I\" reads the speaker's facts"
    );
    assert_eq!(objects(unrelated, narrow), Vec::<String>::new());
    // "Today" holds every current fact of the speaker, but none began or ended today.
    assert_eq!(
        objects("what did I start today", narrow),
        Vec::<String>::new()
    );
    // The slot the query names is read, and the walk does not go on through the speaker.
    let live = objects("where do I live", narrow);
    assert!(live.contains(&"Porto".to_owned()), "{live:?}");
    assert!(!live.contains(&"Acme".to_owned()), "{live:?}");
    assert!(objects("where do I live", RecallLimits::default()).contains(&"Acme".to_owned()));
}
