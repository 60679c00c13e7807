//! Forgetting: a forgotten fact never returns through the heartbeat, and its words are taken
//! out of cold context (the unsaid notes), even after a killed run or a store that refuses.

use super::*;

#[test]
fn a_forgotten_fact_never_returns_through_the_heartbeat() {
    let mut s = scratch("forget");
    s.say(T0, "I live in Porto.");
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let hits = s.recall("where do I live", due);
    let id = find(&hits, "Porto")["id"].as_str().unwrap().to_string();
    let gone = s.ask(GraphRequest::Forget { id: id.clone() }, due);
    assert_eq!(gone["removed"], "user lives_in Porto", "{gone}");
    assert_eq!(gone["cold_items"], json!([1]));
    // The same cold item distilled again (a better distiller, a retry) stays forgotten.
    let graph = s.graph.store.as_mut().unwrap();
    let item = cold_item(&s.cold.store().cold_get(1).unwrap().unwrap(), graph);
    graph
        .redistill(&RuleDistiller::default(), &[item], due)
        .unwrap();
    s.tick(due + 2 * TICK.as_millis() as i64);
    let after = s.recall("where do I live", due + 3 * TICK.as_millis() as i64);
    assert!(after.iter().all(|h| h["object"] != "Porto"), "{after:#?}");
    let again = s.graph.request(GraphRequest::Forget { id }, "", due);
    assert!(
        again.unwrap_err().to_string().contains("r1"),
        "a second forget names the missing id"
    );
}

/// The cold entries whose text holds `words`.
fn entries_saying(s: &Scratch, words: &str) -> usize {
    let last = s.cold.store().cold_count().expect("count") as i64;
    (1..=last)
        .filter_map(|id| s.cold.store().cold_get(id).expect("get"))
        .filter(|e| e.text.contains(words) || e.event.input.contains(words))
        .count()
}

/// Forgets the fact about `object` through the graph alone, as if the process died before
/// the memory store's side ran.
fn forget_in_graph_only(s: &mut Scratch, object: &str, at: i64) {
    let hits = s.recall("where do I live", at);
    let id = find(&hits, object)["id"].as_str().unwrap().to_owned();
    s.ask(GraphRequest::Forget { id }, at);
}

#[test]
fn forgotten_words_left_by_a_killed_run_are_taken_out_at_the_next_idle_moment() {
    let mut s = scratch("unsaid-restart");
    s.say(T0, "I live in Zorblaxton. I like tea.");
    s.tick(T0 + TICK.as_millis() as i64);
    forget_in_graph_only(&mut s, "Zorblaxton", T0 + DAY);
    assert_eq!(entries_saying(&s, "Zorblaxton"), 1);

    // The next run finds the note and takes the words out when idle, outside any group.
    s.restart(T0 + DAY);
    assert!(s.graph.unsaid_due());
    s.graph.unsay_idle(&mut s.cold, T0 + 4 * DAY);
    assert_eq!(entries_saying(&s, "Zorblaxton"), 0);
    assert_eq!(
        entries_saying(&s, "I like tea"),
        1,
        "the rest of the turn stays"
    );
    assert!(!s.graph.unsaid_due());
    let store = s.graph.store.as_ref().unwrap();
    assert!(store.unsaid().unwrap().is_empty(), "marked done");
}

#[test]
fn a_failed_commit_leaves_the_notes_for_the_next_idle_moment() {
    let mut s = scratch("unsaid-failed");
    s.say(T0, "I live in Zorblaxton.");
    s.tick(T0 + TICK.as_millis() as i64);
    forget_in_graph_only(&mut s, "Zorblaxton", T0 + DAY);

    let out = s
        .graph
        .unsay_in_group(&mut s.cold)
        .expect("redacted")
        .expect("notes");
    assert_eq!(out.words["cold_entries"], 1, "{}", out.words);
    let lost = hearth_memory::StoreError::GroupLost {
        op: "commit_group",
        path: s.dir.join("memory.db"),
    };
    (out.settle)(&Err(lost));
    assert!(s.graph.unsaid_due(), "the group's rewrite was rolled back");
    s.graph.unsay_idle(&mut s.cold, T0 + 4 * DAY);
    assert!(!s.graph.unsaid_due());
    assert!(s.graph.store.as_ref().unwrap().unsaid().unwrap().is_empty());

    // A committed one is marked done at the owner's next step.
    s.say(T0 + 2 * DAY, "I live in Quuxville.");
    s.tick(T0 + 2 * DAY + TICK.as_millis() as i64);
    forget_in_graph_only(&mut s, "Quuxville", T0 + 3 * DAY);
    let out = s.graph.unsay_in_group(&mut s.cold).unwrap().unwrap();
    (out.settle)(&Ok(()));
    assert!(s.graph.unsaid_due(), "done, not yet marked");
    s.graph.settle_unsaid();
    assert!(s.graph.store.as_ref().unwrap().unsaid().unwrap().is_empty());
    assert!(
        s.graph.unsaid_due(),
        "the store's log is still to be truncated"
    );
    s.graph.unsay_idle(&mut s.cold, T0 + 4 * DAY);
    assert!(!s.graph.unsaid_due());
}

#[test]
fn a_memory_entry_forgotten_by_the_user_takes_the_facts_only_it_told() {
    let mut s = scratch("forget-entry");
    let zorb = s.say(T0, "I live in Zorblaxton. I like tea.");
    let tea = s.say(T0 + DAY, "I like tea.");
    s.tick(T0 + DAY + TICK.as_millis() as i64);
    let at = T0 + 2 * DAY;
    assert!(
        s.recall("where do I live", at)
            .iter()
            .any(|h| h["object"] == "Zorblaxton")
    );

    let (reply, answer) = crossbeam_channel::bounded(1);
    let mut after = Vec::new();
    crate::memory_forget::forget_entry(
        &mut s.graph,
        &mut s.cold,
        crate::entry_ref::EntryRef::Cold(zorb),
        reply,
        &mut after,
    );
    assert!(answer.try_recv().is_err(), "answered only after the commit");
    for then in after {
        then(&Ok(()));
    }
    let told = answer.try_recv().expect("answered").expect("forgotten");
    assert_eq!(told["forgotten"], true, "{told}");
    let facts: Vec<&str> = told["facts_forgotten"]
        .as_array()
        .expect("facts")
        .iter()
        .filter_map(|f| f["removed"].as_str())
        .collect();
    assert_eq!(
        facts,
        ["user lives_in Zorblaxton"],
        "tea was said again: {told}"
    );
    assert!(s.cold.store().cold_get(zorb).expect("get").is_none());
    assert!(s.cold.store().cold_get(tea).expect("get").is_some());
    let hits = s.recall("where do I live what do I like", at);
    assert!(
        hits.iter().all(|h| h["object"] != "Zorblaxton"),
        "{hits:#?}"
    );
    assert!(hits.iter().any(|h| h["object"] == "tea"), "{hits:#?}");
}

#[test]
fn a_store_that_refuses_the_rewrite_is_tried_again_later_and_less_often() {
    let mut s = scratch("unsaid-backoff");
    s.say(T0, "I live in Zorblaxton.");
    s.tick(T0 + TICK.as_millis() as i64);
    forget_in_graph_only(&mut s, "Zorblaxton", T0 + DAY);
    s.restart(T0 + DAY);
    // The store refuses every rewrite of cold context, as a full disk would.
    let side = rusqlite::Connection::open(s.dir.join("memory.db")).expect("side connection");
    side.execute_batch(
        "CREATE TRIGGER refuse BEFORE UPDATE ON cold BEGIN SELECT RAISE(ABORT, 'disk full'); END;",
    )
    .expect("trigger");
    let t = T0 + 2 * DAY;
    assert_eq!(s.graph.unsaid_wait(t), Some(Duration::ZERO));
    s.graph.unsay_idle(&mut s.cold, t);
    assert_eq!(s.graph.unsaid_wait(t), Some(Duration::from_secs(1)));
    s.graph.unsay_idle(&mut s.cold, t + 1_000);
    assert_eq!(
        s.graph.unsaid_wait(t + 1_000),
        Some(Duration::from_secs(2)),
        "each failure waits twice as long"
    );

    side.execute_batch("DROP TRIGGER refuse;").expect("drop");
    s.graph.unsay_idle(&mut s.cold, t + 2_000);
    assert_eq!(
        entries_saying(&s, "Zorblaxton"),
        1,
        "not tried before its time"
    );
    s.graph.unsay_idle(&mut s.cold, t + 3_000);
    assert_eq!(entries_saying(&s, "Zorblaxton"), 0);
    assert!(s.graph.store.as_ref().unwrap().unsaid().unwrap().is_empty());
}
