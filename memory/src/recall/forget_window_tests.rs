//! A turn said too recently to have left the working window is found by its words and
//! forgotten whole: its window event, any cold entry of it already archived, its journal words;
//! other turns stay.

use serde_json::json;

use super::test_support::{TempDir, concept_embedder, user};
use super::*;
use crate::RECALLED_PREFIX;
use crate::test_support::watchdog;

const TURN: &str = "req-9";

/// A window of three turns; the second, [`TURN`], told a PIN, its input already archived alone
/// (as a prune leaves a turn in flight) and journaled with its reply.
fn recent(cold: &mut ColdContext) -> (Vec<i64>, i64) {
    let mut said =
        user(2_000, "my bank PIN is 4711, keep it safe").with_response("Got it: 4711, kept safe.");
    said.id = TURN.into();
    let window: Vec<i64> = cold
        .append(vec![
            user(1_000, "what is a good soup for a cold day"),
            said.clone(),
            user(3_000, "and which bread goes with soup"),
        ])
        .expect("append")
        .iter()
        .map(|e| e.id)
        .collect();
    let mut alone = said;
    alone.response.clear();
    let archived = cold
        .archive_events(vec![alone], "prune", 2_500)
        .expect("archive")[0];
    let store = cold.store_mut();
    store
        .journal_accept(
            TURN,
            "cli",
            "input",
            &json!({"content": "my bank PIN is 4711, keep it safe"}),
            1_900,
        )
        .expect("journal");
    store
        .journal_reply(TURN, &json!({"text": "Got it: 4711, kept safe."}), 2_100)
        .expect("reply");
    (window, archived)
}

#[test]
fn a_recent_turn_is_found_by_its_words_most_terms_first() {
    watchdog(30, || {
        let dir = TempDir::new("window-search");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let (window, _) = recent(&mut cold);
        let hits = cold.search_window("my bank PIN", 5).expect("search");
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].id, window[1]);
        assert!(hits[0].text.contains("4711") && hits[0].text.contains("kept safe"));
        // Two turns say "soup": the one holding more of the query's terms first, then newest.
        let soup = cold.search_window("soup bread", 5).expect("search");
        assert_eq!(
            soup.iter().map(|h| h.id).collect::<Vec<_>>(),
            [window[2], window[0]]
        );
        assert_eq!(cold.search_window("soup", 1).expect("search").len(), 1);
        assert!(
            cold.search_window("when did I", 5)
                .expect("search")
                .is_empty()
        );
        assert!(cold.search_window("garden", 5).expect("search").is_empty());
    });
}

#[test]
fn a_recent_turn_forgotten_from_the_window_takes_its_archived_input_and_journal_words() {
    watchdog(30, || {
        let dir = TempDir::new("forget-window");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let (window, archived) = recent(&mut cold);
        let gone = cold.forget_window_event(window[1]).expect("forget");
        assert_eq!(gone.turn, TURN);
        assert_eq!(gone.cold_entries, [archived], "the input archived alone");
        assert_eq!((gone.window_events, gone.journal_entries), (1, 1));
        let left: Vec<i64> = cold
            .store()
            .events_window()
            .expect("window")
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(left, [window[0], window[2]], "the other turns stay");
        assert!(cold.store().cold_get(archived).expect("get").is_none());
        let journal = cold.store().journal_get(TURN).expect("get").expect("kept");
        let row = format!("{} {}", journal.payload, journal.reply.unwrap_or_default());
        assert!(!row.contains("4711"), "{row}");
        assert!(
            cold.search_window("PIN 4711", 5)
                .expect("search")
                .is_empty()
        );
        assert_eq!(
            cold.forget_window_event(window[1]).expect("again"),
            ForgottenTurn::default(),
            "nothing left to forget"
        );
    });
}

#[test]
fn a_copy_recalled_into_the_window_forgets_the_entry_it_came_from() {
    watchdog(30, || {
        let dir = TempDir::new("forget-window-copy");
        let mut cold = ColdContext::new(dir.store(), None);
        let ids = cold
            .archive_events(
                vec![user(1_000, "the spare key is under the blue pot")],
                "prune",
                5_000,
            )
            .expect("archive");
        let mut copy = user(1_000, "the spare key is under the blue pot");
        copy.id = format!("{RECALLED_PREFIX}{}", ids[0]);
        let copy = cold.append(vec![copy]).expect("append")[0].id;
        let gone = cold.forget_window_event(copy).expect("forget");
        assert_eq!(gone.cold_entries, ids);
        assert_eq!(gone.window_events, 1);
        assert!(cold.store().cold_get(ids[0]).expect("get").is_none());
        assert!(cold.store().events_window().expect("window").is_empty());
    });
}

#[test]
fn a_turn_still_being_answered_is_not_forgotten_until_its_answer_is_in() {
    watchdog(30, || {
        let dir = TempDir::new("forget-in-flight");
        let mut cold = ColdContext::new(dir.store(), None);
        let mut asked = user(1_000, "my door code is 2580");
        asked.id = "req-10".into();
        let window = cold.append(vec![asked]).expect("append")[0].id;
        cold.store_mut()
            .journal_accept(
                "req-10",
                "cli",
                "input",
                &json!({"content": "my door code is 2580"}),
                900,
            )
            .expect("journal");
        match cold.forget_window_event(window) {
            Err(RecallError::InFlight(turn)) => assert_eq!(turn, "req-10"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            cold.store().events_window().expect("window").len(),
            1,
            "nothing removed"
        );
        cold.store_mut()
            .journal_reply("req-10", &json!({"text": "Noted."}), 1_100)
            .expect("reply");
        let gone = cold.forget_window_event(window).expect("answered now");
        assert_eq!(gone.window_events, 1);
    });
}

#[test]
fn a_turn_in_the_window_twice_is_listed_once_by_its_answered_event() {
    watchdog(30, || {
        let dir = TempDir::new("window-search-twice");
        let mut cold = ColdContext::new(dir.store(), None);
        let mut asked = user(1_000, "where did I park the red van");
        asked.id = "req-11".into();
        let mut answered = asked.clone().with_response("By the red gate.");
        answered.timestamp_ms = 1_200;
        let ids: Vec<i64> = cold
            .append(vec![asked, answered])
            .expect("append")
            .iter()
            .map(|e| e.id)
            .collect();
        let hits = cold.search_window("red van", 5).expect("search");
        assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), [ids[1]]);
        assert!(hits[0].text.contains("red gate"));
    });
}
