//! A plain in-memory Okapi BM25, the yardstick recall is measured against: lower-cased ASCII
//! letter/digit runs and single CJK characters as tokens, a short English stop list, k1 = 1.5,
//! b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5)). It is deliberately naive (no stemming,
//! no jieba, no bigrams): it is the baseline of the recall benchmark's data description, not
//! Hearth's own keyword path (that is SQLite FTS5 over the terms of [`super::terms`]).

use std::collections::HashMap;

/// Term-frequency saturation.
pub const BM25_K1: f32 = 1.5;
/// Length normalisation.
pub const BM25_B: f32 = 0.75;

/// Function words dropped by the baseline tokenizer.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
    "these", "those", "i", "me", "my", "you", "your", "we", "our", "he", "she", "they", "them",
    "his", "her", "their", "do", "does", "did", "what", "which", "who", "how", "when", "where",
    "why", "can", "could", "would", "should", "will", "have", "has", "had", "not", "no", "so",
    "if", "about", "into", "than", "then", "there",
];

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// CJK unified ideographs and extension A: each one is a token.
fn is_cjk_char(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF)
}

/// The baseline's tokens: runs of lower-cased ASCII letters and digits, each CJK character on
/// its own, stop words removed. Everything else separates tokens.
pub fn bm25_tokens(text: &str) -> Vec<String> {
    fn flush(word: &mut String, out: &mut Vec<String>) {
        if !word.is_empty() && !is_stop_word(word) {
            out.push(word.clone());
        }
        word.clear();
    }
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            if is_cjk_char(c) {
                out.push(c.to_string());
            }
        }
    }
    flush(&mut word, &mut out);
    out
}

/// An inverted index of documents numbered from 0 in the order they were added.
#[derive(Clone, Debug, Default)]
pub struct OkapiBm25 {
    postings: HashMap<String, Vec<(u32, u32)>>,
    doc_len: Vec<u32>,
    total_len: u64,
}

impl OkapiBm25 {
    /// An index with no documents.
    pub fn new() -> Self {
        Self::default()
    }

    /// Indexes `text`; returns its document number.
    pub fn add(&mut self, text: &str) -> usize {
        let doc = self.doc_len.len();
        let tokens = bm25_tokens(text);
        let mut tf: HashMap<String, u32> = HashMap::new();
        for t in tokens.iter() {
            *tf.entry(t.clone()).or_insert(0) += 1;
        }
        for (term, n) in tf {
            self.postings.entry(term).or_default().push((doc as u32, n));
        }
        self.doc_len.push(tokens.len() as u32);
        self.total_len += tokens.len() as u64;
        doc
    }

    /// Documents added so far.
    pub fn len(&self) -> usize {
        self.doc_len.len()
    }

    /// Whether no document was added.
    pub fn is_empty(&self) -> bool {
        self.doc_len.is_empty()
    }

    /// The `k` best documents for `query` as `(doc, score)`, score descending, ties by lower
    /// document number. Each distinct query token counts once; only documents sharing a token
    /// with the query are returned.
    pub fn search(&self, query: &str, k: usize) -> Vec<(usize, f32)> {
        let n = self.doc_len.len();
        if n == 0 || k == 0 {
            return Vec::new();
        }
        let avg = self.total_len as f32 / n as f32;
        let mut scores = vec![0.0f32; n];
        let mut touched = Vec::new();
        let mut terms = bm25_tokens(query);
        let mut seen = std::collections::HashSet::new();
        terms.retain(|t| seen.insert(t.clone()));
        for term in terms {
            let Some(list) = self.postings.get(&term) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let d = doc as usize;
                let tf = tf as f32;
                let norm =
                    BM25_K1 * (1.0 - BM25_B + BM25_B * self.doc_len[d] as f32 / avg.max(1e-9));
                if scores[d] == 0.0 {
                    touched.push(d);
                }
                scores[d] += idf * tf * (BM25_K1 + 1.0) / (tf + norm);
            }
        }
        let mut hits: Vec<(usize, f32)> = touched
            .into_iter()
            .map(|d| (d, scores[d]))
            .filter(|&(_, s)| s > 0.0)
            .collect();
        hits.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_tokens_are_ascii_runs_and_single_cjk_chars() {
        assert_eq!(
            bm25_tokens("The Galaxy-S22 was 北京天气 at 3pm, café"),
            ["galaxy", "s22", "北", "京", "天", "气", "3pm", "caf"]
        );
    }

    #[test]
    fn bm25_scores_match_the_formula() {
        let mut index = OkapiBm25::new();
        index.add("apple banana");
        index.add("apple apple cherry date");
        index.add("egg");
        // A repeated query token counts once.
        let hits = index.search("banana apple banana", 10);
        // N = 3, avgdl = 7/3. banana: df 1; apple: df 2.
        let idf = |df: f32| (1.0 + (3.0 - df + 0.5) / (df + 0.5)).ln();
        let part = |tf: f32, dl: f32| {
            tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * dl / (7.0 / 3.0)))
        };
        let doc0 = idf(1.0) * part(1.0, 2.0) + idf(2.0) * part(1.0, 2.0);
        let doc1 = idf(2.0) * part(2.0, 4.0);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 0);
        assert!((hits[0].1 - doc0).abs() < 1e-5);
        assert_eq!(hits[1].0, 1);
        assert!((hits[1].1 - doc1).abs() < 1e-5);
        assert!(index.search("zebra", 10).is_empty());
    }
}
