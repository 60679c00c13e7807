//! The passage list (measured, off by default): the person's long entries cut into passages,
//! an entry scored by its best one, so a remark made in passing is not lost in its turn.

use super::test_support::{ASKED, TempDir, concept_embedder, user};
use super::vector_text::AGENT_SOURCE;
use super::*;
use crate::ContextEvent;
use crate::test_support::watchdog;

/// A long turn about the weather that mentions the kitten once, the agent's long reply, and a
/// short turn.
fn history() -> Vec<ContextEvent> {
    vec![
        user(
            1_000,
            "The weather was awful. Rain all week and the weather app said rain again. \
             By the way my kitten is sick.",
        ),
        ContextEvent::new(
            2_000,
            AGENT_SOURCE,
            "Rain and more rain, sorry to hear. Sunny weather comes back on Friday. I hope the \
             kitten feels better soon.",
        ),
        user(3_000, "pizza for dinner"),
    ]
}

#[test]
fn only_the_persons_long_entries_are_cut_and_their_best_passage_counts() {
    watchdog(30, || {
        let dir = TempDir::new("passages");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let ids = cold
            .archive_events(history(), "import", 10_000)
            .expect("archive");
        // The person's long turn is cut at its sentences; the agent's reply and the short
        // turn are not cut at all.
        let long = &history()[0].input;
        let cut = split_passages(long, 40).len();
        assert!(cut > 1);
        assert_eq!(cold.index_passages(40).expect("index"), cut);
        let score_of = |cold: &mut ColdContext, weight: f64| {
            cold.set_config(RecallConfig {
                passage_list_weight: weight,
                recency_half_life_days: 0.0,
                ..RecallConfig::default()
            });
            let hits = cold.peek("my kitten", 3, ASKED).expect("peek");
            hits.iter().find(|h| h.id == ids[0]).map(|h| h.score)
        };
        let without = score_of(&mut cold, 0.0).unwrap_or(0.0);
        let with = score_of(&mut cold, 1.0).expect("found with the list");
        assert!(
            with > without,
            "the kitten's passage adds: {with} vs {without}"
        );
    });
}

#[test]
fn without_a_model_there_is_no_passage_list() {
    let dir = TempDir::new("passages-none");
    let mut cold = ColdContext::new(dir.store(), None);
    cold.archive_events(history(), "import", 10_000)
        .expect("archive");
    assert_eq!(cold.index_passages(40).expect("index"), 0);
}

/// Of two entries whose best passages match alike, the one cut into fewer passages ranks
/// first in the passage list: the other had more draws at the same match.
#[test]
fn more_passages_are_more_draws_and_count_for_less() {
    watchdog(30, || {
        let dir = TempDir::new("passages-draws");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let few = "My kitten is sick. The rain came.";
        let many = "My kitten is sick. Rain again. Sunny later. Rain at night. The weather is odd. \
                    More rain. Rain.";
        let ids = cold
            .archive_events(vec![user(1_000, many), user(2_000, few)], "import", 10_000)
            .expect("archive");
        assert!(split_passages(many, 20).len() > split_passages(few, 20).len() + 3);
        cold.index_passages(20).expect("index");
        // The passage list alone.
        cold.set_config(RecallConfig {
            passage_list_weight: 1.0,
            dense_weight: 0.0,
            keyword_weight: 0.0,
            companion_weight: 0.0,
            recency_half_life_days: 0.0,
            ..RecallConfig::default()
        });
        let hits = cold.peek("kitten", 2, ASKED).expect("peek");
        assert_eq!(hits.first().map(|h| h.id), Some(ids[1]), "{hits:?}");
    });
}
