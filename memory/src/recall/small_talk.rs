//! Inputs with nothing to recall for: a greeting, thanks, an acknowledgement.
//!
//! Over months of talk a short greeting matches the many short greetings and "ok"s of the
//! history more closely than any real question matches its answer, so the injection floor lets
//! them through: on a 10,288-entry history "hello", "ok" and "谢谢" brought 2.6 unrelated
//! memories per input into the prompt (ARCHITECTURE §7). Small talk is a closed class of
//! phrases in every language, so it is recognised by closeness to a few of them in the main
//! model's space (which is multilingual: "謝謝你" is close to "thank you"), and only in a short
//! input: "thanks, what was that restaurant called again?" asks for something.

use crate::embed::{EmbedError, Embedder};
use crate::estimate_tokens;
use crate::simd::dot;

/// The phrases small talk is recognised by, in English and Chinese. Other phrasings and other
/// languages are recognised by their closeness to these in the main model's space.
pub const SMALL_TALK: &[&str] = &[
    "hello",
    "hi",
    "hey",
    "good morning",
    "good night",
    "how are you",
    "thanks",
    "thank you",
    "ok",
    "okay",
    "sure",
    "got it",
    "never mind",
    "bye",
    "see you",
    "lol",
    "你好",
    "早上好",
    "晚安",
    "谢谢",
    "好的",
    "嗯",
    "没事",
    "再见",
    "哈哈",
];

/// The longest input, in estimated tokens, that can be small talk: "great, thank you so much"
/// is 9, a question with something in it is longer or far from every phrase.
pub const SMALL_TALK_MAX_TOKENS: usize = 16;

/// The small-talk phrases' vectors in one model's space, embedded once.
pub(crate) struct SmallTalk {
    vectors: Vec<Vec<f32>>,
}

impl SmallTalk {
    /// The phrases embedded by `embedder` as queries, one at a time so each vector is the one
    /// the model gives an input of those words.
    pub(crate) fn embed(embedder: &dyn Embedder) -> Result<Self, EmbedError> {
        let vectors = SMALL_TALK
            .iter()
            .map(|phrase| embedder.embed_query(phrase))
            .collect::<Result<_, _>>()?;
        Ok(Self { vectors })
    }

    /// The cosine of `query_vector` (a unit vector of the same space) to the nearest phrase.
    pub(crate) fn closeness(&self, query_vector: &[f32]) -> f32 {
        self.vectors
            .iter()
            .filter(|v| v.len() == query_vector.len())
            .map(|v| dot(v, query_vector))
            .fold(f32::MIN, f32::max)
    }
}

/// Whether `input` is short enough to be small talk (see [`SMALL_TALK_MAX_TOKENS`]).
pub fn short_enough_for_small_talk(input: &str) -> bool {
    !input.trim().is_empty() && estimate_tokens(input) <= SMALL_TALK_MAX_TOKENS
}

/// Without a dense model: whether `input`, in lower case and without punctuation, spaces or
/// symbols, is one of the phrases ("Thanks!" and "thank you." are; "thanks a lot" is not).
pub fn is_small_talk_phrase(input: &str) -> bool {
    let bare = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let input = bare(input);
    !input.is_empty() && SMALL_TALK.iter().any(|p| bare(p) == input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_is_matched_whatever_its_case_and_punctuation_and_nothing_more() {
        for input in [
            "Thanks!",
            "thank you.",
            "OK",
            "  Good night ",
            "谢谢！",
            "再见。",
        ] {
            assert!(is_small_talk_phrase(input), "{input:?}");
        }
        for input in [
            "thanks a lot for the tips",
            "okay where",
            "",
            "!!",
            "谢谢你的建议",
        ] {
            assert!(!is_small_talk_phrase(input), "{input:?}");
        }
    }

    #[test]
    fn only_a_short_input_can_be_small_talk() {
        assert!(short_enough_for_small_talk("great, thank you so much"));
        assert!(!short_enough_for_small_talk("   "));
        assert!(!short_enough_for_small_talk(
            "thanks, and could you remind me what the name of that restaurant in Porto was?"
        ));
    }
}
