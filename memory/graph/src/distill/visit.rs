//! Where the speaker went: a place gone to, the place a journey went to ("a solo trip to New
//! York City"), and a visit the words put in the past ("my last trip to Japan").

use super::clause::{Clause, word_matches};
use super::english_object::english_object;

/// Words naming a journey rather than a place: "I got back from a solo trip to New York City"
/// went to New York City, and "I went on a hike" names no place.
const EN_JOURNEYS: &[&str] = &[
    "trip",
    "trips",
    "vacation",
    "holiday",
    "getaway",
    "hike",
    "tour",
    "cruise",
    "trek",
    "journey",
    "visit",
    "ride",
    "date",
    "day",
    "weekend",
    "night",
    "evening",
    "afternoon",
];
/// Verbs of a journey's purpose before its place: "a bus ride to attend a friend's wedding".
const EN_PURPOSES: &[&str] = &["attend ", "see ", "visit ", "watch "];

/// The place a visit named as `object` (after the verb at `after`) went to: the object itself,
/// or, when it names a journey, the place after the journey's "to", "in" or "at" ("a whitewater
/// rafting trip in the Oregon mountains", "a day at Universal Studios"; none when no place
/// follows: "a dinner date"). A lower-case plural ("a few weddings", "my parents") is a kind
/// of outing or people, not a place one went to.
pub(super) fn visited_place(clause: &Clause, after: usize, object: String) -> Option<String> {
    let words: Vec<String> = object
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    if let Some(journey) = words.last().filter(|w| EN_JOURNEYS.contains(&w.as_str())) {
        let rest = clause.lower.get(after..)?;
        let end = after + word_matches(rest, journey).next()? + journey.len();
        let tail = clause.lower.get(end..)?;
        let mut place = end
            + [" to ", " in ", " at "]
                .iter()
                .find(|p| tail.starts_with(**p))?
                .len();
        if let Some(purpose) = EN_PURPOSES
            .iter()
            .find(|v| clause.lower[place..].starts_with(**v))
        {
            place += purpose.len();
        }
        return visited_place(clause, place, english_object(clause, place)?.0);
    }
    // "I stayed at home", "stayed in bed": no outing.
    if matches!(object.split_whitespace().next(), Some("home" | "bed")) {
        return None;
    }
    let kind_of_outing = !object.contains(char::is_uppercase)
        && words
            .last()
            .is_some_and(|w| w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("'s"));
    (!kind_of_outing).then_some(object)
}

/// "During my previous visit to Denver", "my last trip to Japan": a visit the words put in
/// the past ("my upcoming trip to Japan", "my trip to Japan" may be to come).
pub(super) fn past_visit(clause: &Clause) -> Option<String> {
    word_matches(&clause.lower, "my ").find_map(|at| {
        let rest = &clause.lower[at + "my ".len()..];
        let when = ["previous ", "recent ", "last ", "past "]
            .iter()
            .find(|w| rest.starts_with(*w))?;
        let what = ["visit to ", "trip to "]
            .iter()
            .find(|w| rest[when.len()..].starts_with(*w))?;
        let start = clause.lower.len() - rest.len() + when.len() + what.len();
        english_object(clause, start).map(|(object, _)| object)
    })
}
