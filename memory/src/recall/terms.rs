//! Search terms of a text for the keyword index: the shared tokenizer's words (jieba for Chinese,
//! lower-cased, without stop words), English words reduced by a light suffix stripper so that
//! "serviced", "services" and "servicing" meet, plus overlapping CJK bigrams, which still match
//! when jieba cuts a phrase differently in two texts.
//!
//! Stored entries and queries go through the same function, so the stripper only has to be
//! consistent, not linguistically right.

use std::borrow::Cow;

use crate::embed::tokens::{cjk_bigrams, tokenize};

/// Terms of `text` in order, repeats kept (they are term frequencies): words, then bigrams.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = tokenize(text)
        .into_iter()
        .map(|w| match stem(&w) {
            Cow::Borrowed(_) => w,
            Cow::Owned(s) => s,
        })
        .collect();
    terms.extend(cjk_bigrams(text));
    terms
}

/// [`search_terms`] joined by single spaces: the `tokens` column the full-text index reads.
pub fn index_tokens(text: &str) -> String {
    search_terms(text).join(" ")
}

/// Distinct [`search_terms`] of a query, first occurrence order, joined by spaces: a term typed
/// twice is not twice the evidence.
pub fn query_tokens(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let terms: Vec<String> = search_terms(text)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect();
    terms.join(" ")
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

/// A light English suffix stripper in the spirit of Porter's step 1: plural `-s`/`-es`/`-ies`,
/// then `-ing`/`-ed` when a vowel is left, undoubling the consonant that exposes, then a final
/// `-e` and `-y` → `i`. Only lower-case ASCII words longer than three letters are touched.
pub fn stem(word: &str) -> Cow<'_, str> {
    let bytes = word.as_bytes();
    if bytes.len() <= 3 || !bytes.iter().all(u8::is_ascii_lowercase) {
        return Cow::Borrowed(word);
    }
    let mut s: Vec<u8> = bytes.to_vec();
    if s.ends_with(b"sses") {
        s.truncate(s.len() - 2);
    } else if s.ends_with(b"ies") && s.len() > 4 {
        s.truncate(s.len() - 3);
        s.push(b'y');
    } else if s.ends_with(b"s") && !s.ends_with(b"ss") && !s.ends_with(b"us") && !s.ends_with(b"is")
    {
        s.pop();
    }
    let suffix = if s.ends_with(b"ing") {
        3
    } else if s.ends_with(b"ed") && !s.ends_with(b"eed") {
        2
    } else {
        0
    };
    if suffix > 0 && s.len() - suffix >= 3 && s[..s.len() - suffix].iter().any(|&b| is_vowel(b)) {
        s.truncate(s.len() - suffix);
        let n = s.len();
        if n >= 2 && s[n - 1] == s[n - 2] && !is_vowel(s[n - 1]) && !b"lsz".contains(&s[n - 1]) {
            s.pop();
        }
    }
    if s.len() > 3 && s.ends_with(b"e") {
        s.pop();
    }
    if s.len() > 3 && s.ends_with(b"y") {
        let n = s.len();
        s[n - 1] = b'i';
    }
    if s == bytes {
        return Cow::Borrowed(word);
    }
    // Only ASCII bytes were removed or replaced by ASCII bytes.
    Cow::Owned(String::from_utf8(s).expect("ASCII in, ASCII out"))
}
