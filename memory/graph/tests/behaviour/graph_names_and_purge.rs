//! Bad input gets a clear error and loses nothing: names are validated, and a purge whose
//! criteria match nothing is refused instead of running wider.

use hearth_graph::{GraphError, PurgeCriteria, Statement, USER};

use crate::support::{T0, count, fact, graph, item, peek, source};

#[test]
fn invalid_names_and_predicates_are_rejected_with_reasons() {
    let mut g = graph();
    let long = "x".repeat(65);
    let bad = [
        fact("", "likes", "tea"),
        fact("Ana", "likes", "   "),
        fact("An\u{0}a", "likes", "tea"),
        fact("Ana", "likes", "te\na"),
        fact("Ana", "likes", &long),
        fact("Ana", "Likes!", "tea"),
    ];
    let st = Statement {
        sentence: "s".into(),
        facts: bad.to_vec(),
        events: vec![],
    };
    let told = g.graph.tell(&[st], &source(None)).unwrap();
    assert!(told.inserted.is_empty());
    assert_eq!(told.rejected.len(), bad.len(), "{:?}", told.rejected);
    assert!(
        told.rejected
            .iter()
            .any(|r| r.contains("control characters"))
    );
    assert!(told.rejected.iter().any(|r| r.contains("longer than 64")));
    assert!(told.rejected.iter().any(|r| r.contains("empty")));
    assert!(
        told.rejected
            .iter()
            .any(|r| r.contains("lower-case identifier"))
    );
    let conn = peek(g.graph.path());
    assert_eq!(
        count(&conn, "SELECT count(*) FROM entities"),
        0,
        "a rejected fact leaves no entity"
    );
    // A good fact beside bad ones is kept.
    let st = Statement {
        sentence: "s".into(),
        facts: vec![fact("", "likes", "x"), fact("Ana", "likes", "tea")],
        events: vec![],
    };
    assert_eq!(
        g.graph.tell(&[st], &source(None)).unwrap().inserted.len(),
        1
    );
}

/// The user likes tea and jazz and lives in Porto; their sister Ana likes tea too.
fn two_people_who_like_tea() -> crate::support::TestGraph {
    let mut g = graph();
    g.graph
        .distill_items(&[
            item(1, T0, "I like tea. I like jazz. I live in Porto."),
            item(2, T0 + 1, "My sister Ana likes tea."),
        ])
        .unwrap();
    g
}

#[test]
fn purge_never_widens() {
    let mut g = two_people_who_like_tea();
    let before = g.graph.stats().unwrap();
    let refused =
        |g: &mut crate::support::TestGraph, c: PurgeCriteria| g.graph.purge(&c).unwrap_err();

    assert!(matches!(
        refused(&mut g, PurgeCriteria::default()),
        GraphError::NoCriteria
    ));
    // "Bob" matches nothing: the original purged every `likes` relation here.
    let e = refused(
        &mut g,
        PurgeCriteria {
            subject: Some("Bob".into()),
            predicate: Some("likes".into()),
            ..Default::default()
        },
    );
    assert!(
        matches!(&e, GraphError::MatchesNothing { criterion } if criterion.contains("Bob")),
        "{e}"
    );
    let e = refused(
        &mut g,
        PurgeCriteria {
            predicate: Some("owns".into()),
            ..Default::default()
        },
    );
    assert!(matches!(e, GraphError::MatchesNothing { .. }));
    let e = refused(
        &mut g,
        PurgeCriteria {
            cold_item: Some(77),
            ..Default::default()
        },
    );
    assert!(matches!(e, GraphError::MatchesNothing { .. }));
    // Each criterion matches, the combination does not.
    let e = refused(
        &mut g,
        PurgeCriteria {
            subject: Some("Ana".into()),
            object: Some("jazz".into()),
            ..Default::default()
        },
    );
    assert!(matches!(e, GraphError::MatchesNothing { .. }));
    let e = refused(
        &mut g,
        PurgeCriteria {
            subject: Some("\u{7}".into()),
            ..Default::default()
        },
    );
    assert!(matches!(e, GraphError::InvalidName { .. }));
    assert_eq!(
        g.graph.stats().unwrap(),
        before,
        "a refused purge removes nothing"
    );

    let n = g
        .graph
        .purge(&PurgeCriteria {
            subject: Some(USER.into()),
            predicate: Some("likes".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(n.len(), 2);
    let after = g.graph.stats().unwrap();
    assert_eq!(after.current, before.current - 2);
    let hits = g.graph.recall("tea", T0 + 2, 10).unwrap();
    assert!(
        hits.iter().any(|h| h.subject == "Ana" && h.object == "tea"),
        "Ana's tea is not the user's"
    );
    assert!(
        hits.iter()
            .all(|h| !(h.subject == USER && h.predicate == "likes"))
    );
}

#[test]
fn a_foreign_file_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE mine (x); INSERT INTO mine VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    assert!(matches!(
        hearth_graph::GraphStore::open(&path),
        Err(GraphError::Foreign { .. })
    ));
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn the_file_is_private_and_durable() {
    use std::os::unix::fs::PermissionsExt;
    let g = graph();
    let mode = std::fs::metadata(g.graph.path())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
    let conn = peek(g.graph.path());
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    drop(g);
}

#[test]
fn a_soft_purge_ends_what_holds_keeps_its_history_and_never_widens() {
    let mut g = two_people_who_like_tea();
    // A plan dated later never held: ending it would leave it "current" until its start.
    let later = hearth_graph::Fact {
        valid_from: Some(hearth_graph::ResolvedDate {
            start_ms: 4_000_000_000_000,
            end_ms: 4_000_086_400_000,
            phrase: "next year".into(),
        }),
        ..fact(USER, "likes", "opera")
    };
    let st = Statement {
        sentence: "From next year I will like opera.".into(),
        facts: vec![later],
        events: vec![],
    };
    g.graph.tell(&[st], &source(None)).unwrap();
    let before = g.graph.stats().unwrap();
    let now = T0 + 30 * crate::support::DAY;
    let user_likes = PurgeCriteria {
        subject: Some(USER.into()),
        predicate: Some("likes".into()),
        ..Default::default()
    };
    let misspelt = PurgeCriteria {
        subject: Some("Bob".into()),
        predicate: Some("likes".into()),
        ..Default::default()
    };
    assert!(matches!(
        g.graph.end_matching(&misspelt, now),
        Err(GraphError::MatchesNothing { .. })
    ));
    assert!(matches!(
        g.graph.end_matching(&PurgeCriteria::default(), now),
        Err(GraphError::NoCriteria)
    ));
    assert_eq!(
        g.graph.stats().unwrap(),
        before,
        "a refused purge ends nothing"
    );

    assert_eq!(g.graph.end_matching(&user_likes, now).unwrap(), 3);
    let hits = g.graph.recall("tea jazz opera", now, 20).unwrap();
    let mine: Vec<_> = hits
        .iter()
        .filter(|h| h.subject == USER && h.predicate == "likes")
        .collect();
    assert_eq!(mine.len(), 2, "tea and jazz stay as history: {hits:?}");
    assert!(
        mine.iter()
            .all(|h| h.status == hearth_graph::FactStatus::Past && h.object != "opera"),
        "ended, and the plan that never held is gone: {mine:?}"
    );
    assert!(
        hits.iter().any(|h| h.subject == "Ana"
            && h.object == "tea"
            && h.status == hearth_graph::FactStatus::Current),
        "Ana's tea is not the user's"
    );
    let why = g.graph.why(mine[0].id).unwrap();
    assert!(!why.sources.is_empty(), "an ended fact keeps its sources");
    assert_eq!(
        g.graph.end_matching(&user_likes, now).unwrap(),
        0,
        "nothing holds any more"
    );
    crate::support::assert_invariants(g.graph.path());
}
