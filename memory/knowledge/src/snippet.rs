//! A hit's snippet: its best passage cut to [`SNIPPET_CHARS`] characters, around the first
//! query word when that word would otherwise be cut off.

use crate::limits::SNIPPET_CHARS;

/// How far before a matched word a snippet may start when no sentence start is closer.
const LEAD_CHARS: usize = 40;

/// `text` cut to [`SNIPPET_CHARS`] characters on character boundaries, with `…` where cut.
/// When the earliest of `terms` (lower-case search terms of the query) that occurs in `text`
/// lies past the cut, the snippet starts at that word's sentence (or [`LEAD_CHARS`] before it)
/// instead of at the beginning, so it shows why the document matched.
pub(crate) fn snippet(text: &str, terms: &[String]) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= SNIPPET_CHARS {
        return text.to_owned();
    }
    let start = match first_match(text, terms) {
        Some(at) if at + 1 >= SNIPPET_CHARS => sentence_start(&chars, at),
        _ => 0,
    };
    let budget = SNIPPET_CHARS - usize::from(start > 0);
    let mut out = String::with_capacity(SNIPPET_CHARS * 3);
    if start > 0 {
        out.push('…');
    }
    let end = start + budget;
    if end >= chars.len() {
        out.extend(&chars[start..]);
    } else {
        out.extend(&chars[start..end - 1]);
        out.push('…');
    }
    out
}

/// The character index of the earliest occurrence of any term, case-insensitively.
fn first_match(text: &str, terms: &[String]) -> Option<usize> {
    let lower = text.to_lowercase();
    // Lower-casing changes byte lengths only for a few scripts; there, give up on the position.
    if lower.len() != text.len() {
        return None;
    }
    let byte = terms
        .iter()
        .filter(|t| !t.is_empty())
        .filter_map(|t| lower.find(t.as_str()))
        .min()?;
    Some(text[..byte].chars().count())
}

/// Where the sentence holding character `at` begins (its first non-space character), but no
/// more than [`LEAD_CHARS`] before it.
fn sentence_start(chars: &[char], at: usize) -> usize {
    let floor = at.saturating_sub(LEAD_CHARS);
    let is_end = |c: char| matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '\n' | ';' | '；');
    let mut start = (floor..at)
        .rev()
        .find(|&i| is_end(chars[i]))
        .map_or(floor, |i| i + 1);
    while start < at && chars[start].is_whitespace() {
        start += 1;
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn short_text_is_whole() {
        assert_eq!(snippet("short", &terms(&["x"])), "short");
    }

    #[test]
    fn long_text_is_cut_on_character_boundaries() {
        let text = "面".repeat(300);
        let s = snippet(&text, &[]);
        assert_eq!(s.chars().count(), SNIPPET_CHARS);
        assert!(s.ends_with('…'));
    }

    #[test]
    fn a_late_match_moves_the_window_to_its_sentence() {
        let text = format!(
            "{} The key is under the pot. {}",
            "Filler. ".repeat(40),
            "x ".repeat(50)
        );
        let s = snippet(&text, &terms(&["pot"]));
        assert!(s.starts_with("…The key is under the pot."), "{s}");
        assert!(s.chars().count() <= SNIPPET_CHARS);
        let early = snippet(&text, &terms(&["filler"]));
        assert!(early.starts_with("Filler."), "{early}");
    }
}
