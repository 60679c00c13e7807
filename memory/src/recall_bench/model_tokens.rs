//! Injected tokens as a model counts them, beside the budget's estimate.
//!
//! The budget estimates two tokens per character (SPEC §5.1's rule, safe for Chinese), which
//! overstates English text about eight-fold. What a prompt really costs is what a tokenizer
//! makes of it; the default embedder's multilingual SentencePiece vocabulary stands in for the
//! chat model's (both cut English at about 1.3 tokens per word and Chinese at about one per
//! character).

use crate::embed::{EmbedAssets, SpTokenizer, load_sp_tokenizer};

/// No cut: a block is counted whole.
const NO_TRUNCATION: usize = 1 << 20;

/// Counts tokens with the default embedder's tokenizer.
pub struct ModelTokens(SpTokenizer);

impl ModelTokens {
    /// The installed default tokenizer, or `None` when `make setup` has not installed it.
    pub fn locate() -> Option<Self> {
        let assets = EmbedAssets::locate(None).ok()?;
        load_sp_tokenizer(&assets.tokenizer, NO_TRUNCATION)
            .ok()
            .map(Self)
    }

    /// Tokens of `text`, specials excluded (0 for an empty text or one the tokenizer refuses).
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        self.0.encode(text, false).map_or(0, |e| e.len())
    }
}
