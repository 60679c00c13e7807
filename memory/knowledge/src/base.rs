//! [`KnowledgeBase`]: the root directory, its index, and the embedder.

use std::collections::HashSet;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_memory::Embedder;

use crate::KnowledgeError;
use crate::error::IoContext;
use crate::index::Index;
use crate::limits::DEFAULT_MIN_COSINE;
use crate::search::DenseCache;

/// A knowledge base: the documents under one root directory and the index derived from them.
///
/// Not `Clone` and not shared: one owner calls its `&mut self` methods, each of which first
/// brings the index up to date with the files ([`sync`](KnowledgeBase::sync)).
pub struct KnowledgeBase {
    /// Canonical, so the walk can tell whether a symlink resolves inside it.
    pub(crate) root: PathBuf,
    pub(crate) index: Index,
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
    pub(crate) min_cosine: f32,
    /// Passage vectors of the current embedder in one matrix, built on the first dense search
    /// after any change to the index.
    pub(crate) dense: Option<DenseCache>,
    /// Problems already logged, so a search every few seconds does not repeat them.
    pub(crate) warned: HashSet<String>,
    pub(crate) moved_aside: Option<PathBuf>,
}

impl std::fmt::Debug for KnowledgeBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeBase")
            .field("root", &self.root)
            .field("index", &self.index.path())
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.fingerprint().to_string()),
            )
            .finish_non_exhaustive()
    }
}

impl KnowledgeBase {
    /// Opens the knowledge base whose documents live under `root` and whose index is the SQLite
    /// file `index`. Creates `root` (mode `0700`) and the index (mode `0600`) when missing. An
    /// index that is damaged, foreign or from a newer Hearth is moved aside to
    /// `<index>.corrupt-<ms>` with a warning and rebuilt from the files on the next sync.
    ///
    /// With `embedder`, documents are also searched by meaning; without, by keywords alone.
    /// Opening reads no document: the first operation syncs.
    pub fn open(
        root: &Path,
        index: &Path,
        embedder: Option<Arc<dyn Embedder>>,
    ) -> Result<KnowledgeBase, KnowledgeError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)
            .io_ctx("create root", root)?;
        let root = root.canonicalize().io_ctx("resolve root", root)?;
        let (index, moved_aside) = Index::open(index)?;
        Ok(KnowledgeBase {
            root,
            index,
            embedder,
            min_cosine: DEFAULT_MIN_COSINE,
            dense: None,
            warned: HashSet::new(),
            moved_aside,
        })
    }

    /// The root directory (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The index file.
    pub fn index_path(&self) -> &Path {
        self.index.path()
    }

    /// Where [`open`](KnowledgeBase::open) moved an unusable index file, if it did.
    pub fn moved_aside(&self) -> Option<&Path> {
        self.moved_aside.as_deref()
    }

    /// Sets the lowest cosine similarity at which a document counts as a match by meaning
    /// (default [`DEFAULT_MIN_COSINE`]). Without a floor every document would be a dense
    /// candidate for every query, and the fused list would always be full of unrelated ones.
    pub fn set_min_cosine(&mut self, min_cosine: f32) {
        self.min_cosine = min_cosine;
    }

    /// Logs `message` about `subject` once per knowledge base.
    pub(crate) fn warn_once(&mut self, subject: &str, message: &str) {
        if self.warned.insert(format!("{subject}\u{0}{message}")) {
            tracing::warn!(root = %self.root.display(), subject, "knowledge base: {message}");
        }
    }
}

#[cfg(test)]
mod tests {
    /// The kernel moves the knowledge base onto its memory service thread.
    #[test]
    fn the_knowledge_base_can_move_between_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<super::KnowledgeBase>();
    }
}
