//! The default embedder's tokenizer: `tokenizer.json` read into `tokenizers`' pipeline with the
//! vocabulary in a [`CompactUnigram`] instead of `tokenizers`' own trie (~125 MB less resident).

use std::path::Path;

use serde::Deserialize;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::processors::PostProcessorWrapper;
use tokenizers::{TokenizerImpl, TruncationParams};

use super::EmbedError;
use super::unigram::CompactUnigram;

/// A SentencePiece-unigram tokenizer: the library's normaliser, pre-tokeniser, template and
/// truncation around the compact vocabulary.
pub(crate) type SpTokenizer = TokenizerImpl<
    CompactUnigram,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

/// The parts of `tokenizer.json` the pipeline needs. Added tokens must be absent: the file is
/// generated from the SentencePiece model by `make setup` and has none.
#[derive(Deserialize)]
struct TokenizerJson {
    #[serde(default)]
    added_tokens: Vec<serde_json::Value>,
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    post_processor: Option<PostProcessorWrapper>,
    decoder: Option<DecoderWrapper>,
    model: UnigramJson,
}

#[derive(Deserialize)]
struct UnigramJson {
    #[serde(rename = "type")]
    kind: String,
    unk_id: Option<usize>,
    vocab: Vec<(String, f64)>,
    #[serde(default)]
    byte_fallback: bool,
}

/// Loads `path` and cuts every encoding at `max_tokens` (specials included).
pub(crate) fn load_sp_tokenizer(path: &Path, max_tokens: usize) -> Result<SpTokenizer, EmbedError> {
    let bad = |message: String| EmbedError::Asset {
        path: path.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let json: TokenizerJson = serde_json::from_reader(std::io::BufReader::new(file))
        .map_err(|e| bad(format!("not a tokenizer.json this embedder reads: {e}")))?;
    if json.model.kind != "Unigram" || json.model.byte_fallback {
        return Err(bad(format!(
            "model {} (byte fallback {}): only a SentencePiece unigram without byte fallback \
             is supported",
            json.model.kind, json.model.byte_fallback
        )));
    }
    if !json.added_tokens.is_empty() {
        return Err(bad("added tokens are not supported".to_owned()));
    }
    let unk_id = json
        .model
        .unk_id
        .ok_or_else(|| bad("the unigram model has no unk id".to_owned()))?;
    let model = CompactUnigram::new(json.model.vocab, unk_id).map_err(|e| bad(e.to_string()))?;
    let mut tokenizer = SpTokenizer::new(model);
    tokenizer
        .with_normalizer(json.normalizer)
        .map_err(EmbedError::tokenizer)?;
    tokenizer
        .with_pre_tokenizer(json.pre_tokenizer)
        .with_post_processor(json.post_processor)
        .with_decoder(json.decoder);
    // tokenizer.json carries no truncation; without one a pasted document costs seconds.
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(EmbedError::tokenizer)?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}
