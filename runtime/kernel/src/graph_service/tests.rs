//! The graph memory over a real cold context and a real graph file: the heartbeat, the tools'
//! requests, the indexer block, and a graph file that cannot be used.

use super::*;
use hearth_memory::{ContextEvent, Store};

const DAY: i64 = 86_400_000;
const T0: i64 = 1_780_000_000_000;
const TICK: Duration = Duration::from_secs(600);

struct Scratch {
    dir: PathBuf,
    cold: ColdContext,
    graph: GraphMemory,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn scratch(tag: &str) -> Scratch {
    scratch_in(tag, 0)
}

/// A scratch graph for a user `utc_offset_secs` east of UTC.
fn scratch_in(tag: &str, utc_offset_secs: i64) -> Scratch {
    scratch_zoned(tag, LocalZone::fixed(utc_offset_secs))
}

/// A scratch graph for a user in `zone`.
fn scratch_zoned(tag: &str, zone: LocalZone) -> Scratch {
    let dir = std::env::temp_dir().join(format!("hearth-graph-svc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let cold = ColdContext::new(Store::open(dir.join("memory.db")).expect("store"), None);
    let settings = GraphSettings {
        path: dir.join("graph.db"),
        interval: TICK,
        model: None,
        scene_half_life: None,
    };
    let mut graph = GraphMemory::open(Some(&settings), zone, T0, None);
    let mut cold = cold;
    // The first idle step finds no notes an earlier run left: nothing is due after it.
    graph.unsay_idle(&mut cold, T0);
    Scratch { dir, cold, graph }
}

impl Scratch {
    /// Says `text` at `at` and archives it to cold context, as a prune would.
    fn say(&mut self, at: i64, text: &str) -> i64 {
        let event = ContextEvent::new(at, "cli", text).with_response("ok");
        self.cold
            .archive_events(vec![event], "prune", at)
            .expect("archived")[0]
    }

    /// Opens the graph file again at `at`, as the next run of the daemon does.
    fn restart(&mut self, at: i64) {
        let settings = GraphSettings {
            path: self.dir.join("graph.db"),
            interval: TICK,
            model: None,
            scene_half_life: None,
        };
        self.graph = GraphMemory::open(Some(&settings), LocalZone::fixed(0), at, None);
    }

    /// Runs the heartbeat at `at` (after its interval has passed).
    fn tick(&mut self, at: i64) {
        self.graph.tick_if_due(&self.cold, at);
    }

    fn ask(&mut self, req: GraphRequest, at: i64) -> Value {
        self.graph.request(req, "", at).expect("graph answers")
    }

    fn recall(&mut self, query: &str, at: i64) -> Vec<Value> {
        let found = self.ask(
            GraphRequest::Recall {
                query: query.into(),
                k: 10,
                for_model: true,
            },
            at,
        );
        found.as_array().expect("a list").clone()
    }
}

fn find<'a>(hits: &'a [Value], object: &str) -> &'a Value {
    hits.iter()
        .find(|h| h["object"] == object)
        .unwrap_or_else(|| panic!("no {object} in {hits:#?}"))
}

fn moved_house(lang: &str, porto: &str, lisbon: &str, says: [&str; 2], ask: &str) {
    let mut s = scratch(lang);
    s.say(T0, says[0]);
    s.tick(T0 + TICK.as_millis() as i64);
    s.say(T0 + 30 * DAY, says[1]);
    s.tick(T0 + 30 * DAY + 1);
    let hits = s.recall(ask, T0 + 31 * DAY);
    let now = find(&hits, lisbon);
    let before = find(&hits, porto);
    assert_eq!(now["status"], "current", "{hits:#?}");
    assert_eq!(before["status"], "past", "{hits:#?}");
    assert!(says[1].contains(now["sentence"].as_str().unwrap()), "{now}");
    assert!(
        says[0].contains(before["sentence"].as_str().unwrap()),
        "{before}"
    );
    let why = s.ask(
        GraphRequest::Why {
            id: now["id"].as_str().unwrap().into(),
        },
        T0 + 31 * DAY,
    );
    assert_eq!(why["sources"][0]["cold_item"], 2, "{why}");
}

#[test]
fn the_heartbeat_distills_a_move_in_english_into_current_and_past() {
    moved_house(
        "en",
        "Porto",
        "Lisbon",
        ["I live in Porto.", "I moved to Lisbon last week."],
        "where do I live",
    );
}

#[test]
fn the_heartbeat_distills_a_move_in_chinese_into_current_and_past() {
    moved_house(
        "zh",
        "波尔图",
        "里斯本",
        ["我住在波尔图。", "告诉你，我上周搬到了里斯本！"],
        "我住在哪里？",
    );
}

/// Says "I moved to Lisbon on Monday" at `said_ms`, has the heartbeat distill it at
/// `distilled_ms`, and checks the move is dated from `monday_midnight_ms` and shown as
/// Monday 2026-06-01.
fn moved_on_monday(s: &mut Scratch, said_ms: i64, distilled_ms: i64, monday_midnight_ms: i64) {
    s.say(said_ms, "I moved to Lisbon on Monday.");
    s.tick(distilled_ms);
    let hits = s.recall("where do I live", distilled_ms + DAY);
    let moved = hits
        .iter()
        .find(|h| h["status"] == "event")
        .unwrap_or_else(|| panic!("the move is an event: {hits:#?}"));
    assert_eq!(moved["valid_from_ms"], monday_midnight_ms, "{moved}");
    let line = moved["line"].as_str().unwrap_or_default();
    assert!(line.ends_with("(event, 2026-06-01)"), "{line}");
}

/// Tuesday 2026-06-02 19:00 at `utc_offset_secs` east of UTC.
fn tuesday_evening(utc_offset_secs: i64) -> i64 {
    1_780_426_800_000 - utc_offset_secs * 1_000
}

#[test]
fn the_heartbeat_dates_and_shows_what_was_said_in_the_users_zone() {
    let tick = TICK.as_millis() as i64;
    // Honolulu, ten hours west: its Monday began at 10:00 UTC, not at UTC's midnight.
    let honolulu = -10 * 3_600;
    let said = tuesday_evening(honolulu);
    let mut s = scratch_in("honolulu", honolulu);
    moved_on_monday(&mut s, said, said + tick, 1_780_308_000_000);
    // Tokyo, nine hours east: its Monday began on Sunday, 15:00 UTC.
    let tokyo = 9 * 3_600;
    let said = tuesday_evening(tokyo);
    let mut s = scratch_in("tokyo", tokyo);
    moved_on_monday(&mut s, said, said + tick, 1_780_239_600_000);
}

/// What was said is dated in the offset of the day it was said, not of the day it is
/// distilled: a statement from before a daylight-saving change distilled after it keeps its
/// day.
#[test]
fn a_statement_is_dated_in_the_offset_it_was_said_in() {
    // Two hours east of UTC until a day after the statement, one hour east from then on.
    let said = tuesday_evening(7_200);
    let change = said + DAY;
    let zone = LocalZone::following(move |ms| if ms < change { 7_200 } else { 3_600 });
    let mut s = scratch_zoned("fall-back", zone);
    // Monday 00:00 at two hours east: Sunday 22:00 UTC (at one hour east, 23:00).
    moved_on_monday(
        &mut s,
        said,
        change + TICK.as_millis() as i64,
        1_780_264_800_000,
    );
}

#[test]
fn the_heartbeat_waits_for_its_interval_and_does_nothing_without_new_material() {
    let mut s = scratch("idle");
    s.say(T0, "I live in Porto.");
    s.tick(T0 + 1);
    assert_eq!(s.ask(GraphRequest::Stats, T0)["current"], 0, "not due yet");
    let due = T0 + TICK.as_millis() as i64;
    assert_eq!(s.graph.idle_wait(T0), Some(TICK));
    s.tick(due);
    let stats = s.ask(GraphRequest::Stats, due);
    assert_eq!(
        (stats["current"].as_u64(), stats["cursor"].as_i64()),
        (Some(1), Some(1))
    );
    s.tick(due + TICK.as_millis() as i64);
    let stats = s.ask(GraphRequest::Stats, due);
    assert_eq!(
        (stats["ticks"].as_u64(), stats["idle_ticks"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn an_item_that_gives_nothing_stays_cold_and_is_retried() {
    let mut s = scratch("retry");
    let id = s.say(T0, "hmm, nice weather");
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let stats = s.ask(GraphRequest::Stats, due);
    assert_eq!(stats["items_waiting"], 1, "{stats}");
    assert!(
        s.cold.store().cold_get(id).unwrap().is_some(),
        "never dropped"
    );
}

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
fn a_foreign_graph_file_is_left_alone_and_memory_runs_without_it() {
    let dir = std::env::temp_dir().join(format!("hearth-graph-svc-foreign-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("graph.db");
    std::fs::write(&path, b"not a database at all, just words").unwrap();
    let settings = GraphSettings {
        path: path.clone(),
        interval: TICK,
        model: None,
        scene_half_life: None,
    };
    let mut graph = GraphMemory::open(Some(&settings), LocalZone::default(), T0, None);
    assert_eq!(graph.idle_wait(T0), None, "no heartbeat without a graph");
    let err = graph
        .request(
            GraphRequest::Recall {
                query: "x".into(),
                k: 1,
                for_model: false,
            },
            "",
            T0,
        )
        .unwrap_err();
    assert!(
        matches!(err, crate::GraphMemoryError::Unavailable(_)),
        "{err}"
    );
    assert!(
        err.to_string().contains("graph memory unavailable"),
        "{err}"
    );
    assert_eq!(
        graph.request(GraphRequest::Stats, "", T0).unwrap()["available"],
        false
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"not a database at all, just words"
    );
    let _ = std::fs::remove_dir_all(&dir);
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

#[test]
fn a_callers_mistake_is_invalid_arguments_and_no_graph_is_unavailable() {
    use hearth_stages::HandlerError;
    let mut s = scratch("errors");
    for bad in [
        GraphRequest::Person {
            name: "Nobody".into(),
        },
        GraphRequest::Forget { id: "x9".into() },
        GraphRequest::Forget { id: "r999".into() },
        GraphRequest::SetTrait {
            name: "Ana".into(),
            trait_words: "生日".into(),
            value: "May".into(),
            sentence: String::new(),
        },
    ] {
        let e = s.graph.request(bad.clone(), "", T0).expect_err("refused");
        assert!(
            matches!(HandlerError::from(e), HandlerError::InvalidArguments(_)),
            "{bad:?}"
        );
    }
    let mut off = GraphMemory::open(None, LocalZone::default(), T0, None);
    let e = off
        .request(GraphRequest::Person { name: "Ana".into() }, "", T0)
        .expect_err("no graph");
    assert!(matches!(
        HandlerError::from(e),
        HandlerError::Unavailable(_)
    ));
}

/// A scratch graph whose model distiller hands its tasks to the returned receiver.
fn with_model(tag: &str) -> (Scratch, crossbeam_channel::Receiver<InputEvent>) {
    let mut s = scratch(tag);
    let (tx, rx) = crossbeam_channel::unbounded();
    let settings = GraphSettings {
        path: s.dir.join("graph.db"),
        interval: TICK,
        model: Some(crate::model_distill::ModelDistillSettings {
            interval: TICK,
            min_idle: Duration::from_secs(72 * 3_600),
            merge_interval: Duration::from_secs(7_200),
        }),
        scene_half_life: None,
    };
    s.graph = GraphMemory::open(
        Some(&settings),
        LocalZone::default(),
        T0,
        Some(Sink::new(move |input| {
            let _ = tx.send(input);
        })),
    );
    (s, rx)
}

fn answer(input: &mut InputEvent, content: &str, error: bool) {
    assert!(input.send_reply(crate::input::Reply {
        content: content.into(),
        error,
        ..crate::input::Reply::default()
    }));
}

#[test]
fn cold_items_go_to_the_model_as_one_consolidation_task_and_its_claims_are_kept() {
    let (mut s, tasks) = with_model("model");
    let item = s.say(T0, "Ana started working at the bakery on Rua Nova.");
    s.tick(T0 + DAY);
    assert!(
        tasks.try_recv().is_err(),
        "an item recalled a day ago is not cold yet"
    );

    let now = T0 + 4 * DAY;
    s.tick(now);
    let mut task = tasks.try_recv().expect("one consolidation task");
    assert!(tasks.try_recv().is_err(), "one task for the batch");
    assert_eq!(task.source, hearth_scheduler::CRITICAL_CHANNEL);
    assert_eq!(task.output_channel, hearth_scheduler::CRITICAL_CHANNEL);
    assert_eq!(task.str_field("priority"), Some("L1"));
    assert_eq!(task.str_field("tools"), Some("none"));
    assert!(
        task.content()
            .contains("1: Ana started working at the bakery")
    );
    // While it is out, no second task is asked for the same items.
    s.tick(now + TICK.as_millis() as i64 + 1);
    assert!(tasks.try_recv().is_err());

    assert!(
        s.recall("where does Ana work", now)
            .iter()
            .all(|h| h["object"] != "the bakery"),
        "the rules alone do not find it: the model's answer is what this test checks"
    );
    answer(
        &mut task,
        "Facts:\n1 | Ana | works_at | the bakery\n1 | Ana | likes | cake",
        false,
    );
    s.tick(now + 2 * TICK.as_millis() as i64);
    let hits = s.recall("where does Ana work", now + DAY);
    let bakery = find(&hits, "the bakery");
    assert_eq!(bakery["status"], "current", "{bakery}");
    assert!(
        hits.iter().all(|h| h["object"] != "cake"),
        "an invented claim is dropped"
    );
    let why = s.ask(
        GraphRequest::Why {
            id: bakery["id"].as_str().unwrap().into(),
        },
        now + DAY,
    );
    assert_eq!(why["sources"][0]["cold_item"], item, "{why}");
    let stats = s.ask(GraphRequest::Stats, now + DAY);
    assert_eq!(stats["model"]["items_done"], 1, "{stats}");
    assert_eq!(stats["model"]["answered"], 1, "{stats}");

    // Done, the item is never asked again: no token spent when nothing is new.
    s.tick(now + 10 * TICK.as_millis() as i64);
    assert!(tasks.try_recv().is_err());
    assert_eq!(s.ask(GraphRequest::Stats, now + DAY)["model"]["tasks"], 1);
}

#[test]
fn a_failed_or_empty_consolidation_keeps_its_items_for_a_later_retry() {
    let (mut s, tasks) = with_model("model-retry");
    s.say(T0, "Rui bought a red bicycle.");
    let now = T0 + 4 * DAY;
    s.tick(now);
    let mut task = tasks.try_recv().expect("asked");
    answer(&mut task, "cancelled by stop", true);
    s.tick(now + 1);
    let stats = s.ask(GraphRequest::Stats, now + 2);
    assert_eq!(stats["model"]["items_waiting"], 1, "{stats}");
    // The next look within the hour asks nothing; after it, the item is asked again.
    s.tick(now + TICK.as_millis() as i64 + 2);
    assert!(tasks.try_recv().is_err(), "waiting for its retry");
    s.tick(now + 3_600_000 + TICK.as_millis() as i64 * 2);
    let mut again = tasks.try_recv().expect("retried");
    assert!(again.content().contains("Rui bought a red bicycle."));
    // A reply that never comes (the task was dropped) settles as nothing, too.
    drop(again.take_reply());
    s.tick(now + 3_600_000 + TICK.as_millis() as i64 * 3);
    let stats = s.ask(GraphRequest::Stats, now + 5_000_000);
    assert_eq!(stats["model"]["items_waiting"], 1, "{stats}");
    assert_eq!(stats["model"]["tasks"], 2, "{stats}");
}

#[test]
fn look_alike_names_go_to_the_model_which_decides_merge_or_apart() {
    let (mut s, tasks) = with_model("merge-review");
    for (subject, object) in [
        ("user", "New York City"),
        ("Ana", "New York City"),
        ("user", "New York Cityy"),
        // Alike by name, told apart by the user's life: the model leaves this pair undecided.
        ("user", "Christopher Smith"),
        ("Ana", "Christophe Smith"),
    ] {
        s.ask(
            GraphRequest::Commit {
                subject: subject.into(),
                predicate: "visited".into(),
                object: object.into(),
                sentence: format!("{subject} visited {object}"),
                media: Vec::new(),
            },
            T0,
        );
    }
    let review = T0 + 2 * 3_600_000;
    s.tick(review);
    let mut task = tasks.try_recv().expect("a merge review");
    let prompt = task.content().to_owned();
    assert!(
        prompt.contains("New York Cityy / New York City"),
        "{prompt}"
    );
    assert!(
        prompt.contains("Christophe"),
        "both pairs are asked: {prompt}"
    );
    let pairs: Vec<&str> = prompt.lines().filter(|l| l.contains(" / ")).collect();
    let city = pairs
        .iter()
        .position(|l| l.contains("New York Cityy"))
        .expect("the city pair")
        + 1;
    // The model says the city is one place and leaves the rest undecided.
    answer(&mut task, &format!("{city} | same"), false);
    s.tick(review + 1);
    let stats = s.ask(GraphRequest::Stats, review + 2);
    assert_eq!(stats["model"]["merged"], 1, "{stats}");
    let city = s.ask(
        GraphRequest::Person {
            name: "New York Cityy".into(),
        },
        review + 2,
    );
    assert_eq!(city["name"], "New York City", "an alias now: {city}");

    // Undecided pairs were kept apart: the next review has nothing to ask.
    s.tick(review + 3 * 3_600_000);
    assert!(
        tasks.try_recv().is_err(),
        "no look-alike pair left to ask about"
    );
}

// Scenes: a turn enters its scenes once, its facts are tagged with them when distilled, and the
// block of a later turn in the same scene shows them first.

/// A scratch graph whose scene refs fade with `half_life` on the heartbeat.
fn scratch_fading(tag: &str, half_life: Option<Duration>) -> Scratch {
    let mut s = scratch(tag);
    let settings = GraphSettings {
        path: s.dir.join("graph.db"),
        interval: TICK,
        model: None,
        scene_half_life: half_life,
    };
    s.graph = GraphMemory::open(Some(&settings), LocalZone::default(), T0, None);
    s
}

/// A turn from `source` with request id `turn`.
fn turn(turn: &str, source: &str) -> TurnScene {
    TurnScene {
        turn_id: turn.into(),
        source: source.into(),
        ..TurnScene::default()
    }
}

impl Scratch {
    /// Says `text` in turn `turn` from `source` at `at` and archives it, as a prune would: the
    /// event carries the turn's id, as the turn engine's do.
    fn say_in(&mut self, at: i64, turn: &str, source: &str, text: &str) {
        let mut event = ContextEvent::new(at, source, text).with_response("ok");
        event.id = turn.into();
        self.cold
            .archive_events(vec![event], "prune", at)
            .expect("archived");
    }

    /// One turn's scene entry and block, as the memory pass makes them.
    fn scene_block(&mut self, scene: &TurnScene, query: &str, at: i64) -> String {
        let entered = self.graph.enter_scene(scene, query, 0, at);
        self.graph.block_in(query, entered.as_ref(), 400, at).text
    }

    fn strength(&self, key: &str) -> u64 {
        let graph = self.graph.store.as_ref().expect("a graph");
        graph
            .scenes(usize::MAX)
            .expect("scenes")
            .into_iter()
            .find(|s| s.key == key)
            .unwrap_or_else(|| panic!("no scene {key}"))
            .strength
    }
}

const NO_SHARED_WORD: &str = "any news about the weather tomorrow";

#[test]
fn a_fact_told_on_a_channel_comes_back_on_that_channel_with_no_shared_word() {
    let mut s = scratch("scene-chan");
    let told = "I live in Porto.";
    assert!(
        s.graph
            .enter_scene(&turn("t1", "telegram"), told, 0, T0)
            .is_some()
    );
    s.say_in(T0, "t1", "telegram", told);
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let later = due + 1;
    // Without its scene the query finds nothing: it shares no word with the fact.
    assert_eq!(s.graph.block(NO_SHARED_WORD, 400, later), "");

    let here = s.scene_block(&turn("t2", "telegram"), NO_SHARED_WORD, later);
    assert!(here.starts_with(SCENE_FACTS_HEADER), "{here}");
    assert!(here.contains("lives_in Porto (current"), "{here}");
    let elsewhere = s.scene_block(&turn("t3", "web"), NO_SHARED_WORD, later);
    assert!(!elsewhere.contains("Porto"), "{elsewhere}");

    // Asked with its own words on the channel, the fact is shown once, in the scene's part.
    let both = s.scene_block(&turn("t4", "telegram"), "where do I live", later);
    assert_eq!(both.matches("Porto").count(), 1, "{both}");
    assert!(both.starts_with(SCENE_FACTS_HEADER), "{both}");
    assert!(!both.contains(FACTS_HEADER), "{both}");
}

#[test]
fn a_declared_scene_is_honoured_by_prefix_and_a_bad_key_is_ignored() {
    let mut s = scratch("scene-declared");
    let told = "I live in Porto.";
    let mut first = turn("t1", "cli");
    first.declared = vec!["Project:Hearth/Graph".into(), "!!!".into()];
    let entered = s.graph.enter_scene(&first, told, 0, T0).expect("entered");
    assert_eq!(entered.keys[..2], ["project:hearth/graph", "chan:cli"]);
    let graph = s.graph.store.as_ref().unwrap();
    assert_eq!(
        graph.turn_scenes("t1").unwrap()[..2],
        ["project:hearth/graph", "chan:cli"]
    );
    s.say_in(T0, "t1", "cli", told);
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let mut later = turn("t2", "web");
    later.declared = vec!["project:hearth".into()];
    let block = s.scene_block(&later, NO_SHARED_WORD, due + 1);
    assert!(block.contains("Porto"), "{block}");
    let plain = s.scene_block(&turn("t3", "web"), NO_SHARED_WORD, due + 1);
    assert!(!plain.contains("Porto"), "{plain}");
}

#[test]
fn each_entry_adds_one_to_the_scene_strength() {
    let mut s = scratch("scene-strength");
    for n in 1..=3u64 {
        let t = turn(&format!("t{n}"), "telegram");
        s.graph.enter_scene(&t, "hello there", 0, T0 + n as i64);
        // Created at 1 and entered: 2 after the first turn, N + 1 after N.
        assert_eq!(s.strength("chan:telegram"), n + 1);
    }
    // No scene for an empty query, and none without a graph.
    assert!(
        s.graph
            .enter_scene(&turn("t9", "telegram"), "  ", 0, T0)
            .is_none()
    );
    assert_eq!(s.strength("chan:telegram"), 4);
    let mut off = GraphMemory::open(None, LocalZone::default(), T0, None);
    assert!(
        off.enter_scene(&turn("t1", "telegram"), "hello", 0, T0)
            .is_none()
    );
}

#[test]
fn the_same_situation_over_the_same_graph_gives_the_same_bytes() {
    let mut s = scratch("scene-stable");
    let told = "I live in Porto. I like hiking. I work at Acme.";
    s.graph.enter_scene(&turn("t1", "telegram"), told, 0, T0);
    s.say_in(T0, "t1", "telegram", told);
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let query = "where do I work";
    let first = s.scene_block(&turn("t2", "telegram"), query, due + 1);
    // The second sighting of this situation makes it an emergent scene: the graph's facts are
    // the same, and so is the block.
    let second = s.scene_block(&turn("t3", "telegram"), query, due + 2);
    assert_eq!(first, second);
    assert!(first.starts_with(SCENE_FACTS_HEADER), "{first}");
    // A turn whose scenes hold no fact gets exactly the block it had without scenes.
    let web = s.scene_block(&turn("t6", "web"), query, due + 2);
    assert_eq!(web, s.graph.block(query, 400, due + 2));
    assert!(web.starts_with(FACTS_HEADER), "{web}");
    let ids: Vec<u32> = first
        .lines()
        .filter_map(|l| l.split(['[', ']']).nth(1))
        .map(|id| id[1..].parse().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "by id: {first}");
    let small = s.scene_block(&turn("t4", "telegram"), query, due + 3);
    let entered = s
        .graph
        .enter_scene(&turn("t5", "telegram"), query, 0, due + 3);
    let tight = s.graph.block_in(query, entered.as_ref(), 40, due + 3).text;
    assert!(estimate_tokens(&tight) <= 40, "{tight}");
    assert!(!small.is_empty());
}

/// The weight of the heaviest fact of scene `key`.
fn scene_weight(s: &Scratch, key: &str) -> f64 {
    let graph = s.graph.store.as_ref().unwrap();
    graph.recall_by_scene(&[key], 8, 0).unwrap().relations[0].score
}

/// Tells a fact in a scene at T0, distills it, and ticks again `days` later: the stats then,
/// and the fact's weight in the scene before and after.
fn fade_after(s: &mut Scratch, days: i64) -> (Value, f64, f64) {
    s.graph
        .enter_scene(&turn("t1", "telegram"), "I live in Porto.", 0, T0);
    s.say_in(T0, "t1", "telegram", "I live in Porto.");
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let refs = s.ask(GraphRequest::Stats, due)["scene_refs"].clone();
    assert!(refs.as_u64().unwrap() > 0, "the fact was tagged");
    let before = scene_weight(s, "chan:telegram");
    s.tick(due + days * DAY + TICK.as_millis() as i64);
    let stats = s.ask(GraphRequest::Stats, due + days * DAY);
    assert_eq!(stats["scene_refs"], refs, "halved, not dropped: {stats}");
    (stats, before, scene_weight(s, "chan:telegram"))
}

#[test]
fn scene_refs_fade_on_the_heartbeat_after_their_half_life_and_not_when_off() {
    let mut s = scratch_fading("scene-fade", Some(Duration::from_secs(86_400)));
    let (stats, before, after) = fade_after(&mut s, 2);
    assert_eq!(stats["scene_half_life_ms"], DAY, "{stats}");
    assert_eq!(stats["scene_refs_halved"], stats["scene_refs"], "{stats}");
    assert!(before > 0.1, "{before}");
    assert_eq!(after, before / 2.0);

    let mut fresh = scratch_fading("scene-fade-soon", Some(Duration::from_secs(86_400)));
    // Within the half-life nothing fades.
    let (stats, before, after) = fade_after(&mut fresh, 0);
    assert_eq!(stats["scene_refs_halved"], 0, "{stats}");
    assert_eq!(after, before);

    let mut off = scratch_fading("scene-fade-off", None);
    let (stats, before, after) = fade_after(&mut off, 30);
    assert_eq!(after, before);
    assert_eq!(
        (&stats["scene_refs_halved"], &stats["scene_half_life_ms"]),
        (&json!(0), &Value::Null),
        "{stats}"
    );
    // Zero is off too.
    let mut zero = scratch_fading("scene-fade-zero", Some(Duration::ZERO));
    assert_eq!(fade_after(&mut zero, 30).0["scene_refs_halved"], 0);
}

#[test]
fn the_stats_count_scenes_and_list_the_recent_ones() {
    let mut s = scratch("scene-stats");
    assert_eq!(s.ask(GraphRequest::Stats, T0)["scenes"], 0);
    let mut t = turn("t1", "telegram");
    t.declared = vec!["work".into()];
    s.graph.enter_scene(&t, "hello there", 0, T0);
    let stats = s.ask(GraphRequest::Stats, T0);
    assert_eq!(stats["scenes"], 2, "{stats}");
    assert_eq!(stats["scene_turns"], 1, "{stats}");
    let listed = stats["recent_scenes"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|sc| sc["key"] == "work" && sc["origin"] == "declared" && sc["strength"] == 2),
        "{stats}"
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
    crate::memory_forget::forget_entry(&mut s.graph, &mut s.cold, zorb, reply, &mut after);
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
