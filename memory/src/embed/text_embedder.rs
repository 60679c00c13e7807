//! The embedders the memory uses: the dense model when it is installed, otherwise the sparse
//! fallback, chosen once at start-up and announced in the log either way; and the companion
//! model, when installed, that ranks cold recall beside it.

use std::path::PathBuf;
use std::sync::Arc;

use super::{E5Embedder, Embedder, OnnxEmbedder, SparseEmbedder};

/// Dense when the model loads, sparse (with a warning) when it does not.
#[derive(Debug)]
pub enum TextEmbedder {
    /// Boxed: the loaded model is large next to the zero-sized fallback.
    Dense(Box<OnnxEmbedder>),
    /// No model loaded: term-frequency vectors only.
    Sparse(SparseEmbedder),
}

impl TextEmbedder {
    /// Loads the installed model from `cache_dir` (see [`EmbedAssets::locate`](super::EmbedAssets::locate))
    /// with `threads` intra-op threads, or falls back to sparse vectors, logging why at warn level.
    pub fn load_or_fallback(cache_dir: Option<PathBuf>, threads: usize) -> Self {
        match OnnxEmbedder::locate_and_load(cache_dir, threads) {
            Ok(dense) => TextEmbedder::Dense(Box::new(dense)),
            Err(err) => TextEmbedder::Sparse(SparseEmbedder::fallback(&err)),
        }
    }

    /// The dense embedder, when there is one.
    pub fn dense(&self) -> Option<&dyn Embedder> {
        match self {
            TextEmbedder::Dense(d) => Some(d.as_ref()),
            TextEmbedder::Sparse(_) => None,
        }
    }

    /// The sparse vectorizer; always available (it needs no model).
    pub fn sparse(&self) -> SparseEmbedder {
        SparseEmbedder
    }

    /// Why recall is degraded, or `None` when the dense model is in use.
    pub fn degraded(&self) -> Option<&'static str> {
        match self {
            TextEmbedder::Dense(_) => None,
            TextEmbedder::Sparse(_) => Some("sparse word vectors: no dense embedding model"),
        }
    }
}

impl From<OnnxEmbedder> for TextEmbedder {
    fn from(dense: OnnxEmbedder) -> Self {
        TextEmbedder::Dense(Box::new(dense))
    }
}

/// The dense models memory runs with, loaded once at start-up.
#[derive(Clone, Default)]
pub struct MemoryModels {
    /// The main model (`None`: the sparse fallback, already announced in the log).
    pub dense: Option<Arc<dyn Embedder>>,
    /// The companion that only ranks cold recall (`None`: recall fuses one dense ranking with
    /// keywords).
    pub companion: Option<Arc<dyn Embedder>>,
}

impl std::fmt::Debug for MemoryModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fp = |m: &Option<Arc<dyn Embedder>>| m.as_ref().map(|m| m.fingerprint().to_string());
        f.debug_struct("MemoryModels")
            .field("dense", &fp(&self.dense))
            .field("companion", &fp(&self.companion))
            .finish()
    }
}

impl MemoryModels {
    /// Loads both installed models from `cache_dir` with `threads` intra-op threads each; a
    /// model that does not load is logged at warn level and left out.
    pub fn load(cache_dir: Option<PathBuf>, threads: usize) -> Self {
        let dense = match TextEmbedder::load_or_fallback(cache_dir.clone(), threads) {
            TextEmbedder::Dense(dense) => Some(Arc::from(dense as Box<dyn Embedder>)),
            TextEmbedder::Sparse(_) => None,
        };
        let companion = match E5Embedder::locate_and_load(cache_dir, threads) {
            Ok(companion) => Some(Arc::new(companion) as Arc<dyn Embedder>),
            Err(err) => {
                tracing::warn!(
                    %err,
                    "no companion embedding model: recall fuses one dense ranking with keywords"
                );
                None
            }
        };
        Self { dense, companion }
    }
}
