//! Things the speaker has named by what they say of them rather than by "I have" or "I got":
//! a thing kept for a while ("I've had my guitar for 8 years") and the make or model of a thing
//! they own ("my car is a 2018 Honda Civic").

use super::clause::{Clause, word_matches};
use super::english_object::english_object;

/// "I've had my Fender Stratocaster for about 5 years", "I've had my cat, Luna, for 9 months",
/// "I've had my Canon EOS 80D with me": a thing the speaker has kept for a while is had, under
/// the model's name when one follows it ("my acoustic guitar, a Yamaha FG800, for 8 years").
pub(super) fn held_for(clause: &Clause) -> Option<String> {
    ["i've had my ", "i have had my "]
        .iter()
        .find_map(|phrase| {
            let at = word_matches(&clause.lower, phrase).next()?;
            let start = at + phrase.len();
            let rest = &clause.lower[start..];
            [" for ", " with me", " since "]
                .iter()
                .any(|kept| rest.contains(kept))
                .then_some(())?;
            let (object, _) = english_object(clause, start)?;
            Some(model_named_after(clause, start, &object).unwrap_or(object))
        })
}

/// Most words in a model's name after a comma.
const EN_MODEL_WORDS: usize = 4;

/// The model a thing named at byte `at` is given after a comma: "my acoustic guitar, a Yamaha
/// FG800," — an article and a name with a digit or two capitalised words (a bare single name,
/// "my cat, Luna,", is what the thing is called, not what it is).
fn model_named_after(clause: &Clause, at: usize, object: &str) -> Option<String> {
    let rest = clause.text.get(at..)?;
    let after = &rest[rest.find(object)? + object.len()..];
    let named = after.strip_prefix(", ")?;
    let named = ["a ", "an ", "the "]
        .iter()
        .find_map(|a| named.strip_prefix(a))?;
    let name = named.split(',').next()?.trim();
    let words: Vec<&str> = name.split_whitespace().collect();
    let capitals = words
        .iter()
        .filter(|w| w.starts_with(char::is_uppercase))
        .count();
    let model = words.len() <= EN_MODEL_WORDS
        && words.first()?.starts_with(char::is_uppercase)
        && (capitals >= 2 || name.contains(|c: char| c.is_ascii_digit()));
    model.then(|| name.to_owned())
}

/// Things one owns whose make or model a sentence may name ("my car is a 2018 Honda Civic").
const EN_POSSESSIONS: &[&str] = &[
    "car",
    "truck",
    "van",
    "bike",
    "motorcycle",
    "scooter",
    "phone",
    "laptop",
    "computer",
    "tablet",
    "camera",
    "watch",
    "guitar",
    "piano",
    "tv",
    "console",
];

/// "My car is a Toyota Corolla": the make or model of a thing the speaker owns, when the words
/// name one (a capital or a digit: "my car is a mess" names none).
pub(super) fn model_of_a_possession(clause: &Clause) -> Option<String> {
    word_matches(&clause.lower, "my ").find_map(|at| {
        let rest = &clause.lower[at + "my ".len()..];
        let kind = EN_POSSESSIONS.iter().find(|k| rest.starts_with(*k))?;
        let after = rest[kind.len()..].strip_prefix(" is ")?;
        let (object, _) = english_object(clause, clause.lower.len() - after.len())?;
        object
            .chars()
            .any(|c| c.is_uppercase() || c.is_ascii_digit())
            .then_some(object)
    })
}
