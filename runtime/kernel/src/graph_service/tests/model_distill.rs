//! The model distiller: cold items go to the model as one consolidation task whose claims are
//! kept, failures are retried later, and look-alike names are reviewed by the model.

use super::*;

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
