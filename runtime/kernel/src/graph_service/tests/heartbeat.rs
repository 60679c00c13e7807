//! The heartbeat's rule distiller: a move distilled into current and past facts, dated in the
//! user's zone, and a heartbeat that waits for its interval and keeps what gave nothing.

use super::*;

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
