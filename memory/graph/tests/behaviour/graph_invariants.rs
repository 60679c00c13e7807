//! Property tests of the graph invariants over random sequences of statements, forgets and
//! purges: no duplicate open relation, every relation has provenance, one current value per
//! single-valued slot, a superseded fact is never recalled as current, a forgotten fact never
//! returns from the same source, and a purge removes exactly what its criteria name or
//! nothing at all.

use std::collections::BTreeSet;

use hearth_graph::{
    Fact, FactId, FactMode, FactSource, FactStatus, GraphError, PurgeCriteria, ResolvedDate,
    Statement,
};
use proptest::prelude::*;
use rusqlite::Connection;

use crate::support::{DAY, T0, assert_invariants, count, graph, peek};

const SUBJECTS: [&str; 3] = ["Ana", "Bo", "Cy"];
const PREDICATES: [&str; 3] = ["lives_in", "likes", "works_at"];
const OBJECTS: [&str; 4] = ["x", "y", "z", "w"];

#[derive(Clone, Debug)]
enum Op {
    Tell {
        s: usize,
        p: usize,
        o: usize,
        mode: usize,
        cold: i64,
        dt: i64,
        dated: Option<i64>,
    },
    Repeat,
    Forget(usize),
    Purge {
        s: Option<usize>,
        p: Option<usize>,
        o: Option<usize>,
        cold: Option<i64>,
    },
    /// The user removed a cold item.
    ForgetItem(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..3usize, 0..3usize, 0..4usize, 0..4usize, 1..6i64, 0..5i64, proptest::option::of(0..20i64))
            .prop_map(|(s, p, o, mode, cold, dt, dated)| Op::Tell { s, p, o, mode, cold, dt, dated }),
        1 => Just(Op::Repeat),
        2 => (0..64usize).prop_map(Op::Forget),
        2 => (proptest::option::of(0..4usize), proptest::option::of(0..4usize), proptest::option::of(0..5usize), proptest::option::of(1..8i64))
            .prop_map(|(s, p, o, cold)| Op::Purge { s, p, o, cold }),
        1 => (1..7i64).prop_map(Op::ForgetItem),
    ]
}

fn name(list: &[&str], i: usize) -> String {
    list.get(i)
        .map_or_else(|| "nobody".to_owned(), |s| (*s).to_owned())
}

fn relation_ids(conn: &Connection) -> Vec<i64> {
    conn.prepare("SELECT id FROM relations ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The relations a purge should remove, computed independently of the store's code; `None`
/// when some criterion (or all together) matches nothing.
fn expected_purge(conn: &Connection, c: &PurgeCriteria) -> Option<BTreeSet<i64>> {
    let entity = |n: &Option<String>| -> Option<Option<i64>> {
        match n {
            None => Some(None),
            Some(n) => conn
                .query_row("SELECT id FROM entities WHERE norm = lower(?1)", [n], |r| {
                    r.get(0)
                })
                .ok()
                .map(Some),
        }
    };
    let s = entity(&c.subject)?;
    let o = entity(&c.object)?;
    if let Some(p) = &c.predicate
        && count(
            conn,
            &format!("SELECT count(*) FROM relations WHERE predicate = '{p}'"),
        ) == 0
    {
        return None;
    }
    if let Some(k) = c.cold_item
        && count(
            conn,
            &format!("SELECT count(*) FROM provenance WHERE cold_item = {k}"),
        ) == 0
    {
        return None;
    }
    let mut stmt = conn
        .prepare("SELECT r.id, r.subject_id, r.predicate, r.object_id FROM relations r")
        .unwrap();
    let rows: Vec<(i64, i64, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let set: BTreeSet<i64> = rows
        .into_iter()
        .filter(|(id, rs, rp, ro)| {
            s.is_none_or(|s| s == *rs)
                && c.predicate.as_ref().is_none_or(|p| p == rp)
                && o.is_none_or(|o| o == *ro)
                && c.cold_item.is_none_or(|k| {
                    count(conn, &format!("SELECT count(*) FROM provenance WHERE relation_id = {id} AND cold_item = {k}")) > 0
                })
        })
        .map(|(id, ..)| id)
        .collect();
    (!set.is_empty()).then_some(set)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn graph_invariants_hold(ops in proptest::collection::vec(op(), 1..28)) {
        let mut g = graph();
        let mut clock = T0;
        let mut last: Option<(Statement, FactSource)> = None;
        for op in ops {
            match op {
                Op::Tell { s, p, o, mode, cold, dt, dated } => {
                    clock += dt * DAY;
                    let mode = [FactMode::Holds, FactMode::Began, FactMode::Ended, FactMode::Corrects][mode];
                    let fact = Fact {
                        subject: SUBJECTS[s].into(),
                        subject_kind: "person",
                        predicate: PREDICATES[p].into(),
                        object: OBJECTS[o].into(),
                        object_kind: "concept",
                        mode,
                        confidence: 0.7,
                        valid_from: dated.map(|d| ResolvedDate { start_ms: clock - d * DAY, end_ms: clock - d * DAY + DAY, phrase: format!("{d} days ago") }),
                    };
                    let st = Statement { sentence: format!("{} {} {} ({mode:?})", fact.subject, fact.predicate, fact.object), facts: vec![fact], events: vec![] };
                    let source = FactSource { cold_item: Some(cold), turn_id: format!("t{cold}"), said_ms: clock };
                    g.graph.tell(std::slice::from_ref(&st), &source).unwrap();
                    last = Some((st, source));
                }
                Op::Repeat => {
                    let Some((st, source)) = &last else { continue };
                    let before = g.graph.stats().unwrap();
                    let conn = peek(g.graph.path());
                    let mentions = count(&conn, "SELECT coalesce(sum(mentions), 0) FROM relations");
                    let told = g.graph.tell(std::slice::from_ref(st), source).unwrap();
                    prop_assert!(told.inserted.is_empty() && told.merged.is_empty(), "a repeated write is not a new mention: {told:?}");
                    prop_assert_eq!(g.graph.stats().unwrap().current, before.current);
                    prop_assert_eq!(count(&conn, "SELECT coalesce(sum(mentions), 0) FROM relations"), mentions);
                }
                Op::Forget(pick) => {
                    let conn = peek(g.graph.path());
                    let ids = relation_ids(&conn);
                    if ids.is_empty() { continue }
                    let id = ids[pick % ids.len()];
                    let gone = g.graph.forget(FactId::Relation(id)).unwrap();
                    prop_assert!(!relation_ids(&conn).contains(&id));
                    let why = g.graph.why(FactId::Relation(id));
                    prop_assert!(matches!(why, Err(GraphError::NotFound { .. })), "why after forget: {:?}", why);
                    // Told again from any of its sources, it stays forgotten.
                    if let (Some(&cold), Some((st, _))) = (gone.cold_items.first(), &last) {
                        let words: Vec<&str> = gone.fact.split(' ').collect();
                        let mut st = st.clone();
                        st.facts[0].subject = words[0].into();
                        st.facts[0].predicate = words[1].into();
                        st.facts[0].object = words[2].into();
                        st.facts[0].mode = FactMode::Holds;
                        let source = FactSource { cold_item: Some(cold), turn_id: "again".into(), said_ms: clock };
                        let told = g.graph.tell(&[st], &source).unwrap();
                        prop_assert_eq!(told.forgotten, 1);
                        prop_assert!(told.inserted.is_empty());
                    }
                }
                Op::Purge { s, p, o, cold } => {
                    let criteria = PurgeCriteria {
                        subject: s.map(|i| name(&SUBJECTS, i)),
                        predicate: p.map(|i| name(&["lives_in", "likes", "works_at", "owns"], i)),
                        object: o.map(|i| name(&OBJECTS, i)),
                        cold_item: cold,
                    };
                    let conn = peek(g.graph.path());
                    let before: BTreeSet<i64> = relation_ids(&conn).into_iter().collect();
                    let expected = expected_purge(&conn, &criteria);
                    match (g.graph.purge(&criteria), expected) {
                        (Err(GraphError::NoCriteria), _) => prop_assert!(s.is_none() && p.is_none() && o.is_none() && cold.is_none()),
                        (Err(GraphError::MatchesNothing { .. }), None) => {
                            prop_assert_eq!(relation_ids(&conn).into_iter().collect::<BTreeSet<_>>(), before);
                        }
                        (Ok(gone), Some(expected)) => {
                            let ids: BTreeSet<i64> = gone
                                .iter()
                                .map(|f| match f.id {
                                    hearth_graph::FactId::Relation(r) => r,
                                    hearth_graph::FactId::Event(_) => -1,
                                })
                                .collect();
                            prop_assert_eq!(&ids, &expected);
                            let after: BTreeSet<i64> = relation_ids(&conn).into_iter().collect();
                            prop_assert_eq!(after, before.difference(&expected).copied().collect::<BTreeSet<_>>());
                        }
                        (got, want) => prop_assert!(false, "purge {criteria:?}: got {got:?}, expected {want:?}"),
                    }
                }
                Op::ForgetItem(cold) => {
                    let conn = peek(g.graph.path());
                    let only: BTreeSet<i64> = conn
                        .prepare("SELECT DISTINCT relation_id FROM provenance p WHERE cold_item = ?1 \
                                  AND NOT EXISTS (SELECT 1 FROM provenance o \
                                      WHERE o.relation_id = p.relation_id AND o.cold_item IS NOT ?1)")
                        .unwrap()
                        .query_map([cold], |r| r.get(0))
                        .unwrap()
                        .collect::<Result<_, _>>()
                        .unwrap();
                    let before: BTreeSet<i64> = relation_ids(&conn).into_iter().collect();
                    g.graph.forget_cold_item(cold).unwrap();
                    let after: BTreeSet<i64> = relation_ids(&conn).into_iter().collect();
                    prop_assert_eq!(after, before.difference(&only).copied().collect::<BTreeSet<_>>(), "only what it alone told goes");
                    prop_assert_eq!(count(&conn, &format!("SELECT count(*) FROM provenance WHERE cold_item = {cold}")), 0);
                    prop_assert_eq!(count(&conn, &format!("SELECT count(*) FROM events WHERE cold_item = {cold}")), 0);
                    // The item is gone from cold context: nothing distils its write again.
                    if last.as_ref().is_some_and(|(_, source)| source.cold_item == Some(cold)) {
                        last = None;
                    }
                }
            }
            // Every note of unsaid words names a sentence no fact comes from in that turn (the
            // same words said again in another turn are a new statement, kept).
            let conn = peek(g.graph.path());
            prop_assert_eq!(
                count(&conn, "SELECT count(*) FROM unsaid u JOIN sentences s ON s.text = u.sentence \
                              JOIN provenance p ON p.sentence_id = s.id AND p.turn_id = u.turn_id"),
                0
            );
            assert_invariants(g.graph.path());
        }
        // A superseded or closed fact is never recalled as current.
        let conn = peek(g.graph.path());
        for hit in g.graph.recall("Ana Bo Cy x y z w", clock, 100).unwrap() {
            let FactId::Relation(id) = hit.id else { continue };
            let (superseded, valid_to): (Option<i64>, Option<i64>) = conn
                .query_row("SELECT superseded_ms, valid_to_ms FROM relations WHERE id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap();
            prop_assert!(superseded.is_none(), "superseded {id} recalled");
            if hit.status == FactStatus::Current {
                prop_assert!(valid_to.is_none_or(|t| t > clock));
            }
        }
    }
}
