//! Forgotten words taken out of a turn: every row that held them is rewritten, what is derived
//! from the words follows, the rest of the turn stays, and doing it twice changes nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use super::test_support::{
    ASKED, CompanionMode, ConceptEmbedder, Flaky, TempDir, companion, concept_embedder, ids_of,
    side_count, user,
};
use super::*;
use crate::RECALLED_PREFIX;
use crate::test_support::watchdog;

const SAID: &str = "I keep my car in the Zorblax garage";
const TURN: &str = "req-7";

/// A turn whose input says [`SAID`] and more, archived twice (its input, then with its reply),
/// one more turn, and a window event of the turn not yet archived; the turn's journal entry.
fn history(cold: &mut ColdContext) -> (Vec<i64>, i64) {
    let input = format!("{SAID}. I read a novel every week");
    let mut alone = user(1_000, &input);
    alone.id = TURN.into();
    let mut answered = user(1_000, &input).with_response("Noted: the car, and the novels.");
    answered.id = TURN.into();
    let ids = cold
        .archive_events(
            vec![alone, answered, user(2_000, "my cat likes the rain")],
            "prune",
            5_000,
        )
        .expect("archive");
    let mut copy = user(1_000, &input);
    copy.id = TURN.into();
    let window = cold.append(vec![copy]).expect("append")[0].id;
    let store = cold.store_mut();
    store
        .journal_accept(TURN, "cli", "input", &json!({"content": input}), 900)
        .expect("journal");
    store
        .journal_reply(TURN, &json!({"text": format!("You said: {SAID}")}), 950)
        .expect("reply");
    (ids, window)
}

/// The cold entries the keyword index finds for `term`, by id.
fn keyword(cold: &ColdContext, term: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = cold
        .store()
        .cold_fts(&query_tokens(term), 10)
        .expect("fts")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.sort_unstable();
    ids
}

/// The main model's cosine of "car garage parking" with each of `ids`, as recall scores it.
fn car_cosines(cold: &mut ColdContext, ids: &[i64]) -> Vec<f32> {
    let hits = cold.peek("car garage parking", 10, ASKED).expect("peek");
    ids.iter()
        .map(|id| {
            let hit = hits.iter().find(|h| h.id == *id).expect("scored");
            hit.dense_cosine.expect("a vector")
        })
        .collect()
}

fn redaction(cold_item: Option<i64>) -> Redaction {
    Redaction {
        turn_id: TURN.into(),
        cold_item,
        words: SAID.into(),
        scope: RedactionScope::Verbatim,
    }
}

#[test]
fn a_redaction_rewrites_every_row_of_the_turn_and_what_is_derived_from_it() {
    watchdog(30, || {
        let dir = TempDir::new("redact");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        let (ids, window) = history(&mut cold);
        assert_eq!(
            keyword(&cold, "zorblax"),
            [ids[0], ids[1]],
            "found by its words"
        );
        let sides = side_count(&cold);
        let car = car_cosines(&mut cold, &ids[..2]);
        assert!(car.iter().all(|&c| c > 0.5), "{car:?}");

        let done = cold.redact(&[redaction(Some(ids[0]))]).expect("redact");
        assert_eq!(done.cold_entries, [ids[0], ids[1]]);
        assert_eq!((done.window_events, done.journal_entries), (1, 1));

        for &id in &ids[..2] {
            let entry = cold.store().cold_get(id).expect("get").expect("kept");
            assert!(!entry.text.contains("Zorblax"), "{}", entry.text);
            assert!(entry.text.contains(FORGOTTEN_MARKER));
            assert!(entry.text.contains("novel every week"), "the rest stays");
            assert!(!entry.event.input.contains("Zorblax"));
            assert!(!entry.tokens.contains("zorblax"));
            assert_eq!(entry.event.timestamp_ms, 1_000, "its time stays");
            // Stored a byte per component: compared by direction, and by the car concept gone.
            let dense = entry.dense.expect("a vector of the new text");
            let (old, new) = (
                ConceptEmbedder::vector(&format!("{SAID}. I read a novel every week")),
                ConceptEmbedder::vector(&entry.text),
            );
            let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
            assert!(cos(&dense.values, &new) > 0.99, "{:?}", dense.values);
            assert!(cos(&dense.values, &old) < 0.8, "not the old words' vector");
        }
        assert_eq!(side_count(&cold), sides, "companion vectors written again");
        assert!(keyword(&cold, "zorblax").is_empty());
        // The index scores the new vectors: the car concept left the turn's entries.
        let car = car_cosines(&mut cold, &ids[..2]);
        assert!(car.iter().all(|&c| c < 0.1), "{car:?}");
        let novel = cold.peek("novel", 10, ASKED).expect("peek");
        assert!(
            ids_of(&novel).contains(&ids[1]),
            "still found by what stays"
        );

        let event = cold.store().event_get(window).expect("get").expect("kept");
        assert!(!event.record.event.input.contains("Zorblax"));
        assert!(event.record.dense.is_some());
        let journal = cold.store().journal_get(TURN).expect("get").expect("kept");
        assert!(!journal.payload.to_string().contains("Zorblax"));
        assert!(
            !journal
                .reply
                .expect("reply")
                .to_string()
                .contains("Zorblax")
        );

        // Once committed and the log truncated, no byte of the files holds the words: the
        // freed space was zeroed and the keyword index dropped the old terms.
        cold.journal_store().checkpoint().expect("checkpoint");
        let bytes = std::fs::read(dir.0.join("memory.db")).expect("read");
        assert!(
            !bytes.windows(7).any(|w| w.eq_ignore_ascii_case(b"zorblax")),
            "the words linger in the file"
        );

        let again = cold.redact(&[redaction(Some(ids[0]))]).expect("again");
        assert_eq!(again, Redacted::default(), "nothing left to take out");
    });
}

#[test]
fn an_echo_leaves_the_replies_of_its_turn_as_a_whole_word_and_nothing_else() {
    watchdog(30, || {
        let dir = TempDir::new("redact-echo");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let reply = "Lovely, porto is a great city! Walk down Portobello Road too.";
        let turn = |ts: i64, id: &str, input: &str, reply: &str| {
            let mut e = user(ts, input).with_response(reply);
            e.id = id.into();
            e
        };
        let ids = cold
            .archive_events(
                vec![
                    turn(1_000, TURN, "I live in Porto.", ""),
                    turn(1_000, TURN, "I live in Porto.", reply),
                    turn(2_000, "req-8", "Where is Porto?", "Porto is in Portugal."),
                ],
                "prune",
                5_000,
            )
            .expect("archive");
        let window = cold
            .append(vec![turn(1_000, TURN, "I live in Porto.", reply)])
            .expect("append")[0]
            .id;
        let store = cold.store_mut();
        store
            .journal_accept(
                TURN,
                "cli",
                "input",
                &json!({"content": "I live in Porto."}),
                900,
            )
            .expect("journal");
        store
            .journal_reply(TURN, &json!({"text": reply, "parts": ["PORTO!"]}), 950)
            .expect("reply");

        let echo = Redaction {
            words: "Porto".into(),
            scope: RedactionScope::InReplies,
            ..redaction(None)
        };
        let done = cold.redact(std::slice::from_ref(&echo)).expect("redact");
        assert_eq!(
            done.cold_entries,
            [ids[1]],
            "the entry without a reply holds no echo"
        );
        assert_eq!((done.window_events, done.journal_entries), (1, 1));
        let expected = "Lovely, [forgotten] is a great city! Walk down Portobello Road too.";
        let entry = cold.store().cold_get(ids[1]).expect("get").expect("kept");
        assert_eq!(entry.event.response, expected);
        assert_eq!(
            entry.event.input, "I live in Porto.",
            "the user's words are the sentence's to take out"
        );
        let event = cold.store().event_get(window).expect("get").expect("kept");
        assert_eq!(event.record.event.response, expected);
        let journal = cold.store().journal_get(TURN).expect("get").expect("kept");
        assert_eq!(
            journal.reply.expect("reply"),
            json!({"text": expected, "parts": ["[forgotten]!"]})
        );
        assert_eq!(
            journal.payload,
            json!({"content": "I live in Porto."}),
            "the user's words are the sentence's to take out"
        );
        let other = cold.store().cold_get(ids[2]).expect("get").expect("kept");
        assert_eq!(
            other.event.response, "Porto is in Portugal.",
            "another turn"
        );

        let again = cold.redact(std::slice::from_ref(&echo)).expect("again");
        assert_eq!(again, Redacted::default(), "nothing left to take out");

        // Told in other words than the turn's (a fact the model committed): the user's words
        // lose the value too.
        let told = Redaction {
            scope: RedactionScope::InTurn,
            ..echo
        };
        let done = cold.redact(&[told]).expect("redact");
        assert_eq!(done.cold_entries, [ids[0], ids[1]]);
        assert_eq!((done.window_events, done.journal_entries), (1, 1));
        let entry = cold.store().cold_get(ids[0]).expect("get").expect("kept");
        assert_eq!(entry.event.input, "I live in [forgotten].");
        assert!(!entry.text.contains("Porto"), "{}", entry.text);
        let journal = cold.store().journal_get(TURN).expect("get").expect("kept");
        assert_eq!(
            journal.payload,
            json!({"content": "I live in [forgotten]."})
        );
        let other = cold.store().cold_get(ids[2]).expect("get").expect("kept");
        assert_eq!(other.event.input, "Where is Porto?", "another turn");
    });
}

#[test]
fn a_redaction_touches_no_other_turn_and_refuses_empty_words() {
    watchdog(30, || {
        let dir = TempDir::new("redact-other");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let (ids, _) = history(&mut cold);
        let mut elsewhere = user(3_000, SAID);
        elsewhere.id = "req-8".into();
        let other = cold
            .archive_events(vec![elsewhere], "prune", 6_000)
            .expect("archive")[0];

        let empty = Redaction {
            words: "  ".into(),
            ..redaction(Some(ids[0]))
        };
        let marker = Redaction {
            words: "forgotten".into(),
            ..redaction(Some(ids[0]))
        };
        assert_eq!(
            cold.redact(&[empty, marker]).expect("redact"),
            Redacted::default()
        );
        assert_eq!(keyword(&cold, "zorblax"), [ids[0], ids[1], other]);
        let done = cold.redact(&[redaction(None)]).expect("redact");
        assert_eq!(
            done.cold_entries,
            [ids[0], ids[1]],
            "found by the turn's id"
        );
        let kept = cold.store().cold_get(other).expect("get").expect("kept");
        assert_eq!(kept.text, SAID, "another turn saying the same stays");
        assert_eq!(keyword(&cold, "zorblax"), [other]);
    });
}

#[test]
fn a_redaction_whose_companion_fails_leaves_no_stale_vector_and_a_back_fill() {
    watchdog(30, || {
        let dir = TempDir::new("redact-companion");
        let up = Arc::new(AtomicBool::new(true));
        let flaky = Flaky::new(&up);
        let fp = flaky.fingerprint.to_string();
        let mut cold =
            ColdContext::new(dir.store(), Some(concept_embedder())).with_companion(Arc::new(flaky));
        let (ids, _) = history(&mut cold);
        // One entry archived while the companion is down, then back-filled: the back-fill's
        // cursor is now past the turn's entries.
        up.store(false, Ordering::SeqCst);
        let late = cold
            .archive_events(vec![user(4_000, "a song on the piano")], "prune", 7_000)
            .expect("archive")[0];
        up.store(true, Ordering::SeqCst);
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 1);
        assert!(late > ids[1]);

        up.store(false, Ordering::SeqCst);
        cold.redact(&[redaction(Some(ids[0]))]).expect("redact");
        let stale = cold.store().cold_side_vectors(&fp).count();
        assert_eq!(
            stale, 2,
            "the turn's two entries lost their vectors of the old words"
        );
        up.store(true, Ordering::SeqCst);
        assert_eq!(
            cold.backfill_companion(100).expect("backfill"),
            2,
            "the back-fill goes back for them"
        );
        assert_eq!(cold.store().cold_side_vectors(&fp).count(), 4);
    });
}

#[test]
fn a_redaction_whose_main_model_fails_is_embedded_again_by_the_back_fill() {
    watchdog(30, || {
        let dir = TempDir::new("redact-main");
        let up = Arc::new(AtomicBool::new(true));
        let flaky = Flaky::new(&up);
        let fp = flaky.fingerprint.to_string();
        let mut cold = ColdContext::new(dir.store(), Some(Arc::new(flaky)));
        let (ids, _) = history(&mut cold);
        // Nothing missing: the back-fill's cursor moves past the turn's entries.
        assert_eq!(cold.backfill_main(100).expect("backfill"), 0);

        up.store(false, Ordering::SeqCst);
        cold.redact(&[redaction(Some(ids[0]))]).expect("redact");
        let stale = cold.store().cold_stale_vectors(&fp).expect("stale");
        assert_eq!(
            stale,
            ids[..2],
            "the turn's two entries lost their vectors of the old words"
        );
        up.store(true, Ordering::SeqCst);
        assert_eq!(
            cold.backfill_main(100).expect("backfill"),
            2,
            "the back-fill goes back for them"
        );
        assert!(
            cold.store()
                .cold_stale_vectors(&fp)
                .expect("stale")
                .is_empty()
        );
        // Their new vectors are of the words that stayed: the novels, not the car.
        let hits = cold.peek("a good book", 3, ASKED).expect("peek");
        assert!(ids_of(&hits).contains(&ids[0]), "{hits:?}");
        assert!(car_cosines(&mut cold, &ids[..2]).iter().all(|&c| c < 0.5));
    });
}

#[test]
fn a_forgotten_entry_takes_its_whole_turn_and_nothing_else() {
    watchdog(30, || {
        let dir = TempDir::new("forget-entry");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let (ids, window) = history(&mut cold);
        // Recalled back into the window: a copy named after the entry.
        let mut copy = user(1_000, SAID);
        copy.id = format!("{RECALLED_PREFIX}{}", ids[0]);
        cold.append(vec![copy]).expect("append");
        let window_len = |cold: &ColdContext| cold.store().events_window().expect("window").len();
        assert_eq!(window_len(&cold), 2);

        let gone = cold.forget_entry(ids[1]).expect("forget");
        assert_eq!(
            gone.cold_entries,
            [ids[1], ids[0]],
            "the one asked for, then its twin"
        );
        assert_eq!((gone.window_events, gone.journal_entries), (2, 1));
        assert_eq!(window_len(&cold), 0, "the turn's own event and the copy");
        assert!(cold.store().event_get(window).expect("get").is_none());
        for id in &ids[..2] {
            assert!(cold.store().cold_get(*id).expect("get").is_none());
        }
        let other = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("another turn stays");
        assert_eq!(other.text, "my cat likes the rain");
        let journal = cold.store().journal_get(TURN).expect("get").expect("kept");
        assert!(
            !journal.payload.to_string().contains("Zorblax"),
            "{}",
            journal.payload
        );
        assert!(keyword(&cold, "zorblax").is_empty());
        let hits = cold.peek("car garage", 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[2]], "the indexes forgot the turn");
        assert_eq!(
            cold.forget_entry(ids[0]).expect("again"),
            ForgottenTurn::default()
        );
    });
}

#[test]
fn a_forgotten_entry_without_a_turn_goes_alone() {
    watchdog(30, || {
        let dir = TempDir::new("forget-note");
        let mut cold = ColdContext::new(dir.store(), None);
        let ids = cold
            .archive_events(
                vec![
                    user(1_000, "a note kept alone"),
                    user(2_000, "another note"),
                ],
                "plugin:notes",
                5_000,
            )
            .expect("archive");
        let gone = cold.forget_entry(ids[0]).expect("forget");
        assert_eq!(gone.cold_entries, [ids[0]]);
        assert!(cold.store().cold_get(ids[1]).expect("get").is_some());
    });
}

#[test]
fn the_words_of_a_long_turn_are_in_no_byte_of_the_file_after_a_forget() {
    watchdog(60, || {
        // A long sentence at the end of a turn that spills into overflow pages, at lengths that
        // put it across page edges at different places, the rewritten row a few hundred bytes
        // shorter: no page, rewritten or freed, keeps the words.
        let said = format!("Zorblax {} Zorblax", "is my car's name ".repeat(40));
        let filler = "The weather was mild and we walked by the river. ".repeat(160);
        for pad in (0..4_096).step_by(256) {
            let dir = TempDir::new("redact-long");
            let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
            let input = format!("{filler}{}{said}", "x".repeat(pad));
            let mut event = user(1_000, &input).with_response("Noted.");
            event.id = TURN.into();
            let stored = cold.append(vec![event]).expect("append");
            let ids = cold.archive(&stored, "prune", 5_000).expect("archive");

            let forget = Redaction {
                words: said.clone(),
                ..redaction(Some(ids[0]))
            };
            let done = cold.redact(&[forget]).expect("redact");
            assert_eq!(done.cold_entries, ids);
            cold.journal_store().checkpoint().expect("checkpoint");
            let bytes = std::fs::read(dir.0.join("memory.db")).expect("read");
            assert!(
                !bytes.windows(7).any(|w| w.eq_ignore_ascii_case(b"zorblax")),
                "the words linger in the file (pad {pad})"
            );
        }
    });
}

#[test]
fn the_turns_shown_a_fact_are_found_in_the_window_and_in_cold_context() {
    watchdog(30, || {
        let dir = TempDir::new("turns-shown");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let reply = |ts: i64, turn: &str, shown: &[&str]| {
            let mut e = user(ts, "where do I live?").with_response("In Porto.");
            e.id = turn.into();
            e.shown = shown.iter().map(|s| (*s).to_owned()).collect();
            e
        };
        cold.archive_events(
            vec![
                reply(1_000, "req-1", &["r12"]),
                reply(2_000, "req-2", &["c3", "r7"]),
                reply(3_000, "req-3", &[]),
            ],
            "prune",
            5_000,
        )
        .expect("archive");
        let mut copy = reply(2_000, "", &["r12"]);
        copy.id = format!("{RECALLED_PREFIX}2");
        cold.append(vec![reply(4_000, "req-4", &["r12", "c3"]), copy])
            .expect("append");

        let turns = |ids: &[&str]| -> Vec<String> {
            let ids: Vec<String> = ids.iter().map(|s| (*s).to_owned()).collect();
            cold.store().turns_shown(&ids).expect("turns")
        };
        assert_eq!(
            turns(&["r12"]),
            ["req-1", "req-4"],
            "a recalled copy names no turn of its own"
        );
        assert_eq!(turns(&["c3"]), ["req-2", "req-4"]);
        assert_eq!(turns(&["r12", "r7"]), ["req-1", "req-2", "req-4"]);
        assert!(turns(&["r99"]).is_empty());
        assert!(turns(&[]).is_empty());
        // What a window event was shown survives a restart of the store.
        drop(cold);
        let reopened = crate::Store::open(dir.0.join("memory.db")).expect("reopen");
        let window = reopened.events_window().expect("window");
        let four = window
            .iter()
            .find(|e| e.record.event.id == "req-4")
            .expect("req-4 in the window");
        assert_eq!(four.record.event.shown, ["r12", "c3"]);
    });
}
