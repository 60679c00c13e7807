//! A word replaced where it stands as a word, in any case: "Porto" in "Lovely, porto is great"
//! or "Porto's wine", never in "Portobello".
//!
//! Used for a forgotten fact's value as a reply repeated it: the reply is the agent's own
//! wording, so the value is matched as a word, not as the verbatim sentence the user said.

/// `text` with every whole-word occurrence of `word` (compared case-insensitively) replaced by
/// `with`; `None` when there is none (or `word` is blank). A word edge that is a letter or
/// digit of an alphabetic script must not continue into another such letter or digit; a
/// Chinese or Japanese word has no spaces around it, so its edges are not checked.
pub(crate) fn replace_whole_word(text: &str, word: &str, with: &str) -> Option<String> {
    let word = word.trim();
    let first = word.chars().next()?;
    let last = word.chars().next_back()?;
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut changed = false;
    let mut at = 0;
    while at < text.len() {
        let Some(end) = match_at(text, at, word) else {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        let clear =
            |edge: char, neighbour: Option<char>| !(joins(edge) && neighbour.is_some_and(joins));
        if clear(first, before) && clear(last, after) {
            out.push_str(&text[copied..at]);
            out.push_str(with);
            copied = end;
            changed = true;
            at = end;
        } else {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Where a case-insensitive match of `word` starting at byte `at` of `text` ends.
fn match_at(text: &str, at: usize, word: &str) -> Option<usize> {
    let mut rest = text[at..].char_indices();
    for w in word.chars() {
        let (_, t) = rest.next()?;
        if !(t == w || t.to_lowercase().eq(w.to_lowercase())) {
            return None;
        }
    }
    Some(rest.next().map_or(text.len(), |(i, _)| at + i))
}

/// A letter or digit that words of alphabetic scripts are made of (below U+3000, where the
/// scripts written without spaces begin).
fn joins(c: char) -> bool {
    c.is_alphanumeric() && (c as u32) < 0x3000
}

#[cfg(test)]
mod tests {
    use super::replace_whole_word;

    fn r(text: &str, word: &str) -> Option<String> {
        replace_whole_word(text, word, "[x]")
    }

    #[test]
    fn a_word_goes_in_any_case_and_only_as_a_word() {
        assert_eq!(
            r("Lovely, Porto is great. porto's wine!", "Porto").as_deref(),
            Some("Lovely, [x] is great. [x]'s wine!")
        );
        assert_eq!(r("Portobello Road", "Porto"), None);
        assert_eq!(r("Oporto", "Porto"), None);
        assert_eq!(
            r("you are 34, not 345", "34").as_deref(),
            Some("you are [x], not 345")
        );
        assert_eq!(
            r("New York, new york", "New York").as_deref(),
            Some("[x], [x]")
        );
        assert_eq!(
            r("ZÜRICH and zürich", "Zürich").as_deref(),
            Some("[x] and [x]")
        );
    }

    #[test]
    fn words_without_spaces_around_them_match_inside_a_sentence() {
        assert_eq!(
            r("你住在杭州，真好", "杭州").as_deref(),
            Some("你住在[x]，真好")
        );
        assert_eq!(r("我住在Porto吗", "Porto").as_deref(), Some("我住在[x]吗"));
    }

    #[test]
    fn nothing_to_replace_is_none() {
        assert_eq!(r("nothing here", "Porto"), None);
        assert_eq!(r("anything", "  "), None);
        assert_eq!(r("", "Porto"), None);
    }
}
