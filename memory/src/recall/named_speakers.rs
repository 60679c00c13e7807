//! Which of the people who speak in a history a query names.
//!
//! In a household's or a group's history the inputs come from several people, each under their
//! own source, and a question about one of them ("what did Ana say about the trip?", "where does
//! Ben keep the spare keys?") is most likely answered in that person's own words. A speaker is a
//! source of inputs (never the agent's replies, which `QueryPriors` weighs by their own rule);
//! the query names one when its text holds the source as a whole word or phrase, in any case.
//! A history of one person ("cli", "web") is named by no ordinary query, so nothing changes there.

use std::collections::{BTreeSet, HashSet};

use crate::recall::entry_meta::{Speaker, speaker_key};

/// The people who speak in a history, lower-cased: every input source but the agent's own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Speakers {
    names: BTreeSet<String>,
}

impl Speakers {
    /// Adds the source of an entry when it is a person's input that can be named.
    pub(crate) fn add_source(&mut self, source: &str) {
        if Speaker::of_source(source) == Speaker::User {
            self.add(source);
        }
    }

    /// Adds `source` when it can be named: at least two characters, one of them a letter.
    pub(crate) fn add(&mut self, source: &str) {
        let name = source.trim().to_lowercase();
        if name.chars().count() >= 2 && name.chars().any(char::is_alphabetic) {
            self.names.insert(name);
        }
    }

    /// The keys of the speakers `query` names. Longer names are matched first, and a name
    /// found only inside a longer one ("Ana" in "Ana Lima") is not named by it.
    pub(crate) fn named_in(&self, query: &str) -> HashSet<u64> {
        let query = query.to_lowercase();
        let mut by_length: Vec<&String> = self.names.iter().collect();
        by_length.sort_by_key(|name| std::cmp::Reverse(name.len()));
        let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
        let mut named = HashSet::new();
        for name in by_length {
            let found = occurrences(&query, name)
                .filter(|at| taken.iter().all(|t| at.end <= t.start || t.end <= at.start))
                .collect::<Vec<_>>();
            if !found.is_empty() {
                named.insert(speaker_key(name));
                taken.extend(found);
            }
        }
        named
    }
}

/// Where `name` occurs in `query` (both lower-cased) with no letter or digit joined to it on
/// either side. A name that begins or ends in a script written without spaces (Chinese,
/// Japanese) needs no boundary on that side.
fn occurrences<'a>(
    query: &'a str,
    name: &'a str,
) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
    // An edge of the name in a spaced script needs a boundary beside it.
    let spaced = |c: Option<char>| c.is_some_and(|c| !is_unspaced(c));
    let (first, last) = (name.chars().next(), name.chars().next_back());
    query.match_indices(name).filter_map(move |(start, _)| {
        let end = start + name.len();
        let before = query[..start].chars().next_back();
        let after = query[end..].chars().next();
        let open_before = !spaced(first) || !before.is_some_and(char::is_alphanumeric);
        let open_after = !spaced(last) || !after.is_some_and(char::is_alphanumeric);
        (open_before && open_after).then_some(start..end)
    })
}

/// Letters of scripts written without spaces between words.
fn is_unspaced(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}' // kana
        | '\u{3400}'..='\u{4dbf}' // CJK extension A
        | '\u{4e00}'..='\u{9fff}' // CJK unified ideographs
        | '\u{f900}'..='\u{faff}' // CJK compatibility ideographs
        | '\u{ac00}'..='\u{d7af}' // Hangul syllables
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn speakers(names: &[&str]) -> Speakers {
        let mut s = Speakers::default();
        for n in names {
            s.add(n);
        }
        s
    }

    #[test]
    fn a_query_names_a_speaker_by_whole_words_in_any_case() {
        let s = speakers(&["Ana", "Ben", "Ana Silva", "小明"]);
        let named = |q: &str| s.named_in(q);
        assert_eq!(
            named("What did ana say about the trip?"),
            [speaker_key("Ana")].into()
        );
        assert_eq!(
            named("Where does BEN keep the keys, Ana?"),
            [speaker_key("Ben"), speaker_key("Ana")].into()
        );
        // The longer name takes its words; the shorter one counts only where it stands alone.
        assert_eq!(
            named("When did Ana Silva move?"),
            [speaker_key("ana silva")].into()
        );
        assert_eq!(
            named("Did Ana help Ana Silva move?"),
            [speaker_key("ana silva"), speaker_key("Ana")].into()
        );
        // An entry's source is keyed as a name is kept: trimmed, the whole string lower-cased.
        assert_eq!(speaker_key(" ANA "), speaker_key("ana"));
        assert_eq!(speaker_key("ΟΔΥΣΣΕΥΣ"), speaker_key("οδυσσευς"));
        // Inside another word it is not a name.
        assert!(named("Banana bread and a benchmark").is_empty());
        assert!(named("Anastasia called").is_empty());
        // A name in a script without spaces is found inside a sentence.
        assert_eq!(named("小明上周去哪了？"), [speaker_key("小明")].into());
    }

    #[test]
    fn sources_that_cannot_be_named_are_left_out() {
        let s = speakers(&["a", "42", "  ", "x1"]);
        assert!(s.named_in("a 42 x1").contains(&speaker_key("x1")));
        assert_eq!(s.named_in("a 42 x1").len(), 1);
    }

    #[test]
    fn the_key_ignores_case() {
        assert_eq!(speaker_key("Ana"), speaker_key("ANA"));
        assert_ne!(speaker_key("Ana"), speaker_key("Ben"));
    }
}
