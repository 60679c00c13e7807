//! multilingual-e5-small (384-d, mean pooling) on ONNX Runtime: the companion model recall fuses
//! as a second dense ranking. Queries and passages are embedded differently, as the model was
//! trained: "query: …" and "passage: …".
//!
//! Hearth tokenizes and looks up the word embeddings itself (from the mapped weights file, so the
//! 250k-row table costs only the rows used); the graph takes them with a padding mask.

use ort::session::Session;
use ort::value::TensorRef;
use parking_lot::Mutex;

use super::tokenizer::E5Tokenizer;
use super::weights_file::E5Weights;
use crate::embed::onnx::{build_session, head};
use crate::embed::{E5Assets, EmbedError, Embedder, Fingerprint, Pooling, l2_normalize};

/// Name of the model in its [`Fingerprint`].
pub const E5_SMALL_MODEL_NAME: &str = "multilingual-e5-small";
/// Tokens per text, `<s>` and `</s>` included: longer text is cut, as for the default model.
pub const E5_MAX_TOKENS: usize = 256;
const QUERY_PREFIX: &str = "query: ";
const PASSAGE_PREFIX: &str = "passage: ";
/// Characters handed to the tokenizer: bounds the work on a pasted document.
const MAX_CHARS: usize = E5_MAX_TOKENS * 32;
/// Texts per graph run.
const MAX_RUN_TEXTS: usize = 32;
/// Bound on texts × tokens² per run: the attention scores of a run are 12 heads of T×T floats
/// per text, 25 MB at this bound.
const MAX_RUN_CELLS: usize = 8 * E5_MAX_TOKENS * E5_MAX_TOKENS;

const EMBEDS_INPUT: &str = "embeds";
const MASK_INPUT: &str = "mask";
const OUTPUT: &str = "outputs";

/// Thread-safe like [`OnnxEmbedder`](crate::OnnxEmbedder): tokenizing in the caller's thread,
/// graph runs serialised.
pub struct E5Embedder {
    session: Mutex<Session>,
    weights: E5Weights,
    tokenizer: E5Tokenizer,
    fingerprint: Fingerprint,
}

impl std::fmt::Debug for E5Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E5Embedder")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

impl E5Embedder {
    /// Maps the weights file and loads the graph with `threads` intra-op threads (0 → 1).
    pub fn load(assets: &E5Assets, threads: usize) -> Result<Self, EmbedError> {
        let weights = E5Weights::open(&assets.weights)?;
        let tokenizer = E5Tokenizer::new(&weights);
        let session = build_session(&assets.runtime_lib, &assets.graph, threads)?;
        let dim = weights.header.hidden;
        let fingerprint = Fingerprint::new(
            E5_SMALL_MODEL_NAME,
            &assets.graph_sha256,
            dim,
            Pooling::Mean,
        )
        .map_err(|e| EmbedError::Asset {
            path: assets.weights.clone(),
            message: e.to_string(),
        })?;
        let embedder = Self {
            session: Mutex::new(session),
            weights,
            tokenizer,
            fingerprint,
        };
        // A graph that does not fit the weights file fails here, not on the first memory.
        embedder
            .embed_as(&[""], true)
            .map_err(|e| EmbedError::Asset {
                path: assets.graph.clone(),
                message: format!("does not run with {}: {e}", assets.weights.display()),
            })?;
        tracing::info!(fingerprint = %embedder.fingerprint, threads, "companion text embedder loaded");
        Ok(embedder)
    }

    /// Finds the installed files under `cache_dir` (see [`E5Assets::locate`]) and loads them.
    pub fn locate_and_load(
        cache_dir: Option<std::path::PathBuf>,
        threads: usize,
    ) -> Result<Self, EmbedError> {
        Self::load(&E5Assets::locate(cache_dir)?, threads)
    }

    /// Token ids of `text` with the model's `prefix`, `<s>` … `</s>` included.
    pub fn token_ids(&self, text: &str, is_query: bool) -> Vec<u32> {
        let prefix = if is_query {
            QUERY_PREFIX
        } else {
            PASSAGE_PREFIX
        };
        let mut prefixed = String::with_capacity(prefix.len() + text.len().min(MAX_CHARS * 4));
        prefixed.push_str(prefix);
        prefixed.push_str(head(text, MAX_CHARS));
        self.tokenizer
            .encode(&self.weights, &prefixed, E5_MAX_TOKENS)
    }

    /// Unit vectors of `texts` as queries or passages, in order.
    fn embed_as(&self, texts: &[&str], is_query: bool) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids: Vec<Vec<u32>> = texts.iter().map(|t| self.token_ids(t, is_query)).collect();
        // Runs of similar lengths waste little on padding.
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let dim = self.dim();
        let mut out = vec![Vec::new(); ids.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && end - start < MAX_RUN_TEXTS {
                let width = ids[order[end]].len();
                if (end + 1 - start) * width * width > MAX_RUN_CELLS {
                    break;
                }
                end += 1;
            }
            let run: Vec<&[u32]> = order[start..end]
                .iter()
                .map(|&i| ids[i].as_slice())
                .collect();
            let flat = self.run(&run)?;
            for (&i, row) in order[start..end].iter().zip(flat.chunks_exact(dim)) {
                let mut v = row.to_vec();
                l2_normalize(&mut v);
                out[i] = v;
            }
            start = end;
        }
        Ok(out)
    }

    /// One graph run over padded sequences; `len × dim` floats.
    fn run(&self, sequences: &[&[u32]]) -> Result<Vec<f32>, EmbedError> {
        let dim = self.dim();
        let rows = sequences.len();
        let width = sequences.iter().map(|s| s.len()).max().unwrap_or(0);
        let mut embeds = vec![0f32; rows * width * dim];
        let mut mask = vec![0f32; rows * width];
        for (b, ids) in sequences.iter().enumerate() {
            for (t, &id) in ids.iter().enumerate() {
                let at = (b * width + t) * dim;
                self.weights.word_row(id, &mut embeds[at..at + dim])?;
                mask[b * width + t] = 1.0;
            }
        }
        let embeds = TensorRef::from_array_view(([rows, width, dim], embeds.as_slice()))
            .map_err(|e| EmbedError::runtime("embeds tensor", e))?;
        let mask = TensorRef::from_array_view(([rows, width], mask.as_slice()))
            .map_err(|e| EmbedError::runtime("mask tensor", e))?;
        let mut session = self.session.lock();
        let outputs = session
            .run(ort::inputs![EMBEDS_INPUT => embeds, MASK_INPUT => mask])
            .map_err(|e| EmbedError::runtime("run", e))?;
        let value = outputs.get(OUTPUT).ok_or_else(|| EmbedError::Output {
            message: format!("no `{OUTPUT}` output"),
        })?;
        let (shape, data) = value
            .try_extract_tensor::<f32>()
            .map_err(|e| EmbedError::runtime("read output", e))?;
        if **shape != [rows as i64, dim as i64] {
            return Err(EmbedError::Output {
                message: format!("shape {:?}, expected [{rows}, {dim}]", &**shape),
            });
        }
        Ok(data.to_vec())
    }
}

impl Embedder for E5Embedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.weights.header.hidden
    }

    /// Passages: what memory stores.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_as(texts, false)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut rows = self.embed_as(&[text], true)?;
        rows.pop().ok_or_else(|| EmbedError::Output {
            message: "no vector for a query".to_owned(),
        })
    }
}
