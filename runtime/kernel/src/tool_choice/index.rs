//! Tools ranked by how near their descriptions are to a text: by the recall embedding when a
//! model is loaded, by shared search terms otherwise.

use hearth_memory::{Embedder, search_terms};
use hearth_stages::ToolDef;
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A tool as it is ranked: its name and the text that describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDoc {
    /// The tool's name.
    pub name: String,
    /// Its name in words and its description.
    pub text: String,
}

impl ToolDoc {
    /// The document of `def`: `weather_now` reads as "weather now", since a request names the
    /// words, not the identifier.
    pub fn of(def: &ToolDef) -> ToolDoc {
        let words = def.name.replace(['_', '-'], " ");
        ToolDoc {
            name: def.name.clone(),
            text: format!("{words}: {}", def.description),
        }
    }
}

/// Passage vectors and search terms of tool documents, kept per name while the text stays the
/// same, so a description is embedded and tokenised once, not once per turn (tokenising every
/// description was 7 % of the store thread's CPU per turn without a model).
#[derive(Default)]
pub struct ToolIndex {
    model: RwLock<Option<Arc<dyn Embedder>>>,
    vectors: Mutex<HashMap<String, (String, Vec<f32>)>>,
    terms: Mutex<HashMap<String, (String, HashSet<String>)>>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field(
                "model",
                &self
                    .model
                    .read()
                    .as_ref()
                    .map(|m| m.fingerprint().to_string()),
            )
            .field("vectors", &self.vectors.lock().len())
            .field("terms", &self.terms.lock().len())
            .finish()
    }
}

impl ToolIndex {
    /// An index without a model: it ranks by shared terms until one is installed.
    pub fn new() -> ToolIndex {
        ToolIndex::default()
    }

    /// Ranks with `model` from now on; vectors of another model are dropped.
    pub fn install(&self, model: Arc<dyn Embedder>) {
        let mut slot = self.model.write();
        if slot.as_ref().map(|m| m.fingerprint()) != Some(model.fingerprint()) {
            self.vectors.lock().clear();
            *slot = Some(model);
        }
    }

    /// Whether a model is installed.
    pub fn has_model(&self) -> bool {
        self.model.read().is_some()
    }

    /// The names of `docs`, nearest to `query` first. Embedding runs the model (milliseconds),
    /// so this is called off the kernel's worker; a model that fails falls back to terms.
    pub fn rank(&self, query: &str, docs: &[ToolDoc]) -> Vec<String> {
        let model = self.model.read().clone();
        if let Some(model) = model {
            match self.rank_dense(model.as_ref(), query, docs) {
                Ok(ranked) => return ranked,
                Err(e) => tracing::warn!("tool ranking by meaning failed, by words instead: {e}"),
            }
        }
        self.rank_by_kept_terms(query, docs)
    }

    /// [`rank_by_terms`] with each description's terms tokenised once.
    fn rank_by_kept_terms(&self, query: &str, docs: &[ToolDoc]) -> Vec<String> {
        let wanted = term_set(query);
        let mut terms = self.terms.lock();
        for d in docs {
            if terms.get(&d.name).is_none_or(|(text, _)| *text != d.text) {
                terms.insert(d.name.clone(), (d.text.clone(), term_set(&d.text)));
            }
        }
        rank_by_overlap(docs, |d| wanted.intersection(&terms[&d.name].1).count())
    }

    fn rank_dense(
        &self,
        model: &dyn Embedder,
        query: &str,
        docs: &[ToolDoc],
    ) -> Result<Vec<String>, hearth_memory::EmbedError> {
        let q = model.embed_query(query)?;
        let mut vectors = self.vectors.lock();
        let missing: Vec<&ToolDoc> = docs
            .iter()
            .filter(|d| vectors.get(&d.name).is_none_or(|(text, _)| *text != d.text))
            .collect();
        for chunk in missing.chunks(hearth_memory::MAX_BATCH.max(1)) {
            let texts: Vec<&str> = chunk.iter().map(|d| d.text.as_str()).collect();
            for (doc, v) in chunk.iter().zip(model.embed_batch(&texts)?) {
                vectors.insert(doc.name.clone(), (doc.text.clone(), v));
            }
        }
        let mut scored: Vec<(f32, &str)> = docs
            .iter()
            .map(|d| {
                let v = &vectors[&d.name].1;
                (dot(&q, v), d.name.as_str())
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(scored.into_iter().map(|(_, n)| n.to_owned()).collect())
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Ranks by the share of the query's distinct terms a document holds (the recall index's
/// terms: words, and CJK bigrams); ties keep the documents' order.
pub fn rank_by_terms(query: &str, docs: &[ToolDoc]) -> Vec<String> {
    let wanted = term_set(query);
    rank_by_overlap(docs, |d| wanted.intersection(&term_set(&d.text)).count())
}

fn term_set(text: &str) -> HashSet<String> {
    search_terms(text).into_iter().collect()
}

/// The names of `docs`, most `shared` terms first; among equals in their given order.
fn rank_by_overlap(docs: &[ToolDoc], shared: impl Fn(&ToolDoc) -> usize) -> Vec<String> {
    let mut scored: Vec<(usize, usize)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (shared(d), i))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .map(|(_, i)| docs[i].name.clone())
        .collect()
}
