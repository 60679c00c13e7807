//! The model distiller's store side: an answer's grounded claims stored with the item as
//! their source, an attempt that gave nothing retried later, a forgotten claim never back.

use hearth_graph::{ColdItem, FactStatus, ItemState, model_prompt, parse_model_answer};

use crate::support::{DAY, T0, assert_invariants, graph, item};

fn answer_for(items: &[ColdItem], answer: &str) -> Vec<Vec<hearth_graph::Statement>> {
    let (by_item, _) = parse_model_answer(answer, items);
    (0..items.len())
        .map(|i| by_item.get(&i).cloned().unwrap_or_default())
        .collect()
}

#[test]
fn a_models_grounded_claims_are_stored_with_their_item_and_empty_items_wait() {
    let mut g = graph();
    let items = [
        item(
            7,
            T0,
            "Ana told me she started working at the bakery on Rua Nova.",
        ),
        item(8, T0, "What a rainy day."),
    ];
    let prompt = model_prompt(&items);
    assert!(prompt.contains("1: Ana told me"), "{prompt}");
    let statements = answer_for(
        &items,
        "1 | Ana | works_at | the bakery\n2 | user | likes | rain",
    );
    let now = T0 + 4 * DAY;
    assert_eq!(g.graph.model_due(&[7, 8, 9], now, 10).unwrap(), [7, 8, 9]);

    let first = g
        .graph
        .record_model(&items[0], &statements[0], now)
        .unwrap();
    assert!(first.done && first.told.inserted.len() == 1, "{first:?}");
    let second = g
        .graph
        .record_model(&items[1], &statements[1], now)
        .unwrap();
    assert!(!second.done, "`rain` is not in the words: nothing stored");

    // Done is done; the empty one waits an hour, then is due again.
    assert_eq!(
        g.graph.model_due(&[7, 8], now, 10).unwrap(),
        Vec::<i64>::new()
    );
    assert_eq!(
        g.graph.model_due(&[7, 8], now + 3_600_000, 10).unwrap(),
        [8]
    );
    assert_eq!(g.graph.model_counts().unwrap(), (1, 1));
    // The rules' cursor is the rules' own: the model's record does not move it.
    assert_eq!(g.graph.distill_state(7).unwrap(), None::<ItemState>);

    let hits = g.graph.recall("where does Ana work", now, 5).unwrap();
    let bakery = hits
        .iter()
        .find(|h| h.object == "the bakery")
        .expect("recalled");
    assert_eq!(bakery.status, FactStatus::Current);
    let why = g.graph.why(bakery.id).unwrap();
    assert_eq!(why.sources[0].cold_item, Some(7));
    assert_eq!(
        why.sources[0].sentence,
        "Ana told me she started working at the bakery on Rua Nova."
    );

    // Forgotten, it never comes back from the same item, whoever distils it.
    g.graph.forget(bakery.id).unwrap();
    let again = g
        .graph
        .record_model(&items[0], &statements[0], now + DAY)
        .unwrap();
    assert!(
        again.told.inserted.is_empty() && again.told.forgotten == 1,
        "{again:?}"
    );
    assert_invariants(g.graph.path());
}

#[test]
fn a_version_one_graph_gains_the_model_record_and_keeps_its_facts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    {
        let mut g = hearth_graph::GraphStore::open(&path).unwrap();
        g.distill_items(&[item(1, T0, "I live in Porto.")]).unwrap();
    }
    // Back to version 1 as an older Hearth left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!(
        "{}DROP TABLE model_distilled; PRAGMA user_version = 1;",
        crate::support::DROP_V4
    ))
    .unwrap();
    drop(conn);
    let g = hearth_graph::GraphStore::open(&path).unwrap();
    assert_eq!(g.model_due(&[1], T0, 5).unwrap(), [1]);
    assert_eq!(
        g.recall("where do I live", T0, 5).unwrap()[0].object,
        "Porto"
    );
}
