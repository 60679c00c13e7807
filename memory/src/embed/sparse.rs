//! The fallback when no dense model is installed (SPEC §5.10, the original's "no model loaded"
//! path): term-frequency vectors, `tf / max tf`, over jieba words and CJK character bigrams. There
//! is no IDF, as in the original; it matches shared words, not meaning, so recall is weaker.

use serde::{Deserialize, Serialize};

use super::tokens::{cjk_bigrams, tokenize};

/// Words and bigrams are separate features even when they spell the same thing: a two-character
/// jieba word and the identical bigram are different evidence.
const WORD_NS: u8 = b'w';
const BIGRAM_NS: u8 = b'b';

/// 64-bit FNV-1a of a namespace byte and the feature text. Stable across processes and versions,
/// so vectors can be stored; 2^64 buckets make collisions negligible for a vocabulary of words.
fn feature_hash(ns: u8, text: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for &b in std::iter::once(&ns).chain(text.as_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// A sparse vector: `(feature hash, weight)` pairs sorted by feature, no duplicates, weights > 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SparseVector {
    entries: Vec<(u64, f32)>,
}

impl SparseVector {
    /// Builds a vector from pairs in any order; repeated features add up, non-positive and
    /// non-finite weights are dropped.
    pub fn from_pairs(mut pairs: Vec<(u64, f32)>) -> Self {
        pairs.retain(|&(_, w)| w.is_finite() && w > 0.0);
        pairs.sort_unstable_by_key(|&(f, _)| f);
        let mut entries: Vec<(u64, f32)> = Vec::with_capacity(pairs.len());
        for (f, w) in pairs {
            match entries.last_mut() {
                Some((last, acc)) if *last == f => *acc += w,
                _ => entries.push((f, w)),
            }
        }
        Self { entries }
    }

    /// The `(feature hash, weight)` pairs, sorted by feature.
    pub fn entries(&self) -> &[(u64, f32)] {
        &self.entries
    }

    /// Features with a weight.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no feature has a weight (the vector of a text with no words).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Euclidean (L2) norm of the weights.
    pub fn norm(&self) -> f32 {
        self.entries.iter().map(|&(_, w)| w * w).sum::<f32>().sqrt()
    }

    /// Dot product over shared features (a merge of the two sorted lists).
    pub fn dot(&self, other: &SparseVector) -> f32 {
        let (a, b) = (&self.entries, &other.entries);
        let (mut i, mut j, mut sum) = (0, 0, 0.0f32);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    sum += a[i].1 * b[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        sum
    }

    /// Cosine similarity in [0, 1] (weights are positive); 0 when either vector is empty.
    pub fn cosine(&self, other: &SparseVector) -> f32 {
        let denom = self.norm() * other.norm();
        if denom == 0.0 {
            return 0.0;
        }
        (self.dot(other) / denom).clamp(0.0, 1.0)
    }
}

/// Term-frequency vectorizer over [`tokenize`] words and [`cjk_bigrams`].
#[derive(Clone, Copy, Debug, Default)]
pub struct SparseEmbedder;

impl SparseEmbedder {
    /// Builds the fallback and says, at warn level, that recall quality is reduced and why: a
    /// silent downgrade would look like a memory that forgets.
    pub fn fallback(reason: &dyn std::fmt::Display) -> Self {
        tracing::warn!(
            %reason,
            "no dense embedding model: using sparse word vectors, recall quality is reduced \
             (install the model with `make setup`)"
        );
        Self
    }

    /// `tf / max tf` per feature; empty for text with no words and no CJK characters.
    pub fn vectorize(&self, text: &str) -> SparseVector {
        let counts: Vec<(u64, f32)> = tokenize(text)
            .iter()
            .map(|w| (feature_hash(WORD_NS, w), 1.0))
            .chain(
                cjk_bigrams(text)
                    .iter()
                    .map(|b| (feature_hash(BIGRAM_NS, b), 1.0)),
            )
            .collect();
        if counts.is_empty() {
            return SparseVector::default();
        }
        let mut tf = SparseVector::from_pairs(counts);
        let max = tf.entries.iter().map(|&(_, w)| w).fold(0.0f32, f32::max);
        for (_, w) in &mut tf.entries {
            *w /= max;
        }
        tf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_pairs_sorts_merges_and_drops_bad_weights() {
        let v = SparseVector::from_pairs(vec![
            (3, 1.0),
            (1, 0.5),
            (3, 2.0),
            (2, 0.0),
            (4, f32::NAN),
            (5, -1.0),
        ]);
        assert_eq!(v.entries(), &[(1, 0.5), (3, 3.0)]);
    }

    #[test]
    fn feature_hash_separates_namespaces_and_is_stable() {
        assert_ne!(
            feature_hash(WORD_NS, "天气"),
            feature_hash(BIGRAM_NS, "天气")
        );
        // FNV-1a 64 of "wa": fixed so stored vectors stay readable across builds.
        assert_eq!(feature_hash(b'w', "a"), 0x08cb_5707_b56d_2975);
    }
}
