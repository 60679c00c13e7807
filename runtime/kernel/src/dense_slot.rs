//! The recall model, shared once it has loaded with what embeds outside the store's owner.

use std::sync::{Arc, OnceLock};

/// The recall model once it has loaded, for the services that embed outside the store's
/// owner (the knowledge base). Filled once; empty while the model loads or when it is off.
#[derive(Clone, Default)]
pub struct DenseSlot(Arc<OnceLock<Arc<dyn hearth_memory::Embedder>>>);

impl DenseSlot {
    /// The model, if it has loaded.
    pub fn get(&self) -> Option<Arc<dyn hearth_memory::Embedder>> {
        self.0.get().cloned()
    }

    pub(crate) fn fill(&self, model: Arc<dyn hearth_memory::Embedder>) {
        let _ = self.0.set(model);
    }
}

impl std::fmt::Debug for DenseSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DenseSlot")
            .field(&self.get().map(|m| m.fingerprint().to_string()))
            .finish()
    }
}
