//! Recalled entries are put back in front of the model at their original time and only once, and
//! the automatic block stays within its budget and stable, so the prompt prefix does not churn.

use super::test_support::{TempDir, concept_embedder, seeded, user};
use super::*;
use crate::ContextWindow;
use crate::test_support::watchdog;

#[test]
fn recall_into_copies_at_the_original_time_once() {
    watchdog(30, || {
        let dir = TempDir::new("into");
        let (mut cold, _) = seeded(&dir, Some(concept_embedder()));
        let mut window = ContextWindow::new();
        window.append(user(500, "hello"));
        window.append(user(2_500, "what about dinner?"));
        window.append(user(9_000, "newest"));
        let n = cold
            .recall_into(&mut window, "pizza food", 1, 20_000)
            .expect("recall");
        assert_eq!(n, 1);
        let order: Vec<&str> = window.events().iter().map(|e| e.input.as_str()).collect();
        assert_eq!(
            order,
            [
                "hello",
                "what about dinner?",
                "pizza for dinner tonight",
                "newest"
            ]
        );
        let again = cold
            .recall_into(&mut window, "pizza food", 1, 21_000)
            .expect("recall");
        assert_eq!(again, 0);
        assert_eq!(window.len(), 4);
        assert_eq!(cold.store().cold_count().expect("count"), 5);
    });
}

#[test]
fn auto_inject_is_budgeted_time_ordered_stable_and_floored() {
    watchdog(30, || {
        let dir = TempDir::new("inject");
        let (mut cold, _) = seeded(&dir, Some(concept_embedder()));
        let block = cold
            .auto_inject("my pet cat and the car", 10_000, 20_000)
            .expect("inject");
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines[0], INJECT_HEADER);
        assert_eq!(
            &lines[1..],
            [
                "[1970-01-01 00:00] cli: my kitten likes to sleep on the sofa",
                "[1970-01-01 00:00] cli: my car is in the parking garage level two",
            ]
        );
        // Same members, same text: the prompt prefix does not change.
        let again = cold
            .auto_inject("the car and my pet cat", 10_000, 21_000)
            .expect("inject");
        assert_eq!(again, block);
        // A budget for the header and one line keeps the best entry only.
        let one = cold
            .auto_inject(
                "my pet cat and the car",
                crate::estimate_tokens(&block) - 10,
                22_000,
            )
            .expect("inject");
        assert_eq!(one.lines().count(), 2);
        // Nothing related: nothing injected.
        assert_eq!(
            cold.auto_inject("quantum chromodynamics", 10_000, 23_000)
                .expect("inject"),
            ""
        );
        assert_eq!(cold.auto_inject("pizza", 0, 24_000).expect("inject"), "");
    });
}

#[test]
fn without_a_model_a_small_talk_phrase_recalls_nothing() {
    watchdog(30, || {
        let dir = TempDir::new("small-talk-words");
        let mut cold = ColdContext::new(dir.store(), None);
        cold.archive_events(
            vec![
                user(1_000, "hello"),
                user(2_000, "thank you"),
                user(3_000, "thank you for the hotel tips"),
            ],
            "import",
            10_000,
        )
        .expect("archive");
        assert_eq!(
            cold.auto_inject("Hello!", 2_000, 20_000).expect("inject"),
            ""
        );
        assert_eq!(
            cold.auto_inject("Thank you.", 2_000, 20_000)
                .expect("inject"),
            ""
        );
        // Words beyond the phrase ask for something.
        let tips = cold
            .auto_inject("thank you, which hotel tips?", 2_000, 20_000)
            .expect("inject");
        assert!(tips.contains("hotel tips"), "{tips}");
        // The rule is what keeps the greeting out: the words match.
        let mut config = cold.config().clone();
        config.small_talk_cosine = 2.0;
        cold.set_config(config);
        assert!(
            !cold
                .auto_inject("Hello!", 2_000, 20_000)
                .expect("inject")
                .is_empty()
        );
    });
}
