//! Query-focused excerpts for injected memory: a long entry is shown by the sentences that share
//! the most search terms with the query, in their original order, instead of by its first
//! characters.
//!
//! Why: an injected entry costs prompt tokens on every turn that recalls it, and the prefill of a
//! small local model is slow. Cutting an entry at a fixed length keeps its opening, which for a
//! long message is usually a greeting or context, and drops the sentence the query matched.

use std::collections::HashSet;

use crate::recall::terms::search_terms;

/// Marks text left out between, before or after the kept sentences.
const GAP: &str = "…";

/// `text` if it has at most `max_chars` characters; otherwise the sentences that share the most
/// distinct terms of `query_terms` with it (ties: the earlier one), kept in text order while they
/// fit in `max_chars`, with [`GAP`] where something was left out. A text that shares no term with
/// the query keeps its head. The result never exceeds `max_chars` characters plus the gap marks.
pub fn excerpt(text: &str, query_terms: &HashSet<String>, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let sentences = split_sentences(text);
    let scores: Vec<usize> = sentences
        .iter()
        .map(|s| {
            let terms: HashSet<String> = search_terms(s).into_iter().collect();
            terms.intersection(query_terms).count()
        })
        .collect();
    if scores.iter().all(|&s| s == 0) {
        return head(text, max_chars);
    }
    let mut order: Vec<usize> = (0..sentences.len()).collect();
    order.sort_by(|&a, &b| scores[b].cmp(&scores[a]).then(a.cmp(&b)));
    let mut keep = vec![false; sentences.len()];
    let mut left = max_chars;
    for &i in order.iter().take_while(|&&i| scores[i] > 0) {
        let len = sentences[i].chars().count();
        if len <= left {
            keep[i] = true;
            left -= len;
        }
    }
    if !keep.contains(&true) {
        // Even the best sentence alone is too long: show a window around its first match.
        let best = sentences[order[0]].trim_start();
        let skip = first_match(best, query_terms).saturating_sub(max_chars / 4);
        let mut out = String::new();
        if order[0] > 0 || skip > 0 {
            out.push_str(GAP);
        }
        let rest: String = best.chars().skip(skip).collect();
        out.push_str(&head(&rest, max_chars));
        return out;
    }
    let mut out = String::new();
    let mut gap = false;
    for (i, sentence) in sentences.iter().enumerate() {
        if keep[i] {
            if gap || (i > 0 && out.is_empty()) {
                out.push_str(GAP);
            }
            out.push_str(if out.is_empty() || out.ends_with(GAP) {
                sentence.trim_start()
            } else {
                sentence
            });
            gap = false;
        } else {
            gap = true;
        }
    }
    if gap {
        out.push_str(GAP);
    }
    out
}

/// The first `max_chars` characters of `text`, with [`GAP`] after them when something is cut.
fn head(text: &str, max_chars: usize) -> String {
    let mut out: String = text.chars().take(max_chars).collect();
    if out.len() < text.len() {
        out.push_str(GAP);
    }
    out
}

/// The character index in `sentence` where the earliest query term starts (0 if none is found
/// verbatim, e.g. a term only jieba's cut produces).
fn first_match(sentence: &str, query_terms: &HashSet<String>) -> usize {
    let lower = sentence.to_lowercase();
    query_terms
        .iter()
        .filter_map(|t| lower.find(t.as_str()))
        .min()
        .map_or(0, |byte| lower[..byte].chars().count())
}

/// `text` cut after each sentence end (`.`, `!`, `?`, `。`, `！`, `？`, `；` or a line break); the
/// pieces keep their whitespace, so joining them gives `text` back.
fn split_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '。' | '！' | '？' | '；' | '\n' => true,
            '.' | '!' | '?' => chars.peek().is_none_or(|&(_, next)| next.is_whitespace()),
            _ => false,
        };
        if end {
            let cut = i + c.len_utf8();
            out.push(&text[start..cut]);
            start = cut;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(query: &str) -> HashSet<String> {
        search_terms(query).into_iter().collect()
    }

    #[test]
    fn a_short_text_is_kept_whole() {
        let text = "I adopted a cat named Luna.";
        assert_eq!(excerpt(text, &terms("cat"), 100), text);
    }

    #[test]
    fn the_matching_sentence_is_kept_from_the_middle_of_a_long_text() {
        let text = "Hi there, I hope you are well today. I was thinking about many things. \
                    Last spring I adopted a tabby cat called Luna from the shelter. \
                    Anyway, could you help me plan a trip to the coast next month?";
        let out = excerpt(text, &terms("what is the name of my cat"), 80);
        assert!(out.contains("tabby cat called Luna"), "{out}");
        assert!(!out.contains("Hi there"), "{out}");
        assert!(out.starts_with(GAP) && out.ends_with(GAP), "{out}");
        assert!(out.chars().count() <= 80 + 2 * GAP.chars().count(), "{out}");
    }

    #[test]
    fn kept_sentences_stay_in_text_order() {
        let text = "Coffee is my morning drink. The weather was grey all week. \
                    My sister prefers tea with her coffee cake.";
        let out = excerpt(text, &terms("coffee sister tea"), 90);
        let first = out.find("Coffee is").expect("first kept");
        let second = out.find("My sister").expect("second kept");
        assert!(first < second, "{out}");
        assert!(!out.contains("weather"), "{out}");
    }

    #[test]
    fn without_any_shared_term_the_head_is_kept() {
        let text = "One two three four five six seven eight nine ten.";
        assert_eq!(excerpt(text, &terms("zebra"), 13), "One two three…");
    }

    #[test]
    fn an_overlong_best_sentence_is_cut_not_dropped() {
        let text = format!(
            "Short intro. {} mentions the piano lesson.",
            "word ".repeat(60)
        );
        let out = excerpt(&text, &terms("piano lesson"), 40);
        assert!(out.starts_with(GAP), "{out}");
        assert!(out.contains("piano"), "{out}");
        assert!(out.chars().count() <= 40 + 2 * GAP.chars().count(), "{out}");
    }

    #[test]
    fn chinese_sentences_split_on_full_width_marks() {
        let text = "今天天气很好。我上个月搬到了里斯本，住在海边。周末我们去看电影吧！";
        let out = excerpt(text, &terms("我搬到哪里了"), 14);
        assert!(out.contains("里斯本"), "{out}");
        assert!(!out.contains("电影"), "{out}");
    }

    #[test]
    fn splitting_loses_no_byte() {
        let text = "A. B!  C? 中文。English\nlast";
        assert_eq!(split_sentences(text).concat(), text);
        assert_eq!(split_sentences("3.5 is a number").len(), 1);
    }
}
