//! The token budget of one turn (SPEC §4.8): deliberately conservative estimates so that a
//! prompt never overruns a provider's window, and a working band capped well below huge windows
//! because attention and cost degrade long before a window is full.

/// Window assumed when a provider does not declare one.
pub const DEFAULT_MAX_CONTEXT_TOKENS: usize = 32_768;
/// Upper bound of the working band, whatever the provider's window.
pub const MAX_TARGET_TOKENS: usize = 600_000;
/// Share of the window used as the working band (the rest is reserved for the answer).
const TARGET_USAGE: f64 = 0.8;

/// How a provider window is split for one turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBudget {
    /// The provider's window in tokens ([`DEFAULT_MAX_CONTEXT_TOKENS`] when it declared none).
    pub max_context: usize,
    /// The working band: 80% of the window, capped at [`MAX_TARGET_TOKENS`].
    pub target_usage: usize,
    /// Tokens left outside the band for the answer.
    pub reserved: usize,
    /// Estimated tokens of the system prompt, spent before anything else.
    pub fixed: usize,
    /// What the band leaves after the system prompt, split between memory and timeline.
    pub available: usize,
    /// Ceiling for recalled memory (one third of what is available).
    pub memory_tokens: usize,
    /// Ceiling for the conversation timeline (the other two thirds).
    pub context_tokens: usize,
}

/// Estimated tokens of `text` for the tokenizer of whatever model reads it: high enough that a
/// prompt built to a budget fits the model's window, close enough that a small window is not
/// left mostly empty.
///
/// A run of ASCII letters costs one token per three letters (common tokenizers give a whole
/// English word one or two tokens), but a word with a digit in it one per character; a single
/// space before a letter is free (it belongs to the
/// word's token), any other space, run of spaces, digit, punctuation mark or control character
/// costs one; any other character costs its UTF-8 bytes, the most a byte-level tokenizer can
/// give it (a Chinese character three, where a model that knows Chinese spends one or two).
/// [difference] The original counted two per character (SPEC §4.8): about eight times what
/// English costs, which left a 4,096-token window room for one exchange, and short of what a
/// small byte-level model spends on Chinese (`SmolLM2`: 2.6 per character, so a Chinese window
/// filled to the budget overran it). Measured against real tokenizers in
/// `memory/tests/fixtures/token_counts.json`.
pub fn estimate_tokens(text: &str) -> usize {
    let mut count = TokenCount::default();
    for c in text.chars() {
        count.push(c);
    }
    count.total()
}

/// [`estimate_tokens`] one character at a time, so a cut can stop where the estimate is reached.
#[derive(Clone, Copy, Debug, Default)]
struct TokenCount {
    /// Tokens of everything pushed, except the spaces still pending.
    tokens: usize,
    /// ASCII letters in the current run (0: the last character was not one).
    letters: usize,
    /// Letters of the current word of ASCII letters and digits, and the tokens charged for them.
    word_letters: usize,
    word_letter_tokens: usize,
    /// Whether the current word holds a digit: then every character of it costs one (a hash,
    /// a serial number, "Nf3"), since a tokenizer has no pieces for such words.
    word_digit: bool,
    /// Spaces since the last other character, not yet counted: free when one and a letter
    /// follows.
    spaces: usize,
}

impl TokenCount {
    fn push(&mut self, c: char) {
        if c == ' ' {
            self.spaces += 1;
            self.end_word();
            return;
        }
        let letter = c.is_ascii_alphabetic();
        if self.spaces > 0 {
            if self.spaces > 1 || !letter {
                self.tokens += 1;
            }
            self.spaces = 0;
        }
        if letter {
            if self.word_digit || self.letters.is_multiple_of(3) {
                self.tokens += 1;
                self.word_letter_tokens += 1;
            }
            self.letters += 1;
            self.word_letters += 1;
        } else if c.is_ascii_digit() {
            self.letters = 0;
            self.tokens += 1;
            if !self.word_digit {
                // The word's letters so far cost one each after all.
                self.tokens += self.word_letters - self.word_letter_tokens;
                self.word_letter_tokens = self.word_letters;
                self.word_digit = true;
            }
        } else {
            self.end_word();
            self.tokens += c.len_utf8();
        }
    }

    fn end_word(&mut self) {
        self.letters = 0;
        self.word_letters = 0;
        self.word_letter_tokens = 0;
        self.word_digit = false;
    }

    /// The estimate so far, trailing spaces counted.
    fn total(&self) -> usize {
        self.tokens + usize::from(self.spaces > 0)
    }
}

/// Splits `max_context` (0 = unknown) for a system prompt of `system_prompt` text.
pub fn compute_token_budget(max_context: usize, system_prompt: &str) -> TokenBudget {
    let max_context = if max_context == 0 {
        DEFAULT_MAX_CONTEXT_TOKENS
    } else {
        max_context
    };
    let target_usage = ((max_context as f64 * TARGET_USAGE) as usize).min(MAX_TARGET_TOKENS);
    let reserved = max_context.saturating_sub(target_usage);
    let fixed = estimate_tokens(system_prompt);
    let available = target_usage.saturating_sub(fixed);
    let memory_tokens = available / 3;
    TokenBudget {
        max_context,
        target_usage,
        reserved,
        fixed,
        available,
        memory_tokens,
        context_tokens: available - memory_tokens,
    }
}

/// The longest start of `text` whose estimate fits `max` tokens (cut at a character).
pub fn truncate_by_tokens(text: &str, max: usize) -> &str {
    let mut count = TokenCount::default();
    for (at, c) in text.char_indices() {
        count.push(c);
        // The estimate never falls as text is added, so the first character past `max` ends
        // the longest start that fits.
        if count.total() > max {
            return &text[..at];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn estimate_counts_words_by_letters_and_the_rest_by_bytes() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        // Three letters a token; the space before a word is the word's.
        assert_eq!(estimate_tokens("the cat"), 2);
        assert_eq!(estimate_tokens("international"), 5);
        // Digits, punctuation, a space before anything but a letter, and runs of spaces.
        assert_eq!(estimate_tokens("at 12:30."), 8);
        assert_eq!(estimate_tokens("a  b"), 3);
        assert_eq!(estimate_tokens("end "), 2);
        assert_eq!(estimate_tokens("a\nb"), 3);
        // A word with a digit costs one per character.
        assert_eq!(estimate_tokens("abc1def"), 7);
        assert_eq!(estimate_tokens("e4 Nf3"), 5);
        // Any other character its UTF-8 bytes.
        assert_eq!(estimate_tokens("héllo"), 4);
        assert_eq!(estimate_tokens("你好世界"), 12);
        assert_eq!(estimate_tokens("ok 👍"), 6);
    }

    #[test]
    fn unknown_window_falls_back() {
        let b = compute_token_budget(0, "");
        assert_eq!(b.max_context, DEFAULT_MAX_CONTEXT_TOKENS);
        assert_eq!(b.target_usage, 26_214);
        assert_eq!(b.reserved, 32_768 - 26_214);
        assert_eq!(b.memory_tokens, 26_214 / 3);
        assert_eq!(b.context_tokens, 26_214 - 26_214 / 3);
    }

    #[test]
    fn huge_window_is_capped() {
        let b = compute_token_budget(1_000_000, "abc");
        assert_eq!(b.target_usage, MAX_TARGET_TOKENS);
        assert_eq!(b.reserved, 400_000);
        assert_eq!(b.fixed, 1);
        assert_eq!(b.available, MAX_TARGET_TOKENS - 1);
    }

    #[test]
    fn prompt_larger_than_band_leaves_nothing() {
        let prompt = "x ".repeat(20_000);
        let b = compute_token_budget(1_000, &prompt);
        assert_eq!(b.available, 0);
        assert_eq!(b.memory_tokens, 0);
        assert_eq!(b.context_tokens, 0);
    }

    #[test]
    fn truncate_keeps_the_longest_start_that_fits() {
        assert_eq!(truncate_by_tokens("abcdef", 0), "");
        assert_eq!(truncate_by_tokens("abc", 1), "abc");
        assert_eq!(truncate_by_tokens("abcdef", 1), "abc");
        assert_eq!(truncate_by_tokens("the cat sat", 2), "the cat");
        assert_eq!(truncate_by_tokens("你好世界", 7), "你好");
        assert_eq!(truncate_by_tokens("你好世界", 100), "你好世界");
    }

    proptest! {
        #[test]
        fn budget_splits_exactly(max in 0usize..2_000_000, prompt in ".{0,64}") {
            let b = compute_token_budget(max, &prompt);
            prop_assert_eq!(b.memory_tokens + b.context_tokens, b.available);
            prop_assert!(b.memory_tokens * 3 <= b.available);
            prop_assert!(b.target_usage <= MAX_TARGET_TOKENS);
            prop_assert_eq!(b.reserved + b.target_usage, b.max_context);
        }

        #[test]
        fn truncation_fits_and_is_the_longest(text in ".{0,64}", max in 0usize..200) {
            let cut = truncate_by_tokens(&text, max);
            prop_assert!(text.starts_with(cut));
            prop_assert!(estimate_tokens(cut) <= max);
            if let Some(next) = text[cut.len()..].chars().next() {
                prop_assert!(estimate_tokens(&text[..cut.len() + next.len_utf8()]) > max);
            }
        }

        #[test]
        fn the_estimate_never_falls_as_text_grows(text in "[a-z 0-9.,\\n你é]{0,48}") {
            let mut last = 0;
            for (at, c) in text.char_indices() {
                let now = estimate_tokens(&text[..at + c.len_utf8()]);
                prop_assert!(now >= last, "{:?}", &text[..at + c.len_utf8()]);
                last = now;
            }
        }

        #[test]
        fn the_estimate_of_text_is_at_most_its_bytes(text in ".{0,64}") {
            prop_assert!(estimate_tokens(&text) <= text.len());
        }
    }
}
