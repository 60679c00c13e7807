//! What a query says of time and speakers weighs the ranking: a day bounds it or lets age count,
//! a named span is searched inside, and a named speaker's own words come first.

use super::test_support::{ASKED, DAY_MS, HOUR_MS, TempDir, concept_embedder, ids_of, user};
use super::*;
use crate::ContextEvent;
use crate::test_support::watchdog;

/// 2023-05-05 12:00 UTC, a Friday.
const FRIDAY_NOON: i64 = 1_683_288_000_000;

fn agent(ts: i64, text: &str) -> ContextEvent {
    ContextEvent::new(ts, AGENT_SOURCE, "").with_response(text)
}

#[test]
fn a_query_naming_a_speaker_favours_their_own_words() {
    watchdog(30, || {
        for embedder in [None, Some(concept_embedder())] {
            let dir = TempDir::new("named-speaker");
            let mut cold = ColdContext::new(dir.store(), embedder);
            let said = |ts, who: &str| {
                ContextEvent::new(ts, who, "the spare keys are in the blue drawer by the door")
            };
            let ids = cold
                .archive_events(
                    vec![
                        said(1_000, "Ben"),
                        said(2_000, "Ana"),
                        said(3_000, "Ana Lima"),
                    ],
                    "import",
                    10_000,
                )
                .expect("archive");
            let first =
                |cold: &mut ColdContext, q: &str| cold.peek(q, 3, ASKED).expect("peek")[0].id;
            // The same words from three people: the one the query names comes first.
            assert_eq!(
                first(&mut cold, "where did ana say the spare keys are"),
                ids[1]
            );
            assert_eq!(first(&mut cold, "where did BEN put the spare keys"), ids[0]);
            assert_eq!(first(&mut cold, "Ana Lima and the spare keys"), ids[2]);
            // Named by nobody, they keep the fused order; and the prior is a weighing, not a
            // filter: the others are still recalled.
            let hits = cold.peek("spare keys drawer", 3, ASKED).expect("peek");
            assert_eq!(hits.len(), 3);
            let hits = cold
                .peek("where did Ben put the spare keys", 3, ASKED)
                .expect("peek");
            assert_eq!(hits.len(), 3);
            // Equal words: the unnamed count about half (their ranks differ a little).
            let ratio = hits[1].score / hits[0].score;
            assert!((0.45..0.55).contains(&ratio), "{ratio}");
            // A speaker archived after the first recall is known at once.
            let more = cold
                .archive_events(vec![said(4_000, "Carla")], "import", 10_000)
                .expect("archive");
            assert_eq!(
                first(&mut cold, "did carla mention the spare keys"),
                more[0]
            );
        }
    });
}

#[test]
fn recall_asked_as_of_a_day_never_returns_what_was_said_after_it() {
    watchdog(30, || {
        let dir = TempDir::new("future");
        let mut cold =
            ColdContext::new(dir.store(), Some(concept_embedder())).with_config(RecallConfig {
                exclude_future: true,
                ..RecallConfig::default()
            });
        let ids = cold
            .archive_events(
                vec![
                    user(FRIDAY_NOON - DAY_MS, "pizza for dinner"),
                    user(FRIDAY_NOON + 2 * DAY_MS, "pizza for dinner again"),
                ],
                "import",
                FRIDAY_NOON,
            )
            .expect("archive");
        let now = cold.peek("pizza", 5, FRIDAY_NOON).expect("peek");
        assert_eq!(
            ids_of(&now),
            [ids[0]],
            "the later entry is not a candidate yet"
        );
        let later = cold
            .peek("pizza", 5, FRIDAY_NOON + 3 * DAY_MS)
            .expect("peek");
        assert_eq!(later.len(), 2);
        // By default the date does not filter: a live assistant is asked after everything.
        cold.set_config(RecallConfig::default());
        assert_eq!(cold.peek("pizza", 5, FRIDAY_NOON).expect("peek").len(), 2);
    });
}

#[test]
fn recall_prefers_the_user_s_words_unless_asked_about_the_agent_s() {
    watchdog(30, || {
        let dir = TempDir::new("speaker");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        // The same words, the agent's entry archived second: it ranks second in both lists,
        // so only the speaker weighing can put it first.
        let ids = cold
            .archive_events(
                vec![
                    user(FRIDAY_NOON - HOUR_MS, "the pizza place Mario dinner"),
                    agent(FRIDAY_NOON - HOUR_MS, "the pizza place Mario dinner"),
                ],
                "import",
                FRIDAY_NOON,
            )
            .expect("archive");
        let mine = cold
            .peek("which pizza place did I go to for dinner", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&mine), [ids[0], ids[1]]);
        let yours = cold
            .peek(
                "which pizza place did you recommended for dinner",
                2,
                FRIDAY_NOON,
            )
            .expect("peek");
        assert_eq!(ids_of(&yours), [ids[1], ids[0]]);
        let yours_zh = cold
            .peek("你推荐的那家 pizza dinner 叫什么", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&yours_zh), [ids[1], ids[0]]);
    });
}

#[test]
fn recall_weighs_age_only_when_the_query_names_a_time() {
    watchdog(30, || {
        let dir = TempDir::new("when");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        // Equal words; the recent entry is archived second, so it loses every positional tie
        // and only its age can put it first.
        let ids = cold
            .archive_events(
                vec![
                    user(FRIDAY_NOON - 14 * DAY_MS, "pizza for dinner"),
                    user(FRIDAY_NOON - DAY_MS, "pizza for dinner"),
                ],
                "import",
                FRIDAY_NOON,
            )
            .expect("archive");
        // Naming no time: no recency, equal entries keep the fusion's order.
        let plain = cold
            .peek("what did I have for dinner", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(
            ids_of(&plain),
            [ids[0], ids[1]],
            "age alone does not reorder"
        );
        // Naming a time (a span holding neither): now age weighs, the recent one first.
        let timed = cold
            .peek("what did I have for dinner in March", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&timed), [ids[1], ids[0]], "the recent one first");
        let named = cold
            .peek("what did I have for dinner two weeks ago", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&named), [ids[0], ids[1]], "the named span wins");
        let named_zh = cold
            .peek("两周前 dinner 吃了什么", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&named_zh), [ids[0], ids[1]]);
        // Without weighing by age, equal entries keep the fusion's order.
        cold.set_config(RecallConfig {
            recency_half_life_days: 0.0,
            ..RecallConfig::default()
        });
        let flat = cold
            .peek("what did I have for dinner in March", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&flat), [ids[0], ids[1]]);
    });
}

#[test]
fn recall_searches_inside_a_span_the_query_names() {
    watchdog(30, || {
        // Candidates three deep: six closer matches from a year before fill every list.
        let config = RecallConfig {
            depth: 3,
            ..RecallConfig::default()
        };
        let history = || -> Vec<ContextEvent> {
            let mut events: Vec<ContextEvent> = (0..6)
                .map(|i| {
                    user(
                        FRIDAY_NOON - 400 * DAY_MS - i * HOUR_MS,
                        "pizza dinner food",
                    )
                })
                .collect();
            events.push(user(
                FRIDAY_NOON - 14 * DAY_MS,
                "a dinner after work at the office with the team",
            ));
            events
        };
        // With a model, the keywords are left out, so only the dense span search can find it.
        let dense_only = RecallConfig {
            keyword_weight: 0.0,
            ..config.clone()
        };
        for (embedder, config) in [(Some(concept_embedder()), dense_only), (None, config)] {
            let dir = TempDir::new("span");
            let mut cold = ColdContext::new(dir.store(), embedder).with_config(config);
            let ids = cold
                .archive_events(history(), "import", FRIDAY_NOON)
                .expect("archive");
            let in_span = ids[6];
            let plain = cold
                .peek("what did I have for dinner", 3, FRIDAY_NOON)
                .expect("peek");
            assert!(
                !ids_of(&plain).contains(&in_span),
                "no list has it among its three best: {plain:?}"
            );
            let named = cold
                .peek("what did I have for dinner two weeks ago", 3, FRIDAY_NOON)
                .expect("peek");
            // Found inside the span and weighed by it to the top.
            assert_eq!(ids_of(&named).first(), Some(&in_span), "{named:?}");
        }
    });
}
