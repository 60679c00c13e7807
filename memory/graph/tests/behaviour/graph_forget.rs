//! Forgetting by the id recall returned: the fact, its events and names go, and distilling the
//! same cold items again never brings it back.

use hearth_graph::{
    FactId, FactMode, FactSource, FactStatus, GraphError, ResolvedDate, RuleDistiller, Statement,
    TellReport, USER,
};

use crate::support::{DAY, T0, assert_invariants, count, fact, graph, item, peek};

#[test]
fn forget_by_id_stays_forgotten() {
    let mut g = graph();
    let items = [
        item(1, T0, "I moved to Porto last week. I like jazz."),
        item(2, T0 + DAY, "I moved to Porto last week, remember?"),
    ];
    g.graph.distill_items(&items).unwrap();
    let hits = g.graph.recall("where do I live", T0 + 2 * DAY, 10).unwrap();
    let porto = hits
        .iter()
        .find(|h| h.object == "Porto")
        .expect("Porto recalled")
        .id;

    let gone = g.graph.forget(porto).unwrap();
    assert_eq!(gone.fact, "user lives_in Porto");
    assert_eq!(gone.cold_items, [1, 2]);
    assert_eq!(gone.sources, 2);
    assert!(matches!(
        g.graph.why(porto),
        Err(GraphError::NotFound { .. })
    ));
    assert!(matches!(
        g.graph.forget(porto),
        Err(GraphError::NotFound { .. })
    ));

    let check = |g: &crate::support::TestGraph| {
        let hits = g
            .graph
            .recall("Porto where do I live moved", T0 + 3 * DAY, 20)
            .unwrap();
        assert!(
            hits.iter().all(|h| !h.object.contains("Porto")),
            "{hits:#?}"
        );
        let conn = peek(g.graph.path());
        assert_eq!(
            count(&conn, "SELECT count(*) FROM entities WHERE norm = 'porto'"),
            0,
            "no name left to find"
        );
        assert_eq!(
            count(&conn, "SELECT count(*) FROM events"),
            0,
            "the move went with the fact"
        );
        assert_eq!(
            count(
                &conn,
                "SELECT count(*) FROM relations WHERE predicate = 'likes'"
            ),
            1,
            "jazz stays"
        );
    };
    check(&g);

    // The same items once more, through the scheduled pass and through a forced re-run of the
    // distiller (as an improved distiller would do): nothing comes back, nothing doubles.
    g.graph.distill_items(&items).unwrap();
    let again = g
        .graph
        .redistill(&RuleDistiller::default(), &items, T0 + 3 * DAY)
        .unwrap();
    assert!(
        again.facts.inserted.is_empty() && again.facts.events.is_empty(),
        "{again:?}"
    );
    assert_eq!(
        again.facts.forgotten, 4,
        "fact and event, from each of the two items"
    );
    check(&g);

    // A statement told directly from the same cold item is refused the same way.
    let fact = hearth_graph::Fact {
        subject: USER.into(),
        subject_kind: "person",
        predicate: "lives_in".into(),
        object: " porto ".into(),
        object_kind: "place",
        mode: FactMode::Holds,
        confidence: 1.0,
        valid_from: None,
    };
    let st = Statement {
        sentence: "I live in porto".into(),
        facts: vec![fact],
        events: vec![],
    };
    let source = FactSource {
        cold_item: Some(2),
        turn_id: "turn-2".into(),
        said_ms: T0 + DAY,
    };
    let told = g.graph.tell(std::slice::from_ref(&st), &source).unwrap();
    assert_eq!((told.inserted.len(), told.forgotten), (0, 1));
    check(&g);

    // Said again in a new turn, it is a new statement and is stored.
    g.graph
        .distill_items(&[item(9, T0 + 5 * DAY, "I live in Porto.")])
        .unwrap();
    assert!(
        g.graph
            .recall("where do I live", T0 + 6 * DAY, 5)
            .unwrap()
            .iter()
            .any(|h| h.object == "Porto")
    );
    assert_invariants(g.graph.path());
}

#[test]
fn forgetting_an_event_keeps_the_fact() {
    let mut g = graph();
    g.graph
        .distill_items(&[item(1, T0, "I moved to Lisbon yesterday.")])
        .unwrap();
    let event = FactId::Event(1);
    assert_eq!(
        g.graph.why(event).unwrap().sources[0].sentence,
        "I moved to Lisbon yesterday"
    );
    g.graph.forget(event).unwrap();
    let hits = g.graph.recall("where do I live", T0 + DAY, 5).unwrap();
    assert!(hits.iter().any(|h| h.object == "Lisbon"));
    assert!(hits.iter().all(|h| h.id != event));
    g.graph
        .redistill(
            &RuleDistiller::default(),
            &[item(1, T0, "I moved to Lisbon yesterday.")],
            T0,
        )
        .unwrap();
    assert_eq!(g.graph.stats().unwrap().events, 0);
}

#[test]
fn ids_that_do_not_parse_are_refused() {
    for bad in ["", "42", "r", "x9", "r-3"] {
        assert!(
            matches!(bad.parse::<FactId>(), Err(GraphError::InvalidId { .. })),
            "{bad}"
        );
    }
}

/// Whether `needle` occurs anywhere in the graph's files (the database, its WAL).
fn in_files(path: &std::path::Path, needle: &str) -> bool {
    ["", "-wal"].iter().any(|suffix| {
        let file = format!("{}{suffix}", path.display());
        std::fs::read(&file).is_ok_and(|bytes| {
            bytes
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        })
    })
}

#[test]
fn a_forgotten_facts_words_are_gone_from_the_files_not_only_from_queries() {
    let mut g = graph();
    // Enough other facts that the forgotten one shares pages and index segments with them.
    let mut items: Vec<_> = (0..40)
        .map(|i| item(i + 10, T0 + i, &format!("I like hobby{i}.")))
        .collect();
    items.push(item(1, T0, "I live in Zorblaxton. I like jazz."));
    g.graph.distill_items(&items).unwrap();
    let path = g.graph.path().to_path_buf();
    assert!(in_files(&path, "zorblaxton"), "the fact is on disk first");

    let hits = g.graph.recall("where do I live", T0 + DAY, 10).unwrap();
    let town = hits
        .iter()
        .find(|h| h.object == "Zorblaxton")
        .expect("recalled")
        .id;
    let gone = g.graph.forget(town).unwrap();
    // The sentence waits, noted as unsaid, until the memory store has taken it out of the
    // turn it was said in; then it goes from the graph's files too.
    assert_eq!(
        gone.unsaid.len(),
        2,
        "the sentence, and the value as the reply may echo it"
    );
    assert!(in_files(&path, "zorblaxton"));
    let ids: Vec<i64> = gone.unsaid.iter().map(|u| u.id).collect();
    g.graph.unsaid_done(&ids).unwrap();
    assert!(
        !in_files(&path, "zorblaxton"),
        "the name, its sentence and its index terms are unreadable after forget"
    );
    // What was not forgotten is still found.
    let jazz = g.graph.recall("what do I like", T0 + DAY, 50).unwrap();
    assert!(jazz.iter().any(|h| h.object == "jazz"));
    assert_invariants(&path);
}

#[test]
fn tombstones_of_an_older_graph_are_digested_and_still_hold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    let said = [item(1, T0, "I live in Porto.")];
    {
        let mut g = hearth_graph::GraphStore::open(&path).unwrap();
        g.distill_items(&said).unwrap();
        let id = g.recall("where do I live", T0, 5).unwrap()[0].id;
        g.forget(id).unwrap();
    }
    // As a version-2 Hearth left it: the tombstone spells its fact.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "{}UPDATE tombstones SET fact_key = 'user' || char(31) || 'lives_in' || char(31) || 'porto'; \
         PRAGMA user_version = 2;",
        crate::support::DROP_V4
    ))
    .unwrap();
    drop(conn);
    let mut g = hearth_graph::GraphStore::open(&path).unwrap();
    assert!(
        !in_files(&path, "porto"),
        "the migration digests the old key"
    );
    let again = g
        .redistill(&RuleDistiller::default(), &said, T0 + DAY)
        .unwrap();
    assert_eq!(again.facts.forgotten, 1, "{again:?}");
    assert!(g.recall("where do I live", T0 + DAY, 5).unwrap().is_empty());
}

/// `Ana lives_in place`, from cold item `cold`, said at `said_ms`, dated `valid_from` if given.
fn lives_in(
    g: &mut crate::support::TestGraph,
    place: &str,
    cold: i64,
    said_ms: i64,
    valid_from: Option<i64>,
) -> (TellReport, Statement, FactSource) {
    let mut f = fact("Ana", "lives_in", place);
    f.valid_from = valid_from.map(|start_ms| ResolvedDate {
        start_ms,
        end_ms: start_ms + DAY,
        phrase: "then".into(),
    });
    let st = Statement {
        sentence: format!("Ana lives in {place}"),
        facts: vec![f],
        events: vec![],
    };
    let source = FactSource {
        cold_item: Some(cold),
        turn_id: format!("t{cold}"),
        said_ms,
    };
    let told = g.graph.tell(std::slice::from_ref(&st), &source).unwrap();
    (told, st, source)
}

/// (valid_from, valid_to) of every `Ana lives_in place` row, oldest first.
fn periods(g: &crate::support::TestGraph, place: &str) -> Vec<(i64, Option<i64>)> {
    let conn = peek(g.graph.path());
    let mut stmt = conn
        .prepare(
            "SELECT r.valid_from_ms, r.valid_to_ms FROM relations r \
             JOIN entities o ON o.id = r.object_id WHERE r.predicate = 'lives_in' \
             AND o.name = ?1 ORDER BY r.valid_from_ms, r.id",
        )
        .unwrap();
    stmt.query_map([place], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn an_older_value_told_late_then_the_newer_forgotten_is_not_stored_twice() {
    // Found by graph_invariants_hold: the newer value, an older dated one told after it (kept
    // as history up to where the newer began), the newer forgotten, the older told again.
    let mut g = graph();
    let (lisbon, ..) = lives_in(&mut g, "Lisbon", 1, T0 + 10 * DAY, None);
    let (porto, st, source) = lives_in(&mut g, "Porto", 2, T0 + 20 * DAY, Some(T0));
    assert_eq!(periods(&g, "Porto"), [(T0, Some(T0 + 10 * DAY))]);
    g.graph.forget(lisbon.inserted[0]).unwrap();
    assert_invariants(g.graph.path());

    // Porto ended only because Lisbon began; with Lisbon forgotten it holds again, as if
    // Lisbon had never been told.
    assert_eq!(periods(&g, "Porto"), [(T0, None)]);
    let hits = g
        .graph
        .recall("where does Ana live", T0 + 21 * DAY, 10)
        .unwrap();
    let hit = hits
        .iter()
        .find(|h| h.id == porto.inserted[0])
        .expect("Porto recalled");
    assert_eq!(hit.status, FactStatus::Current);

    // The same write again is no new mention and no second row.
    let again = g.graph.tell(std::slice::from_ref(&st), &source).unwrap();
    assert!(
        again.inserted.is_empty() && again.merged.is_empty(),
        "{again:?}"
    );
    assert_eq!(periods(&g, "Porto"), [(T0, None)]);
    let conn = peek(g.graph.path());
    assert_eq!(count(&conn, "SELECT sum(mentions) FROM relations"), 1);
    assert_invariants(g.graph.path());
}

#[test]
fn forgetting_a_value_gives_the_slot_back_to_the_value_it_closed() {
    let mut g = graph();
    lives_in(&mut g, "Porto", 1, T0, None);
    let (lisbon, ..) = lives_in(&mut g, "Lisbon", 2, T0 + 10 * DAY, None);
    assert_eq!(periods(&g, "Porto"), [(T0, Some(T0 + 10 * DAY))]);
    g.graph.forget(lisbon.inserted[0]).unwrap();
    assert_eq!(periods(&g, "Porto"), [(T0, None)], "Porto is current again");
    assert_invariants(g.graph.path());
    // Told again later, Porto merges into the row that holds.
    let (again, ..) = lives_in(&mut g, "Porto", 3, T0 + 30 * DAY, None);
    assert!(
        again.inserted.is_empty() && again.merged.len() == 1,
        "{again:?}"
    );
    assert_invariants(g.graph.path());
}

#[test]
fn forgetting_a_past_value_extends_the_one_before_to_the_one_after() {
    let mut g = graph();
    lives_in(&mut g, "Porto", 1, T0, None);
    let (lisbon, ..) = lives_in(&mut g, "Lisbon", 2, T0 + 10 * DAY, None);
    lives_in(&mut g, "Braga", 3, T0 + 20 * DAY, None);
    g.graph.forget(lisbon.inserted[0]).unwrap();
    assert_eq!(periods(&g, "Porto"), [(T0, Some(T0 + 20 * DAY))]);
    assert_eq!(periods(&g, "Braga"), [(T0 + 20 * DAY, None)]);
    assert_invariants(g.graph.path());
}

#[test]
fn a_value_ended_by_its_own_statement_stays_ended_when_the_next_is_forgotten() {
    let mut g = graph();
    lives_in(&mut g, "Porto", 1, T0, None);
    let mut end = fact("Ana", "lives_in", "Porto");
    end.mode = FactMode::Ended;
    let source = FactSource {
        cold_item: Some(2),
        turn_id: "t2".into(),
        said_ms: T0 + 5 * DAY,
    };
    g.graph
        .tell(
            &[Statement {
                sentence: "Ana no longer lives in Porto".into(),
                facts: vec![end],
                events: vec![],
            }],
            &source,
        )
        .unwrap();
    let (lisbon, ..) = lives_in(&mut g, "Lisbon", 3, T0 + 5 * DAY, None);
    g.graph.forget(lisbon.inserted[0]).unwrap();
    assert_eq!(
        periods(&g, "Porto"),
        [(T0, Some(T0 + 5 * DAY))],
        "the end was said, not inferred from Lisbon"
    );
    assert_invariants(g.graph.path());
}

#[test]
fn a_past_value_told_again_after_its_slot_changed_is_not_stored_twice() {
    // Found by graph_invariants_hold: x, then y (closing x), then z dated before both (history
    // up to y), y forgotten (x holds again, z still ends where y began), z told again.
    let mut g = graph();
    lives_in(&mut g, "Lisbon", 1, T0, Some(T0 - DAY));
    let (braga, ..) = lives_in(&mut g, "Braga", 1, T0, None);
    let (_, st, source) = lives_in(&mut g, "Porto", 1, T0, Some(T0 - 2 * DAY));
    g.graph.forget(braga.inserted[0]).unwrap();
    assert_eq!(periods(&g, "Lisbon"), [(T0 - DAY, None)]);
    let again = g.graph.tell(std::slice::from_ref(&st), &source).unwrap();
    assert!(
        again.inserted.is_empty() && again.merged.is_empty(),
        "{again:?}"
    );
    assert_eq!(periods(&g, "Porto"), [(T0 - 2 * DAY, Some(T0))]);
    assert_invariants(g.graph.path());
}

#[test]
fn a_history_value_told_again_after_the_open_value_was_dated_earlier_is_not_stored_twice() {
    let mut g = graph();
    lives_in(&mut g, "Lisbon", 1, T0 + 10 * DAY, None);
    let (_, st, source) = lives_in(&mut g, "Porto", 2, T0 + 20 * DAY, Some(T0));
    // Another source dates Lisbon earlier: the open value now begins before Porto's end.
    lives_in(&mut g, "Lisbon", 3, T0 + 21 * DAY, Some(T0 + 5 * DAY));
    let again = g.graph.tell(std::slice::from_ref(&st), &source).unwrap();
    assert!(
        again.inserted.is_empty() && again.merged.is_empty(),
        "{again:?}"
    );
    assert_eq!(periods(&g, "Porto").len(), 1);
    assert_invariants(g.graph.path());
}
