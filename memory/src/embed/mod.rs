//! Text embedding: the dense default model (multilingual USE v3 on ONNX Runtime), the companion
//! model recall adds as a second dense ranking (multilingual-e5-small), the sparse
//! word-vector fallback used when it is not installed, and the shared Chinese/English tokenizer.
//!
//! Dense vectors are only comparable within one [`Fingerprint`]; the sparse fallback lives in its
//! own vector type so the two scales can never be mixed by accident.

mod assets;
mod e5;
mod error;
#[cfg(test)]
mod estimate_tests;
mod fingerprint;
mod onnx;
mod sp_tokenizer;
mod sparse;
mod text_embedder;
pub mod tokens;
mod unigram;

#[cfg(test)]
mod tests;

pub use assets::{
    E5_GRAPH_FILE, E5_WEIGHTS_FILE, E5Assets, EmbedAssets, MODEL_FILE, ORT_DYLIB_ENV,
    RUNTIME_LIB_FILE, TOKENIZER_FILE,
};
pub use e5::{E5_MAX_TOKENS, E5_SMALL_MODEL_NAME, E5Embedder};
pub use error::EmbedError;
pub use fingerprint::{FINGERPRINT_SHA_LEN, Fingerprint, FingerprintParseError, Pooling};
pub use onnx::{
    DEFAULT_MAX_TOKENS, MAX_BATCH, OnnxEmbedder, TokenBatch, USE_M3_MODEL_NAME, onnx_environment,
};
pub(crate) use sp_tokenizer::{SpTokenizer, load_sp_tokenizer};
pub use sparse::{SparseEmbedder, SparseVector};
pub use text_embedder::{MemoryModels, TextEmbedder};

/// A dense sentence embedder. Returned vectors have [`dim`](Embedder::dim) entries and unit L2
/// norm (all zeros only if the model produced zeros), so cosine is a dot product.
pub trait Embedder: Send + Sync {
    /// The space the vectors live in; never compare vectors of different fingerprints.
    fn fingerprint(&self) -> &Fingerprint;

    /// Entries of every vector this embedder returns (its fingerprint's dimension).
    fn dim(&self) -> usize;

    /// One vector per text, in order. An empty text still gets a vector.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// The vector of a search query. Models trained with instructions ("query: " / "passage: ")
    /// embed a question differently from what it should find; the rest embed it like any text.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed(text)
    }

    /// One text as its own batch: with a quantised model a vector shifts slightly with its batch
    /// companions, so this is the form to use where reproducibility matters.
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut rows = self.embed_batch(&[text])?;
        rows.pop().ok_or_else(|| EmbedError::Output {
            message: "no vector for a batch of one".to_owned(),
        })
    }
}

/// Scales `v` to unit L2 norm; a zero (or non-finite) vector is left as it is.
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        let inv = 1.0 / norm;
        v.iter_mut().for_each(|x| *x *= inv);
    }
}
