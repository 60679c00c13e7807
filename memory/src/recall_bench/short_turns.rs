//! The short-turns variant's rewrite of items: each turn cut into its sentences, each sentence
//! an item of its own, as in a chat between people where a turn is a line or two ("Wow, that's
//! great! Where did you go?") rather than a paragraph. Dense models meet many short, generic
//! lines then, which a long assistant-style history does not show; the question's evidence
//! becomes every sentence of its evidence turns, so `turn_any` asks whether any of them is found.

use std::collections::HashMap;

use super::RecallSet;

/// A piece narrower than this ([`width`]) joins its neighbour: a list's "2." or a lone "Sure!"
/// is not a line anyone says on its own.
const MIN_WIDTH: usize = 40;

/// Characters, a CJK one counting two (it carries about a word).
fn width(s: &str) -> usize {
    s.chars().map(|c| if c >= '\u{2E80}' { 2 } else { 1 }).sum()
}

/// The sentences of `text`: cut after `.`, `!`, `?` (and their CJK forms) and at line breaks,
/// pieces narrower than [`MIN_WIDTH`] joined to the next (the last to the one before), trimmed. A text
/// without a cut is one piece; an empty text none.
pub fn sentences(text: &str) -> Vec<String> {
    let mut raw: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\n' {
            push_piece(&mut raw, &mut current);
            continue;
        }
        current.push(c);
        let cjk_end = matches!(c, '。' | '！' | '？');
        let latin_end =
            matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace());
        if cjk_end || latin_end {
            push_piece(&mut raw, &mut current);
        }
    }
    push_piece(&mut raw, &mut current);
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for piece in raw {
        if !pending.is_empty() {
            pending.push(' ');
        }
        pending.push_str(&piece);
        if width(&pending) >= MIN_WIDTH {
            out.push(std::mem::take(&mut pending));
        }
    }
    if !pending.is_empty() {
        match out.last_mut() {
            Some(last) => {
                last.push(' ');
                last.push_str(&pending);
            }
            None => out.push(pending),
        }
    }
    out
}

fn push_piece(out: &mut Vec<String>, current: &mut String) {
    let piece = current.trim();
    if !piece.is_empty() {
        out.push(piece.to_owned());
    }
    current.clear();
}

/// Every item of `set` replaced by its [`sentences`] (ids `<item id>.<n>`, from 1, same
/// session, time and speaker), and each question's evidence by the sentences of its evidence
/// items.
pub fn split_turns(set: &mut RecallSet) {
    for (corpus, items) in set.corpora.iter_mut() {
        let mut pieces_of: HashMap<String, Vec<String>> = HashMap::new();
        let mut out = Vec::with_capacity(items.len() * 3);
        for item in items.drain(..) {
            let ids: Vec<String> = sentences(&item.text)
                .into_iter()
                .enumerate()
                .map(|(n, text)| {
                    let id = format!("{}.{}", item.id, n + 1);
                    out.push(super::format::CorpusItem {
                        id: id.clone(),
                        text,
                        ..item.clone()
                    });
                    id
                })
                .collect();
            pieces_of.insert(item.id, ids);
        }
        *items = out;
        for q in set.questions.iter_mut().filter(|q| &q.corpus == corpus) {
            q.evidence = q
                .evidence
                .iter()
                .flat_map(|e| pieces_of.get(e).cloned().unwrap_or_default())
                .collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The text without its whitespace: what a cut may not change (it may add a space where a
    /// CJK sentence ended without one, and drop the line breaks it cut at).
    fn ink(s: &str) -> String {
        s.chars().filter(|c| !c.is_whitespace()).collect()
    }

    proptest! {
        /// Cutting loses, adds and reorders nothing, and every piece of a text that was cut
        /// is wide enough to stand on its own.
        #[test]
        fn pieces_keep_every_character_in_order(
            text in "([a-zA-Z0-9]{1,8}|[.!?。！？]|\\.|[ \n]|[你好世界]){0,80}"
        ) {
            let pieces = sentences(&text);
            let joined = pieces.join(" ");
            prop_assert_eq!(ink(&joined), ink(&text));
            prop_assert!(pieces.iter().all(|p| !p.is_empty() && p.trim() == p));
            if pieces.len() > 1 {
                prop_assert!(pieces.iter().all(|p| width(p) >= MIN_WIDTH), "{:?}", pieces);
            }
        }
    }

    #[test]
    fn a_turn_is_cut_into_sentences_of_a_readable_length() {
        assert_eq!(
            sentences(
                "Sure! I just got back from Lisbon with my sister last week. \
                 It was amazing. Do you know any good cafés in Porto?\nThanks"
            ),
            [
                "Sure! I just got back from Lisbon with my sister last week.",
                "It was amazing. Do you know any good cafés in Porto? Thanks",
            ]
        );
        // A number's point is not a sentence end; CJK ends need no space.
        assert_eq!(
            sentences("The price went from 3.5 to 4.2 dollars per kilo this spring, sadly."),
            ["The price went from 3.5 to 4.2 dollars per kilo this spring, sadly."]
        );
        assert_eq!(
            sentences(
                "我上周去了里斯本，和我妹妹一起玩了很多天，真的非常开心，天气也很好。我们还去了波尔图看了很多老房子和桥，吃了很多好吃的东西。"
            ),
            [
                "我上周去了里斯本，和我妹妹一起玩了很多天，真的非常开心，天气也很好。",
                "我们还去了波尔图看了很多老房子和桥，吃了很多好吃的东西。"
            ]
        );
        assert_eq!(sentences("ok"), ["ok"]);
        assert!(sentences(" \n ").is_empty());
    }
}
