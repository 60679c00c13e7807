//! A conversation whose facts change over weeks, in English and in Chinese: recall returns the
//! new value as current and the old one as past, each with the sentence it came from.

use hearth_graph::{FactHit, FactId, FactStatus};

use crate::support::{DAY, T0, assert_invariants, graph, item};

fn find<'a>(hits: &'a [FactHit], predicate: &str, object: &str) -> &'a FactHit {
    hits.iter()
        .find(|h| h.predicate == predicate && h.object == object)
        .unwrap_or_else(|| panic!("no {predicate} {object} in {hits:#?}"))
}

#[test]
fn english_porto_then_lisbon() {
    let mut g = graph();
    let items = [
        item(
            1,
            T0,
            "Hi! My name is Ana. I live in Porto and I work at Acme.",
        ),
        item(2, T0 + DAY, "I like hiking."),
        item(3, T0 + 21 * DAY, "I live in Porto, near the river."),
        item(4, T0 + 35 * DAY, "Big news: I moved to Lisbon last week."),
    ];
    let report = g.graph.distill_items(&items).unwrap();
    assert_eq!((report.distilled, report.kept_for_retry), (4, 0));
    assert_eq!(
        report.facts.merged.len(),
        1,
        "Porto said twice is merged: {report:?}"
    );

    let hits = g
        .graph
        .recall("where do I live?", T0 + 36 * DAY, 10)
        .unwrap();
    let lisbon = find(&hits, "lives_in", "Lisbon");
    let porto = find(&hits, "lives_in", "Porto");
    assert_eq!(lisbon.status, FactStatus::Current);
    assert_eq!(porto.status, FactStatus::Past);
    assert_eq!(lisbon.sentence, "Big news: I moved to Lisbon last week");
    assert_eq!(porto.sentence, "I live in Porto and I work at Acme");
    assert_eq!(porto.mentions, 2);
    // Last week, seen from Tuesday 2024-02-06, began on Monday 2024-01-29.
    let last_monday = T0 + 27 * DAY - 9 * 3_600_000;
    assert_eq!(lisbon.valid_from_ms, last_monday);
    assert_eq!(
        porto.valid_to_ms,
        Some(last_monday),
        "Porto ends when Lisbon begins"
    );
    let moved = hits
        .iter()
        .find(|h| h.status == FactStatus::Event)
        .expect("the move is a dated event");
    assert_eq!(
        (moved.object.as_str(), moved.when_phrase.as_str()),
        ("moved to Lisbon", "last week")
    );

    // Asked before the move, Porto was the answer of its time: validity is kept, not lost.
    let why = g.graph.why(porto.id).unwrap();
    let said: Vec<_> = why
        .sources
        .iter()
        .map(|s| (s.cold_item, s.sentence.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            (Some(1), "I live in Porto and I work at Acme"),
            (Some(3), "I live in Porto, near the river")
        ]
    );
    assert_eq!(why.status, FactStatus::Past);
    let stats = g.graph.stats().unwrap();
    assert_eq!((stats.past, stats.superseded), (1, 0));
    assert_invariants(g.graph.path());
}

#[test]
fn chinese_porto_then_lisbon() {
    let mut g = graph();
    let items = [
        item(1, T0, "我叫小明。我住在波尔图。"),
        item(2, T0 + 20 * DAY, "我喜欢爬山，我住在波尔图"),
        item(3, T0 + 35 * DAY, "告诉你，我上周搬到了里斯本！"),
    ];
    g.graph.distill_items(&items).unwrap();
    let hits = g.graph.recall("我住在哪里？", T0 + 36 * DAY, 10).unwrap();
    let lisbon = find(&hits, "lives_in", "里斯本");
    let porto = find(&hits, "lives_in", "波尔图");
    assert_eq!(
        (lisbon.status, porto.status),
        (FactStatus::Current, FactStatus::Past)
    );
    assert_eq!(lisbon.sentence, "告诉你，我上周搬到了里斯本");
    assert_eq!(porto.sentence, "我住在波尔图");
    assert_eq!(porto.mentions, 2);
    assert_eq!(porto.valid_to_ms, Some(lisbon.valid_from_ms));
    assert!(hits.iter().any(|h| h.status == FactStatus::Event
        && h.object == "搬到里斯本"
        && h.when_phrase == "上周"));
    assert_invariants(g.graph.path());
}

#[test]
fn a_correction_supersedes_and_is_never_current() {
    let mut g = graph();
    g.graph
        .distill_items(&[item(1, T0, "I live in Braga.")])
        .unwrap();
    g.graph
        .distill_items(&[item(2, T0 + DAY, "Actually, I live in Porto.")])
        .unwrap();
    let hits = g.graph.recall("where do I live", T0 + 2 * DAY, 10).unwrap();
    assert!(
        hits.iter().all(|h| h.object != "Braga"),
        "a superseded fact is not recalled: {hits:#?}"
    );
    let porto = find(&hits, "lives_in", "Porto");
    assert_eq!(porto.status, FactStatus::Current);
    assert_eq!(
        porto.valid_from_ms, T0,
        "a correction takes over the interval it corrects"
    );
    let stats = g.graph.stats().unwrap();
    assert_eq!((stats.current, stats.superseded), (1, 1));
    let braga = FactId::Relation(1);
    let why = g.graph.why(braga).unwrap();
    assert_eq!(why.superseded_by, Some(porto.id));
}

#[test]
fn no_longer_closes_without_a_new_value() {
    let mut g = graph();
    g.graph
        .distill_items(&[item(1, T0, "I work at Acme.")])
        .unwrap();
    g.graph
        .distill_items(&[item(2, T0 + 10 * DAY, "I no longer work at Acme.")])
        .unwrap();
    let hits = g
        .graph
        .recall("where do I work", T0 + 11 * DAY, 10)
        .unwrap();
    let acme = find(&hits, "works_at", "Acme");
    assert_eq!(acme.status, FactStatus::Past);
    assert_eq!(acme.valid_to_ms, Some(T0 + 10 * DAY));
    assert_eq!(
        acme.sentence, "I work at Acme",
        "the asserting sentence, not the ending one"
    );
}

#[test]
fn an_older_item_distilled_late_becomes_history() {
    let mut g = graph();
    g.graph
        .distill_items(&[item(2, T0 + 30 * DAY, "I moved to Lisbon yesterday.")])
        .unwrap();
    g.graph
        .distill_items(&[item(1, T0, "I live in Porto.")])
        .unwrap();
    let hits = g
        .graph
        .recall("where do I live", T0 + 31 * DAY, 10)
        .unwrap();
    assert_eq!(
        find(&hits, "lives_in", "Lisbon").status,
        FactStatus::Current
    );
    let porto = find(&hits, "lives_in", "Porto");
    assert_eq!(porto.status, FactStatus::Past);
    assert_eq!(
        porto.valid_to_ms,
        Some(find(&hits, "lives_in", "Lisbon").valid_from_ms)
    );
    assert_invariants(g.graph.path());
}

#[test]
fn a_query_naming_a_time_finds_what_happened_then() {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I went to Kyoto yesterday."),
            item(2, T0 + 40 * DAY, "I bought a bicycle."),
        ])
        .unwrap();
    let hits = g
        .graph
        .recall("what did I do in January", T0 + 60 * DAY, 3)
        .unwrap();
    let top: Vec<&str> = hits.iter().take(2).map(|h| h.object.as_str()).collect();
    assert!(
        top.contains(&"went to Kyoto") && top.contains(&"Kyoto"),
        "{hits:#?}"
    );
    let kyoto = hits.iter().find(|h| h.object == "went to Kyoto").unwrap();
    assert_eq!(
        kyoto.valid_from_ms,
        T0 - 9 * 3_600_000 - DAY,
        "dated by 'yesterday', not by when it was said"
    );
}
