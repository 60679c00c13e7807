//! The default dense embedder: multilingual Universal Sentence Encoder v3 (quantized ONNX, 512-d)
//! run by ONNX Runtime, loaded at run time from the library `make setup` installed.
//!
//! The graph takes all sentences' token ids concatenated (`ids: int32[N]`) and where each sentence
//! starts (`row_splits: int64[B+1]`), so a batch needs no padding; it outputs `f32[B, 512]`.

use std::path::Path;
use std::sync::OnceLock;

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use parking_lot::Mutex;

use super::{
    EmbedAssets, EmbedError, Embedder, Fingerprint, Pooling, SpTokenizer, l2_normalize,
    load_sp_tokenizer,
};

/// Name of the default model in its [`Fingerprint`].
pub const USE_M3_MODEL_NAME: &str = "use-m3";
/// Tokens per sentence, `<s>` and `</s>` included. Cost grows linearly with length and the model
/// was trained on sentences; longer text is cut, not refused.
pub const DEFAULT_MAX_TOKENS: usize = 256;
/// Characters of a text handed to the tokenizer: bounds the work on a pasted document. Pieces
/// are at most 16 characters, so only text padded with long runs of whitespace (which collapse)
/// could lose a token that truncation would have kept.
const MAX_CHARS: usize = DEFAULT_MAX_TOKENS * 32;
/// Sentences per graph run. Larger inputs are split so one run's buffers stay small.
pub const MAX_BATCH: usize = 64;
/// Tokens per graph run: a run's buffers grow with its tokens (~18 MB per 250-token text), and
/// ONNX Runtime's arena keeps the largest run's for the life of the session: 64 long texts in
/// one run left a daemon at ~600 MB. With this bound it stays near 225 MB; short sentences still
/// go 64 to a run.
pub const MAX_RUN_TOKENS: usize = 2048;

const IDS_INPUT: &str = "ids";
const SPLITS_INPUT: &str = "row_splits";
const OUTPUT: &str = "outputs";

/// ONNX Runtime allows one environment per process, and the library can be loaded only once: the
/// first successful call decides the library for the whole process.
static ENVIRONMENT: OnceLock<Environment> = OnceLock::new();
static ENVIRONMENT_INIT: Mutex<()> = Mutex::new(());

/// The process-wide ONNX Runtime environment, created on first use from `runtime_lib`. Public so
/// that other ONNX sessions of the process (an image model, a bench's bare baseline) share it:
/// ONNX Runtime refuses a second one.
pub fn onnx_environment(runtime_lib: &Path) -> Result<Environment, EmbedError> {
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env.clone());
    }
    // A failed attempt must stay retryable (OnceLock::get_or_try_init is unstable), so the
    // initialisation is serialised by hand.
    let _guard = ENVIRONMENT_INIT.lock();
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env.clone());
    }
    let env = ort::init_from(runtime_lib)
        .map_err(|e| EmbedError::Runtime {
            op: "load library",
            message: format!("{}: {e}", runtime_lib.display()),
        })?
        .with_name("hearth")
        .with_telemetry(false)
        .build()
        .map_err(|e| EmbedError::runtime("create environment", e))?;
    Ok(ENVIRONMENT.get_or_init(|| env).clone())
}

/// A session on `model` with `threads` intra-op threads (at least 1), all optimisations on and no
/// spinning between runs.
pub(crate) fn build_session(
    runtime_lib: &Path,
    model: &Path,
    threads: usize,
) -> Result<Session, EmbedError> {
    let env = onnx_environment(runtime_lib)?;
    let build = |op| move |e: ort::Error<_>| EmbedError::runtime(op, e);
    Session::builder(&env)
        .map_err(|e| EmbedError::runtime("session builder", e))?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(build("set optimisation level"))?
        .with_intra_threads(threads.max(1))
        .map_err(build("set intra-op threads"))?
        .with_inter_threads(1)
        .map_err(build("set inter-op threads"))?
        // Spinning burns a shared core between runs for a few microseconds saved per run.
        .with_intra_op_spinning(false)
        .map_err(build("disable spinning"))?
        .commit_from_file(model)
        .map_err(|e| EmbedError::Runtime {
            op: "load model",
            message: format!("{}: {e}", model.display()),
        })
}

/// Token ids of a batch in the graph's input layout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenBatch {
    /// Every sentence's ids, `<s>` … `</s>` included, concatenated.
    pub ids: Vec<i32>,
    /// `row_splits[b]..row_splits[b + 1]` indexes sentence `b` in `ids`; `len = sentences + 1`.
    pub row_splits: Vec<i64>,
}

impl TokenBatch {
    /// Sentences in the batch.
    pub fn len(&self) -> usize {
        self.row_splits.len().saturating_sub(1)
    }

    /// Whether the batch holds no sentence.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Consecutive runs of whole sentences with at most `max_tokens` ids each (a longer sentence
    /// is a run of its own), in order; each run in the graph's layout.
    pub fn split(&self, max_tokens: usize) -> Vec<TokenBatch> {
        let mut parts = Vec::new();
        let mut start = 0;
        while start < self.len() {
            let first = self.row_splits[start];
            let mut end = start + 1;
            while end < self.len() && (self.row_splits[end + 1] - first) as usize <= max_tokens {
                end += 1;
            }
            let last = self.row_splits[end];
            parts.push(TokenBatch {
                ids: self.ids[first as usize..last as usize].to_vec(),
                row_splits: self.row_splits[start..=end]
                    .iter()
                    .map(|s| s - first)
                    .collect(),
            });
            start = end;
        }
        parts
    }
}

/// Dense text embedder over an ONNX graph. Thread-safe: tokenisation runs in the caller's thread,
/// graph runs are serialised by a mutex (each run is already parallel inside with `threads` > 1).
pub struct OnnxEmbedder {
    session: Mutex<Session>,
    tokenizer: SpTokenizer,
    fingerprint: Fingerprint,
    dim: usize,
}

impl std::fmt::Debug for OnnxEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxEmbedder")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

impl OnnxEmbedder {
    /// Loads the graph and tokenizer; `threads` is ONNX Runtime's intra-op thread count (0 → 1).
    pub fn load(assets: &EmbedAssets, threads: usize) -> Result<Self, EmbedError> {
        let threads = threads.max(1);
        let session = build_session(&assets.runtime_lib, &assets.model, threads)?;
        let dim = check_signature(&session, &assets.model)?;

        let tokenizer = load_sp_tokenizer(&assets.tokenizer, DEFAULT_MAX_TOKENS)?;

        let fingerprint =
            Fingerprint::new(USE_M3_MODEL_NAME, &assets.model_sha256, dim, Pooling::Mean).map_err(
                |e| EmbedError::Asset {
                    path: assets.model.clone(),
                    message: e.to_string(),
                },
            )?;
        tracing::info!(%fingerprint, threads, "dense text embedder loaded");
        Ok(Self {
            session: Mutex::new(session),
            tokenizer,
            fingerprint,
            dim,
        })
    }

    /// Finds the installed assets under `cache_dir` (see [`EmbedAssets::locate`]) and loads them.
    pub fn locate_and_load(
        cache_dir: Option<std::path::PathBuf>,
        threads: usize,
    ) -> Result<Self, EmbedError> {
        Self::load(&EmbedAssets::locate(cache_dir)?, threads)
    }

    /// Tokenises `texts` into the graph's input layout (truncated to [`DEFAULT_MAX_TOKENS`]).
    ///
    /// Runs in the calling thread on purpose: handing a handful of short texts to a thread pool
    /// costs a cross-core wake-up, more than encoding them, and the graph run dominates anyway.
    pub fn tokenize(&self, texts: &[&str]) -> Result<TokenBatch, EmbedError> {
        let mut batch = TokenBatch {
            ids: Vec::with_capacity(texts.len() * 24),
            row_splits: Vec::with_capacity(texts.len() + 1),
        };
        batch.row_splits.push(0);
        for text in texts {
            let encoding = self
                .tokenizer
                .encode_fast(head(text, MAX_CHARS), true)
                .map_err(EmbedError::tokenizer)?;
            // The vocabulary has 128k entries, far below i32::MAX.
            batch
                .ids
                .extend(encoding.get_ids().iter().map(|&id| id as i32));
            batch.row_splits.push(batch.ids.len() as i64);
        }
        Ok(batch)
    }

    /// Runs the graph on an already tokenised batch; returns `len × dim` floats, row-major, as
    /// the graph produced them (unit-norm up to the model's rounding).
    pub fn run_tokens(&self, batch: &TokenBatch) -> Result<Vec<f32>, EmbedError> {
        let rows = batch.len();
        if rows == 0 {
            return Ok(Vec::new());
        }
        let ids = TensorRef::from_array_view(([batch.ids.len()], batch.ids.as_slice()))
            .map_err(|e| EmbedError::runtime("ids tensor", e))?;
        let splits =
            TensorRef::from_array_view(([batch.row_splits.len()], batch.row_splits.as_slice()))
                .map_err(|e| EmbedError::runtime("row_splits tensor", e))?;
        let mut session = self.session.lock();
        let outputs = session
            .run(ort::inputs![IDS_INPUT => ids, SPLITS_INPUT => splits])
            .map_err(|e| EmbedError::runtime("run", e))?;
        let value = outputs.get(OUTPUT).ok_or_else(|| EmbedError::Output {
            message: format!("no `{OUTPUT}` output"),
        })?;
        let (shape, data) = value
            .try_extract_tensor::<f32>()
            .map_err(|e| EmbedError::runtime("read output", e))?;
        if **shape != [rows as i64, self.dim as i64] {
            return Err(EmbedError::Output {
                message: format!("shape {:?}, expected [{rows}, {}]", &**shape, self.dim),
            });
        }
        Ok(data.to_vec())
    }
}

impl Embedder for OnnxEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(MAX_BATCH) {
            for run in self.tokenize(chunk)?.split(MAX_RUN_TOKENS) {
                let flat = self.run_tokens(&run)?;
                out.extend(flat.chunks_exact(self.dim).map(|row| {
                    let mut v = row.to_vec();
                    l2_normalize(&mut v);
                    v
                }));
            }
        }
        Ok(out)
    }
}

/// The first `max_chars` characters of `text`.
pub(crate) fn head(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// Checks the graph is the stripped one (ids + row_splits in, `outputs: f32[B, dim]` out) and
/// returns `dim`.
fn check_signature(session: &Session, model: &Path) -> Result<usize, EmbedError> {
    let bad = |message: String| EmbedError::Asset {
        path: model.to_path_buf(),
        message,
    };
    let mut inputs: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
    inputs.sort_unstable();
    if inputs != [IDS_INPUT, SPLITS_INPUT] {
        return Err(bad(format!(
            "graph inputs are {inputs:?}, expected [{IDS_INPUT:?}, {SPLITS_INPUT:?}] (re-run `make setup`)"
        )));
    }
    let output = session
        .outputs()
        .iter()
        .find(|o| o.name() == OUTPUT)
        .ok_or_else(|| bad(format!("graph has no `{OUTPUT}` output")))?;
    match output.dtype().tensor_shape().map(|s| &**s) {
        Some([_, dim]) if *dim > 0 => Ok(*dim as usize),
        other => Err(bad(format!(
            "`{OUTPUT}` has shape {other:?}, expected [batch, dim]"
        ))),
    }
}
