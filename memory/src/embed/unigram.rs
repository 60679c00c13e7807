//! A SentencePiece-unigram model that gives the same ids as `tokenizers`' `Unigram` in a few
//! megabytes instead of ~125 MB.
//!
//! `tokenizers` keeps its vocabulary in a trie with a hash map in every node: for the default
//! embedder's 128k pieces that is ~125 MB resident — more than the model's graph — for a lookup
//! done a few dozen times per sentence. Here the pieces sit in one sorted array, and the pieces
//! starting at a position are found by narrowing a range of that array one character at a time
//! (a few binary searches, stopping as soon as no piece has the prefix). The rest of the
//! pipeline (normaliser, pre-tokeniser, template, truncation) stays `tokenizers`' own, so the
//! only logic re-implemented is the Viterbi pass, which follows `Unigram::encode_optimized`
//! step for step: same unknown-piece score (lowest score − 10), same tie rule (the first,
//! shortest candidate wins), unknown characters fused into one `<unk>`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokenizers::models::unigram::UnigramTrainer;
use tokenizers::{Model, Result, Token};

/// What `Unigram` subtracts from the lowest piece score for a character no piece covers.
const UNK_PENALTY: f64 = 10.0;

/// The unigram model: pieces sorted by their bytes in one arena, each with its id; the range
/// of pieces starting with each character; scores by id.
#[derive(Debug)]
pub(crate) struct CompactUnigram {
    /// Every distinct piece, concatenated in sorted order.
    arena: String,
    /// `(start in arena, id)` per piece, sorted by piece; a piece ends where the next begins.
    sorted: Vec<(u32, u32)>,
    /// `[lo, hi)` of `sorted` for the pieces that start with a character: the first narrowing
    /// step, which would otherwise be two binary searches over the whole vocabulary.
    by_first: HashMap<char, (u32, u32)>,
    /// Score of each id.
    scores: Vec<f64>,
    unk_id: u32,
    unk_score: f64,
}

/// Why a vocabulary cannot make a model.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UnigramError {
    #[error("unigram vocabulary is empty")]
    Empty,
    #[error("unk id {unk_id} is outside the vocabulary of {len}")]
    UnkOutside { unk_id: usize, len: usize },
}

impl CompactUnigram {
    /// The model of `vocab` (pieces with scores, in id order) with `unk_id` for unknown text.
    pub(crate) fn new(
        vocab: Vec<(String, f64)>,
        unk_id: usize,
    ) -> std::result::Result<Self, UnigramError> {
        if vocab.is_empty() {
            return Err(UnigramError::Empty);
        }
        if unk_id >= vocab.len() {
            return Err(UnigramError::UnkOutside {
                unk_id,
                len: vocab.len(),
            });
        }
        let min_score = vocab.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let scores: Vec<f64> = vocab.iter().map(|p| p.1).collect();
        let mut pieces: Vec<(String, u32)> = vocab
            .into_iter()
            .enumerate()
            .map(|(id, (piece, _))| (piece, id as u32))
            .collect();
        // A piece listed twice maps to its last id, as in `Unigram`'s token map: sort stably by
        // piece, then keep the last of each run.
        pieces.sort_by(|a, b| a.0.cmp(&b.0));
        let mut arena = String::new();
        let mut sorted: Vec<(u32, u32)> = Vec::with_capacity(pieces.len());
        let mut by_first: HashMap<char, (u32, u32)> = HashMap::new();
        let mut last: Option<String> = None;
        for (piece, id) in pieces {
            if last.as_deref() == Some(piece.as_str()) {
                if let Some(entry) = sorted.last_mut() {
                    entry.1 = id;
                }
                continue;
            }
            let at = sorted.len() as u32;
            if let Some(first) = piece.chars().next() {
                by_first
                    .entry(first)
                    .and_modify(|range| range.1 = at + 1)
                    .or_insert((at, at + 1));
            }
            sorted.push((arena.len() as u32, id));
            arena.push_str(&piece);
            last = Some(piece);
        }
        arena.shrink_to_fit();
        sorted.shrink_to_fit();
        Ok(Self {
            arena,
            sorted,
            by_first,
            scores,
            unk_id: unk_id as u32,
            unk_score: min_score - UNK_PENALTY,
        })
    }

    /// The bytes of the `i`-th piece in sorted order.
    fn piece(&self, i: usize) -> &[u8] {
        let start = self.sorted[i].0 as usize;
        let end = self
            .sorted
            .get(i + 1)
            .map_or(self.arena.len(), |next| next.0 as usize);
        &self.arena.as_bytes()[start..end]
    }

    /// The id of the piece `piece`.
    fn id_of(&self, piece: &str) -> Option<u32> {
        let first = piece.chars().next()?;
        let &(lo, hi) = self.by_first.get(&first)?;
        let (lo, hi) = (lo as usize, hi as usize);
        let at = lo + partition(lo, hi, |i| self.piece(i) < piece.as_bytes());
        (at < hi && self.piece(at) == piece.as_bytes()).then(|| self.sorted[at].1)
    }

    /// Calls `found(end, id)` for every piece that `text[start..]` begins with, shortest first.
    fn pieces_at(&self, text: &str, start: usize, mut found: impl FnMut(usize, u32)) {
        let mut chars = text[start..].char_indices();
        let Some((_, first)) = chars.next() else {
            return;
        };
        let Some(&(lo, hi)) = self.by_first.get(&first) else {
            return;
        };
        let (mut lo, mut hi) = (lo as usize, hi as usize);
        let mut end = start + first.len_utf8();
        loop {
            let prefix = &text.as_bytes()[start..end];
            // The smallest piece with this prefix is the prefix itself, if it is a piece.
            if self.piece(lo) == prefix {
                found(end, self.sorted[lo].1);
            }
            let Some((offset, c)) = chars.next() else {
                return;
            };
            end = start + offset + c.len_utf8();
            let prefix = &text.as_bytes()[start..end];
            let first_at = lo + partition(lo, hi, |i| self.piece(i) < prefix);
            let past = lo
                + partition(lo, hi, |i| {
                    let p = self.piece(i);
                    &p[..p.len().min(prefix.len())] <= prefix
                });
            if first_at == past {
                return;
            }
            (lo, hi) = (first_at, past);
        }
    }

    /// The best segmentation of `sentence` as `(start, end, id)`, unknown runs fused.
    fn segment(&self, sentence: &str) -> Vec<(usize, usize, u32)> {
        #[derive(Clone, Copy)]
        struct Best {
            score: f64,
            start: Option<usize>,
            id: u32,
        }
        let size = sentence.len();
        let mut best = vec![
            Best {
                score: 0.0,
                start: None,
                id: 0,
            };
            size + 1
        ];
        let mut start = 0;
        while let Some(c) = sentence[start..].chars().next() {
            let here = best[start].score;
            let char_end = start + c.len_utf8();
            let mut single = false;
            self.pieces_at(sentence, start, |end, id| {
                let score = here + self.scores[id as usize];
                let node = &mut best[end];
                if node.start.is_none() || score > node.score {
                    *node = Best {
                        score,
                        start: Some(start),
                        id,
                    };
                }
                single |= end == char_end;
            });
            if !single {
                let score = here + self.unk_score;
                let node = &mut best[char_end];
                if node.start.is_none() || score > node.score {
                    *node = Best {
                        score,
                        start: Some(start),
                        id: self.unk_id,
                    };
                }
            }
            start = char_end;
        }
        let mut out: Vec<(usize, usize, u32)> = Vec::new();
        let mut end = size;
        while end > 0 {
            let node = best[end];
            // Every position on a char boundary was reached: the unknown-piece fallback covers
            // each character.
            let from = node.start.expect("every char boundary is reached");
            match out.last_mut() {
                Some(last) if node.id == self.unk_id && last.2 == self.unk_id => last.0 = from,
                _ => out.push((from, end, node.id)),
            }
            end = from;
        }
        out.reverse();
        out
    }
}

impl Model for CompactUnigram {
    type Trainer = UnigramTrainer;

    fn tokenize(&self, sentence: &str) -> Result<Vec<Token>> {
        Ok(self
            .segment(sentence)
            .into_iter()
            .map(|(start, end, id)| {
                let piece = &sentence[start..end];
                // A fused unknown run that happens to spell a piece gets that piece's id, as in
                // `Unigram::tokenize`.
                let id = if id == self.unk_id {
                    self.id_of(piece).unwrap_or(id)
                } else {
                    id
                };
                Token::new(id, piece.to_owned(), (start, end))
            })
            .collect())
    }

    fn token_to_id(&self, token: &str) -> Option<u32> {
        self.id_of(token)
    }

    fn id_to_token(&self, id: u32) -> Option<String> {
        let i = self.sorted.iter().position(|&(_, i)| i == id)?;
        Some(String::from_utf8_lossy(self.piece(i)).into_owned())
    }

    fn get_vocab(&self) -> HashMap<String, u32> {
        (0..self.sorted.len())
            .map(|i| {
                let piece = String::from_utf8_lossy(self.piece(i)).into_owned();
                (piece, self.sorted[i].1)
            })
            .collect()
    }

    fn get_vocab_size(&self) -> usize {
        self.scores.len()
    }

    fn save(&self, _folder: &Path, _prefix: Option<&str>) -> Result<Vec<PathBuf>> {
        Err("the compact unigram model is loaded from tokenizer.json and never saved".into())
    }

    fn get_trainer(&self) -> UnigramTrainer {
        UnigramTrainer::default()
    }
}

/// How many of the indices `lo..hi` satisfy `pred`, for a `pred` true on a prefix of them.
fn partition(lo: usize, hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut a, mut b) = (lo, hi);
    while a < b {
        let mid = a + (b - a) / 2;
        if pred(mid) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    a - lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tokenizers::models::unigram::Unigram;

    fn vocab() -> Vec<(String, f64)> {
        [
            ("<unk>", 0.0),
            ("a", -1.0),
            ("b", -1.5),
            ("c", -2.0),
            ("d", -2.0),
            ("cd", -2.5),
            ("ab", -1.2),
            ("abc", -3.0),
            ("abcd", -2.8),
            ("▁", -0.5),
            ("▁ab", -1.0),
            ("猫", -3.0),
            ("猫咪", -2.0),
            ("ab", -0.9),
            // "x" and "y" alone are unknown, but "xy" is a piece: only the unknown penalty
            // decides between two <unk>s and "xy".
            ("xy", -8.0),
            // "ef" ties with "e" + "f": the first candidate found (the longer piece from the
            // earlier start) must win.
            ("e", -1.0),
            ("f", -1.0),
            ("ef", -2.0),
        ]
        .into_iter()
        .map(|(p, s)| (p.to_owned(), s))
        .collect()
    }

    fn ids(model: &impl Model, text: &str) -> Vec<(u32, String, (usize, usize))> {
        model
            .tokenize(text)
            .expect("tokenize")
            .into_iter()
            .map(|t| (t.id, t.value, t.offsets))
            .collect()
    }

    #[test]
    fn unigram_compact_matches_the_reference_by_hand() {
        let reference = Unigram::from(vocab(), Some(0), false).expect("reference");
        let compact = CompactUnigram::new(vocab(), 0).expect("compact");
        for text in [
            "abcd",
            "abcdacdxx",
            "▁ab猫咪c",
            "xyz",
            "猫",
            "ab",
            "",
            "éa",
            "xy",
            "xyx",
            "ef",
            "aefxy",
        ] {
            assert_eq!(ids(&compact, text), ids(&reference, text), "{text:?}");
        }
        // The duplicate "ab" maps to its last id, and unknown runs fuse into one <unk>.
        assert_eq!(compact.token_to_id("ab"), Some(13));
        assert_eq!(ids(&compact, "zzq"), [(0, "zzq".to_owned(), (0, 3))]);
        assert_eq!(compact.get_vocab_size(), 18);
        assert_eq!(ids(&compact, "xy"), [(14, "xy".to_owned(), (0, 2))]);
        assert_eq!(ids(&compact, "ef"), [(17, "ef".to_owned(), (0, 2))]);
    }

    #[test]
    fn unigram_compact_rejects_a_bad_vocabulary() {
        assert!(CompactUnigram::new(Vec::new(), 0).is_err());
        assert!(CompactUnigram::new(vocab(), 99).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn unigram_compact_matches_the_reference_on_any_text(
            text in "[abcdefxyé猫咪▁]{0,24}"
        ) {
            let reference = Unigram::from(vocab(), Some(0), false).expect("reference");
            let compact = CompactUnigram::new(vocab(), 0).expect("compact");
            prop_assert_eq!(ids(&compact, &text), ids(&reference, &text));
        }
    }
}
