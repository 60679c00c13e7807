//! The rule distiller on arbitrary talk: it must never panic, and every object it keeps is
//! words of the sentence (it names what was said; it never makes a word up).

use super::{ColdItem, Distiller, RuleDistiller};
use proptest::prelude::*;

/// Pieces of talk the English and Chinese patterns look at, and what breaks them: pronouns,
/// numbers, years, possessives, relative words, punctuation.
const PIECES: &[&str] = &[
    "I got",
    "I bought",
    "I've got",
    "I have a",
    "I like",
    "I love",
    "I live in",
    "I moved to",
    "I went to",
    "I'm from",
    "I'm not a fan of",
    "my car is a",
    "My",
    "the",
    "a",
    "that",
    ", which",
    "for her",
    "for my sister's",
    "Honda Civic",
    "2018",
    "50",
    "$20",
    "of it",
    "it",
    "one",
    "degree in",
    "Mustang I V2",
    "back",
    "there",
    "recently",
    "amazing",
    "rid of",
    "from a",
    "the city",
    "Porto",
    "nothing",
    "listening to",
    "and",
    "-",
    "'",
    "\"",
    "(",
    "my favorite",
    "is",
    "I got to",
    "visit",
    "take home",
    "experimenting with",
    "going on",
    "you",
    ", that",
    "I have",
    "two",
    "12",
    "them",
    "non-stop",
    ",",
    "我住在",
    "我喜欢",
    "北京",
    "我买了一辆车",
    "还是",
    "，",
];

fn sentence() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..12).prop_map(|w| w.join(" "))
}

proptest! {
    // Each case is a few microseconds: many, so that rare orders of the patterns' words come up.
    #![proptest_config(ProptestConfig::with_cases(4096))]
    #[test]
    fn every_object_is_words_of_the_sentence(text in sentence()) {
        let item = ColdItem {
            id: 1,
            turn_id: "t".to_owned(),
            said_ms: 1_700_000_000_000,
            text: text.clone(),
            utc_offset_secs: 0,
        };
        let lower = text.to_lowercase();
        for statement in RuleDistiller::default().statements(&item) {
            for fact in statement.facts {
                prop_assert!(!fact.object.trim().is_empty(), "{text:?}: {fact:?}");
                for word in fact
                    .object
                    .to_lowercase()
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    prop_assert!(lower.contains(word), "{text:?}: {fact:?}");
                }
            }
        }
    }
}
