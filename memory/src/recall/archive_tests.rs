//! Turns leave the window for cold context whole (original time, text and vector): a prune keeps
//! the most relevant, never drops a turn, and never archives a recalled copy a second time.

use super::test_support::{
    ConceptEmbedder, TempDir, concept_embedder, seeded, stored_form, user, user_turns,
};
use super::*;
use crate::ContextEvent;
use crate::test_support::watchdog;

#[test]
fn archive_keeps_original_timestamps_text_and_vectors() {
    watchdog(30, || {
        let dir = TempDir::new("archive");
        let (cold, ids) = seeded(&dir, Some(concept_embedder()));
        assert_eq!(ids.len(), 5);
        let store = cold.store();
        assert_eq!(store.cold_count().expect("count"), 5);
        assert!(store.events_window().expect("window").is_empty());
        let entry = store.cold_get(ids[4]).expect("get").expect("present");
        assert_eq!(entry.event.timestamp_ms, 5_000);
        assert_eq!(entry.text, "my car is in the parking garage level two");
        assert!(entry.tokens.split(' ').any(|t| t == "garage"));
        let dense = entry.dense.expect("dense vector");
        assert_eq!(dense.fingerprint, "concepts:0123456789ab:9:mean");
        // Cold context keeps the vector quantized: exactly the model's vector's stored form.
        assert_eq!(
            dense.values,
            stored_form(&ConceptEmbedder::vector(&entry.text))
        );
        assert_eq!(entry.archived_from, "import");
    });
}

#[test]
fn prune_moves_the_least_relevant_to_cold_and_never_drops() {
    watchdog(30, || {
        let dir = TempDir::new("prune");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let texts = [
            "my kitten is asleep",
            "flight to Lisbon",
            "pizza dinner",
            "office work",
            "piano song",
            "rain today",
            "a novel to read",
            "latest: the car is at the garage",
        ];
        let events = user_turns(0, 1000, &texts);
        cold.append(events).expect("append");
        // Keep 4: the last 2 protected, plus the 2 candidates most about pets and food.
        let outcome = cold
            .prune("my cat wants food", 4, 2, 50_000)
            .expect("prune");
        assert_eq!(outcome.kept, 4);
        assert_eq!(outcome.archived.len(), 4);
        let window: Vec<String> = cold
            .store()
            .events_window()
            .expect("window")
            .into_iter()
            .map(|e| e.record.event.input)
            .collect();
        assert_eq!(
            window,
            [
                "my kitten is asleep",
                "pizza dinner",
                "a novel to read",
                "latest: the car is at the garage"
            ]
        );
        let mut archived: Vec<(i64, String)> = outcome
            .archived
            .iter()
            .map(|&id| {
                let e = cold.store().cold_get(id).expect("get").expect("present");
                (e.event.timestamp_ms, e.event.input)
            })
            .collect();
        archived.sort();
        assert_eq!(
            archived,
            [
                (1000, "flight to Lisbon".to_owned()),
                (3000, "office work".to_owned()),
                (4000, "piano song".to_owned()),
                (5000, "rain today".to_owned()),
            ]
        );
    });
}

#[test]
fn prune_with_an_empty_query_keeps_the_newest() {
    watchdog(30, || {
        let dir = TempDir::new("prune-empty");
        let mut cold = ColdContext::new(dir.store(), None);
        let events: Vec<ContextEvent> = (0..6)
            .map(|i| user(i * 1000, &format!("event number {i}")))
            .collect();
        cold.append(events).expect("append");
        let outcome = cold.prune("", 3, 1, 10_000).expect("prune");
        assert_eq!(outcome.archived.len(), 3);
        let window: Vec<i64> = cold
            .store()
            .events_window()
            .expect("window")
            .iter()
            .map(|e| e.record.event.timestamp_ms)
            .collect();
        assert_eq!(window, [3000, 4000, 5000]);
    });
}

#[test]
fn prune_for_small_talk_keeps_the_newest_not_the_other_greetings() {
    watchdog(30, || {
        let window = |small_talk_cosine: f32| {
            let dir = TempDir::new("prune-small-talk");
            let config = RecallConfig {
                small_talk_cosine,
                ..RecallConfig::default()
            };
            let mut cold = ColdContext::new(dir.store(), None).with_config(config);
            let texts = [
                "thank you",
                "my sister moves to Lisbon in May",
                "thank you!",
                "the boiler needs a service before winter",
                "book the dentist for Tuesday",
                "what a day",
            ];
            let events = user_turns(0, 1000, &texts);
            cold.append(events).expect("append");
            cold.prune("Thank you.", 3, 1, 10_000).expect("prune");
            cold.store()
                .events_window()
                .expect("window")
                .iter()
                .map(|e| e.record.event.timestamp_ms)
                .collect::<Vec<i64>>()
        };
        assert_eq!(
            window(RecallConfig::default().small_talk_cosine),
            [3000, 4000, 5000]
        );
        // Ranked by its words, a thanks would keep the history's other thanks.
        assert_eq!(window(2.0), [0, 2000, 5000]);
    });
}

/// The runtime moves a cold context to the store's service thread.
#[test]
fn cold_context_is_send() {
    fn send<T: Send>() {}
    send::<ColdContext>();
    send::<Recalled>();
}

#[test]
fn a_recalled_copy_is_dropped_by_a_later_prune_not_archived_twice() {
    watchdog(30, || {
        let dir = TempDir::new("recalled-copy");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        cold.archive_events(vec![user(1_000, "my kitten is asleep")], "prune", 2_000)
            .expect("archive");
        let hits = cold.recall("kitten", 1, 3_000).expect("recall");
        assert_eq!(hits.len(), 1);
        let mut copy = hits[0].event.clone();
        copy.id = format!("{}{}", crate::RECALLED_PREFIX, hits[0].id);
        let texts = [
            "flight to Lisbon",
            "pizza dinner",
            "office work",
            "rain today",
        ];
        let mut window = vec![copy];
        window.extend(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| user(10_000 + i as i64, t)),
        );
        cold.append(window).expect("append");
        let before = cold.store().cold_count().expect("count");
        // Keep only the last two: the copy and two others leave the window.
        let outcome = cold.prune("rain", 2, 2, 20_000).expect("prune");
        assert_eq!(
            outcome.archived.len(),
            2,
            "only the two events of the window's own are archived"
        );
        assert_eq!(
            cold.store().cold_count().expect("count"),
            before + 2,
            "no second copy of the kitten"
        );
        let window = cold.store().events_window().expect("window");
        assert!(
            window
                .iter()
                .all(|e| !e.record.event.id.starts_with(crate::RECALLED_PREFIX))
        );
        // Nothing unique was lost: the kitten is still in cold context.
        assert_eq!(
            cold.recall("kitten", 1, 30_000).expect("recall")[0]
                .event
                .input,
            "my kitten is asleep"
        );
    });
}
