//! The indexer block a turn is shown: it fits its budget in a stable order, leaves out facts
//! already recalled (the recalled FIFO), and stays empty when the facts do not bear on the turn.

use super::*;

#[test]
fn the_indexer_block_fits_its_budget_in_a_stable_order_and_leaves_out_recalled_facts() {
    let mut s = scratch("block");
    s.say(T0, "I live in Porto. I like hiking. I work at Acme.");
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let block = s.graph.block("where do I live and work", 400, due);
    assert!(block.starts_with("Known facts (from memory):"), "{block}");
    assert!(block.contains("lives_in Porto (current"), "{block}");
    assert_eq!(block, s.graph.block("where do I live and work", 400, due));
    let ids: Vec<&str> = block
        .lines()
        .skip(1)
        .map(|l| l.split(['[', ']']).nth(1).unwrap())
        .collect();
    // What a reply is shown is the block's facts: every fact line, in its order.
    let facts = s.graph.block_in("where do I live and work", None, 400, due);
    let shown: Vec<String> = facts.shown.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ids);
    assert_eq!(facts.text, block);
    // A budget that leaves a fact out does not count it shown.
    let first_line: String = block.lines().take(2).collect::<Vec<_>>().join("\n");
    let fewer = s.graph.block_in(
        "where do I live and work",
        None,
        estimate_tokens(&first_line),
        due,
    );
    assert!(
        !fewer.is_empty() && fewer.shown.len() < ids.len(),
        "{fewer:?}"
    );
    assert_eq!(
        fewer.text.lines().count(),
        fewer.shown.len() + 1,
        "{fewer:?}"
    );
    let mut sorted = ids.clone();
    sorted.sort_by_key(|id| id[1..].parse::<u32>().unwrap());
    assert_eq!(ids, sorted, "stable order by id");
    let small = s.graph.block("where do I live and work", 20, due);
    assert!(estimate_tokens(&small) <= 20, "{small}");
    assert!(s.graph.block("where do I live", 0, due).is_empty());
    let person = GraphRequest::Recall {
        query: "where do I live".into(),
        k: 10,
        for_model: false,
    };
    s.ask(person, due);
    assert_eq!(
        s.graph.block("where do I live and work", 400, due),
        block,
        "a person's search leaves the block as it was"
    );
    let recalled = s.recall("where do I live", due);
    let porto = find(&recalled, "Porto")["id"].as_str().unwrap().to_string();
    let after = s.graph.block("where do I live and work", 400, due);
    assert!(!after.contains(&format!("[{porto}]")), "{after}");
}

#[test]
fn a_first_person_turn_the_facts_do_not_bear_on_gets_no_block_and_the_tool_still_finds_them() {
    let mut s = scratch("speaker");
    s.say(T0, "I live in Porto. I like hiking. I work at Acme.");
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let later = due + 10 * DAY;
    let block = s.graph.block("what should I cook tonight", 400, later);
    assert_eq!(block, "", "nothing the turn's words bear on");
    let work = s.graph.block("where do I work these days", 400, later);
    assert!(work.contains("works_at Acme"), "{work}");
    assert!(
        !work.contains("Porto"),
        "the walk stops at the speaker: {work}"
    );
    // Asked for explicitly, "I" reaches the user's facts.
    let asked = s.recall("what do I do", later);
    assert!(!asked.is_empty(), "the tool reads the speaker's facts");
}

#[test]
fn the_recalled_fifo_keeps_the_newest_1024_ids() {
    let (mut fifo, mut set) = (VecDeque::new(), HashSet::new());
    for n in 0..1_030 {
        remember(&mut fifo, &mut set, FactId::Relation(n));
    }
    remember(&mut fifo, &mut set, FactId::Relation(1_029));
    assert_eq!((fifo.len(), set.len()), (RECALLED_FIFO, RECALLED_FIFO));
    assert!(!set.contains(&FactId::Relation(5)), "the oldest went first");
    assert!(set.contains(&FactId::Relation(6)) && set.contains(&FactId::Relation(1_029)));
}
