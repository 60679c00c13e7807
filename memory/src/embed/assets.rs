//! Where the default embedder's files are. `make setup` (scripts/setup-embedder.sh) puts them in
//! `<cache>/embedder/` and writes `READY` last; nothing is ever downloaded at run time.

use std::path::{Path, PathBuf};

use super::EmbedError;

/// File names written by scripts/setup-embedder.sh. This one is the ONNX Runtime library.
pub const RUNTIME_LIB_FILE: &str = "libonnxruntime.so.1.32.0";
/// The default embedder's stripped graph.
pub const MODEL_FILE: &str = "use_m3.onnx";
/// The default embedder's SentencePiece tokenizer, in `tokenizers`' JSON format.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The companion model: its 4-bit weights file (vocabulary and word table read by Hearth) and
/// the graph of its layers.
pub const E5_WEIGHTS_FILE: &str = "e5-small-q4.bin";
/// The companion model's layer graph, converted from its weights file.
pub const E5_GRAPH_FILE: &str = "e5_small.onnx";
const SUMS_FILE: &str = "SHA256SUMS";
const READY_FILE: &str = "READY";
/// Overrides the ONNX Runtime library, as `ort` itself would read it.
pub const ORT_DYLIB_ENV: &str = "ORT_DYLIB_PATH";

/// The files an [`OnnxEmbedder`](super::OnnxEmbedder) loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedAssets {
    /// `libonnxruntime.so.*` (`ORT_DYLIB_PATH` wins over the cache dir's copy).
    pub runtime_lib: PathBuf,
    /// The stripped graph: `ids: int32[N]`, `row_splits: int64[B+1]` → `outputs: f32[B, dim]`.
    pub model: PathBuf,
    /// `tokenizer.json`, the model's SentencePiece tokenizer.
    pub tokenizer: PathBuf,
    /// Hex sha256 of `model`, the root of the embedder's [`Fingerprint`](super::Fingerprint).
    pub model_sha256: String,
}

impl EmbedAssets {
    /// Hearth's cache dir: `$HEARTH_CACHE_DIR`, else `$XDG_CACHE_HOME/hearth`, else
    /// `$HOME/.cache/hearth` (the same rule as the setup scripts).
    pub fn default_cache_dir() -> Option<PathBuf> {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var("HEARTH_CACHE_DIR") {
            return Some(PathBuf::from(dir));
        }
        if let Some(dir) = var("XDG_CACHE_HOME") {
            return Some(PathBuf::from(dir).join("hearth"));
        }
        var("HOME").map(|home| PathBuf::from(home).join(".cache").join("hearth"))
    }

    /// Finds the installed assets under `cache_dir` (Hearth's cache dir, not the `embedder/`
    /// below it; `None` = [`default_cache_dir`](Self::default_cache_dir)). Fails with "embedding
    /// model not installed: run `make setup`" unless setup completed there.
    pub fn locate(cache_dir: Option<PathBuf>) -> Result<Self, EmbedError> {
        Self::locate_in(&embedder_dir(cache_dir)?)
    }

    /// Like [`locate`](Self::locate) for an `embedder/` directory given directly.
    pub fn locate_in(dir: &Path) -> Result<Self, EmbedError> {
        let runtime_lib = installed_runtime(dir)?;
        let [model, tokenizer] = installed_files(dir, [MODEL_FILE, TOKENIZER_FILE])?;
        Ok(Self {
            runtime_lib,
            model,
            tokenizer,
            model_sha256: installed_sha256(dir, MODEL_FILE)?,
        })
    }

    /// Assets at explicit paths (a model configured by hand). `model_sha256` must be the hex sha256
    /// of `model`: it is what tells this model's vectors apart from every other model's.
    pub fn from_paths(
        runtime_lib: impl Into<PathBuf>,
        model: impl Into<PathBuf>,
        tokenizer: impl Into<PathBuf>,
        model_sha256: impl Into<String>,
    ) -> Self {
        Self {
            runtime_lib: runtime_lib.into(),
            model: model.into(),
            tokenizer: tokenizer.into(),
            model_sha256: model_sha256.into(),
        }
    }
}

/// The files an [`E5Embedder`](super::E5Embedder) loads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct E5Assets {
    /// `libonnxruntime.so.*`, the same library [`EmbedAssets::runtime_lib`] names.
    pub runtime_lib: PathBuf,
    /// `e5_small.onnx`: `embeds: f32[B, T, 384]`, `mask: f32[B, T]` → `outputs: f32[B, 384]`.
    pub graph: PathBuf,
    /// `e5-small-q4.bin`: vocabulary, normalisation map, word table.
    pub weights: PathBuf,
    /// Hex sha256 of `graph`, the root of the model's fingerprint: the graph is built from the
    /// (pinned) weights file, so a new conversion of the same weights is a new vector space.
    pub graph_sha256: String,
}

impl E5Assets {
    /// Like [`EmbedAssets::locate`] for the companion model (installed by the same setup).
    pub fn locate(cache_dir: Option<PathBuf>) -> Result<Self, EmbedError> {
        Self::locate_in(&embedder_dir(cache_dir)?)
    }

    /// Like [`locate`](Self::locate) for an `embedder/` directory given directly.
    pub fn locate_in(dir: &Path) -> Result<Self, EmbedError> {
        let runtime_lib = installed_runtime(dir)?;
        let [graph, weights] = installed_files(dir, [E5_GRAPH_FILE, E5_WEIGHTS_FILE])?;
        Ok(Self {
            runtime_lib,
            graph,
            weights,
            graph_sha256: installed_sha256(dir, E5_GRAPH_FILE)?,
        })
    }
}

/// `<cache>/embedder`, the cache dir defaulting as the setup scripts do.
fn embedder_dir(cache_dir: Option<PathBuf>) -> Result<PathBuf, EmbedError> {
    match cache_dir.or_else(EmbedAssets::default_cache_dir) {
        Some(cache_dir) => Ok(cache_dir.join("embedder")),
        None => Err(EmbedError::NotInstalled {
            dir: PathBuf::from("$HOME/.cache/hearth/embedder"),
            what: "no cache dir: neither HEARTH_CACHE_DIR, XDG_CACHE_HOME nor HOME is set"
                .to_owned(),
        }),
    }
}

fn not_installed(dir: &Path, what: String) -> EmbedError {
    EmbedError::NotInstalled {
        dir: dir.to_path_buf(),
        what,
    }
}

/// The ONNX Runtime library of a completed setup in `dir` (`ORT_DYLIB_PATH` wins).
fn installed_runtime(dir: &Path) -> Result<PathBuf, EmbedError> {
    // READY is written after every other file, so its absence means an unfinished setup.
    if !dir.join(READY_FILE).is_file() {
        return Err(not_installed(dir, format!("no {READY_FILE} marker")));
    }
    let runtime_lib = match std::env::var_os(ORT_DYLIB_ENV).filter(|v| !v.is_empty()) {
        Some(path) => PathBuf::from(path),
        None => dir.join(RUNTIME_LIB_FILE),
    };
    if !runtime_lib.is_file() {
        return Err(not_installed(
            dir,
            format!("{} is missing", runtime_lib.display()),
        ));
    }
    Ok(runtime_lib)
}

/// `names` under `dir`, each checked to be a file.
fn installed_files<const N: usize>(
    dir: &Path,
    names: [impl AsRef<Path>; N],
) -> Result<[PathBuf; N], EmbedError> {
    let paths = names.map(|name| dir.join(name));
    match paths.iter().find(|p| !p.is_file()) {
        Some(path) => Err(not_installed(dir, format!("{} is missing", path.display()))),
        None => Ok(paths),
    }
}

/// The sha256 `SHA256SUMS` in `dir` lists for `name`.
fn installed_sha256(dir: &Path, name: &str) -> Result<String, EmbedError> {
    let sums_path = dir.join(SUMS_FILE);
    let sums = std::fs::read_to_string(&sums_path)
        .map_err(|e| not_installed(dir, format!("cannot read {SUMS_FILE}: {e}")))?;
    sha256_from_sums(&sums, name).ok_or_else(|| EmbedError::Asset {
        path: sums_path,
        message: format!("no sha256 line for {name}"),
    })
}

/// The hash of `name` in `sha256sum` output (`<64 hex>  <name>`, or `*<name>` in binary mode).
fn sha256_from_sums(sums: &str, name: &str) -> Option<String> {
    sums.lines().find_map(|line| {
        let (hash, file) = line.split_once(char::is_whitespace)?;
        let file = file.trim_start().trim_start_matches('*');
        (file == name && hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| hash.to_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_line_is_found_by_exact_name() {
        let h1 = "a".repeat(64);
        let h2 = "B".repeat(64);
        let sums = format!("{h1}  use_m3.onnx.bak\n{h2} *use_m3.onnx\n");
        assert_eq!(sha256_from_sums(&sums, "use_m3.onnx"), Some("b".repeat(64)));
        assert_eq!(sha256_from_sums(&sums, "sp.model"), None);
        assert_eq!(sha256_from_sums("xyz  use_m3.onnx", "use_m3.onnx"), None);
    }
}
