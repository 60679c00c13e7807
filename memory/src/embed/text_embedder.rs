//! The embedder the memory uses: the dense model when it is installed, otherwise the sparse
//! fallback, chosen once at start-up and announced in the log either way.

use std::path::PathBuf;

use super::{Embedder, OnnxEmbedder, SparseEmbedder};

/// Dense when the model loads, sparse (with a warning) when it does not.
#[derive(Debug)]
pub enum TextEmbedder {
    /// Boxed: the loaded model is large next to the zero-sized fallback.
    Dense(Box<OnnxEmbedder>),
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
