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

/// `runes × 2`, at least 1 for non-empty text: errs on the safe side for mixed Chinese/English.
pub fn estimate_tokens(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        (text.chars().count() * 2).max(1)
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

/// Cuts `text` so that its estimate fits `max` tokens (the first `max / 2` runes).
pub fn truncate_by_tokens(text: &str, max: usize) -> &str {
    if max == 0 {
        return "";
    }
    let runes = text.chars().count();
    if runes * 2 <= max {
        return text;
    }
    match text.char_indices().nth(max / 2) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn estimate_is_two_per_rune() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 2);
        assert_eq!(estimate_tokens("héllo"), 10);
        assert_eq!(estimate_tokens("你好世界"), 8);
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
        assert_eq!(b.fixed, 6);
        assert_eq!(b.available, MAX_TARGET_TOKENS - 6);
    }

    #[test]
    fn prompt_larger_than_band_leaves_nothing() {
        let prompt = "x".repeat(20_000);
        let b = compute_token_budget(1_000, &prompt);
        assert_eq!(b.available, 0);
        assert_eq!(b.memory_tokens, 0);
        assert_eq!(b.context_tokens, 0);
    }

    #[test]
    fn truncate_by_tokens_keeps_half_max_runes() {
        assert_eq!(truncate_by_tokens("abcdef", 0), "");
        assert_eq!(truncate_by_tokens("abc", 6), "abc");
        assert_eq!(truncate_by_tokens("abcdef", 6), "abc");
        assert_eq!(truncate_by_tokens("你好世界", 4), "你好");
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
        fn truncation_fits(text in ".{0,64}", max in 0usize..200) {
            let cut = truncate_by_tokens(&text, max);
            prop_assert!(text.starts_with(cut));
            prop_assert!(estimate_tokens(cut) <= max.max(1) || cut.is_empty());
        }
    }
}
