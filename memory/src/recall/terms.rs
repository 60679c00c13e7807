//! Search terms of a text for the keyword index: the shared tokenizer's words (jieba for Chinese,
//! lower-cased, without stop words) plus overlapping CJK bigrams, which still match when jieba
//! cuts a phrase differently in two texts. Stored entries and queries go through the same
//! function.
//!
//! No English stemming: a light suffix stripper was measured on the recall benchmark and cost
//! recall (BM25 turn_any@5 −0.013 to −0.02): it merges words that differ in meaning ("news",
//! "new") more often than it rescues a plural.

use crate::embed::tokens::{cjk_bigrams, tokenize};

/// Words that frame a question about memory rather than say what it is about ("when did I
/// mention…", "how many times…", "你还记得…"). Dropped from queries only: in a stored entry they
/// are ordinary words, in a question they match every entry that happens to contain them.
const QUESTION_WORDS: &[&str] = &[
    // English
    "when",
    "where",
    "who",
    "whom",
    "whose",
    "why",
    "how",
    "many",
    "much",
    "ago",
    "remember",
    "remembered",
    "recall",
    "recalled",
    "mention",
    "mentioned",
    "tell",
    "told",
    "remind",
    // Chinese
    "什么",
    "哪个",
    "哪里",
    "哪儿",
    "怎么",
    "为什么",
    "多少",
    "几",
    "记得",
    "还记得",
    "提到",
    "提过",
    "告诉",
];

/// Terms of `text` in order, repeats kept (they are term frequencies): words, then bigrams.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut terms = tokenize(text);
    terms.extend(cjk_bigrams(text));
    terms
}

/// [`search_terms`] joined by single spaces: the `tokens` column the full-text index reads.
pub fn index_tokens(text: &str) -> String {
    search_terms(text).join(" ")
}

/// The distinct [`search_terms`] of a query, in first-occurrence order, without question words,
/// joined by spaces: a term typed twice is not twice the evidence.
pub fn query_tokens(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let terms: Vec<String> = search_terms(text)
        .into_iter()
        .filter(|t| !QUESTION_WORDS.contains(&t.as_str()) && seen.insert(t.clone()))
        .collect();
    terms.join(" ")
}
