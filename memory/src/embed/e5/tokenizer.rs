//! multilingual-e5-small's tokenizer: XLM-R's SentencePiece unigram as the model was trained
//! with it. Each character goes through the file's normalisation map, runs of spaces collapse,
//! a leading `▁` is added and spaces become `▁`; then the most probable segmentation (Viterbi
//! over the pieces' log-probabilities, a character no piece covers costing the lowest score − 10
//! as `<unk>`) is cut to the token limit and framed by `<s>` … `</s>`.
//!
//! Pieces are found through an open-addressing table of piece numbers (2 MB for 250k pieces)
//! whose keys live in the mapped file: no string is copied.

use super::weights_file::E5Weights;

const METASPACE: char = '\u{2581}';
/// What a character no piece covers costs below the least likely piece.
const UNKNOWN_PENALTY: f32 = 10.0;

#[derive(Debug)]
pub(crate) struct E5Tokenizer {
    /// Piece number + 1 at the slot its FNV-1a hash probes to; 0 = empty.
    table: Vec<u32>,
    mask: usize,
    max_piece_bytes: usize,
    unknown_score: f32,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl E5Tokenizer {
    pub(crate) fn new(weights: &E5Weights) -> Self {
        let pieces = weights.pieces();
        let size = (pieces * 2).next_power_of_two();
        let mask = size - 1;
        let mut table = vec![0u32; size];
        let mut max_piece_bytes = 1;
        for id in 0..pieces {
            let piece = weights.piece(id);
            max_piece_bytes = max_piece_bytes.max(piece.len());
            if piece.is_empty() {
                continue;
            }
            let mut slot = fnv1a(piece) as usize & mask;
            while table[slot] != 0 {
                slot = (slot + 1) & mask;
            }
            // Fewer pieces than u32::MAX: checked by the size of the table we could allocate.
            table[slot] = id as u32 + 1;
        }
        let least = weights.scores.iter().copied().fold(f32::INFINITY, f32::min);
        Self {
            table,
            mask,
            max_piece_bytes,
            unknown_score: least - UNKNOWN_PENALTY,
        }
    }

    /// The first piece spelled `bytes`, if any (the unknown piece never matches).
    fn lookup(&self, weights: &E5Weights, bytes: &[u8]) -> Option<u32> {
        let mut slot = fnv1a(bytes) as usize & self.mask;
        loop {
            let entry = self.table[slot];
            if entry == 0 {
                return None;
            }
            let id = entry - 1;
            if weights.piece(id as usize) == bytes {
                return (id != weights.header.unk).then_some(id);
            }
            slot = (slot + 1) & self.mask;
        }
    }

    /// The text as the pieces spell it: normalised, spaces collapsed, `▁` for spaces and in front.
    fn normalized(weights: &E5Weights, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 3);
        let mut previous_space = false;
        let mut push = |c: char, out: &mut String| {
            if c == ' ' && previous_space {
                return;
            }
            previous_space = c == ' ';
            out.push(if c == ' ' { METASPACE } else { c });
        };
        for c in text.chars() {
            match weights.normalize(c) {
                Some(replacement) => replacement.iter().for_each(|&r| push(r, &mut out)),
                None => push(c, &mut out),
            }
        }
        if !out.starts_with(METASPACE) {
            out.insert(0, METASPACE);
        }
        out
    }

    /// `<s>`, at most `max_tokens - 2` pieces of `text`, `</s>`.
    pub(crate) fn encode(&self, weights: &E5Weights, text: &str, max_tokens: usize) -> Vec<u32> {
        let header = weights.header;
        let normalized = Self::normalized(weights, text);
        // Byte offset of every character boundary, the end included.
        let bounds: Vec<usize> = normalized
            .char_indices()
            .map(|(at, _)| at)
            .chain(std::iter::once(normalized.len()))
            .collect();
        let chars = bounds.len() - 1;
        let bytes = normalized.as_bytes();
        // best[e]: score of the best segmentation of the first e characters; back[e]: its last
        // piece (None: an unknown character) and where that piece starts.
        let mut best = vec![f32::NEG_INFINITY; chars + 1];
        let mut back: Vec<(Option<u32>, usize)> = vec![(None, 0); chars + 1];
        best[0] = 0.0;
        for i in 0..chars {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            for e in i + 1..=chars {
                let span = &bytes[bounds[i]..bounds[e]];
                if span.len() > self.max_piece_bytes {
                    break;
                }
                if let Some(id) = self.lookup(weights, span) {
                    let score = best[i] + weights.scores[id as usize];
                    if score > best[e] {
                        best[e] = score;
                        back[e] = (Some(id), i);
                    }
                }
            }
            let unknown = best[i] + self.unknown_score;
            if unknown > best[i + 1] {
                best[i + 1] = unknown;
                back[i + 1] = (None, i);
            }
        }
        let mut pieces = Vec::new();
        let mut e = chars;
        while e > 0 {
            let (id, start) = back[e];
            pieces.push(id.unwrap_or(header.unk));
            e = start;
        }
        pieces.reverse();
        pieces.truncate(max_tokens.saturating_sub(2));
        let mut ids = Vec::with_capacity(pieces.len() + 2);
        ids.push(header.bos);
        ids.extend(pieces);
        ids.push(header.eos);
        ids
    }
}
