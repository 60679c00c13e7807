use std::{
    env, fs,
    path::{Path, PathBuf},
};

use super::EmbeddedError;

/// The launcher script, compiled in so an installed binary works without the source tree; it is
/// written next to the venv on first use.
pub const LAUNCHER_SOURCE: &str = include_str!("../../assets/llama_server.py");

/// The model file `make setup` extracts (and verifies) into the assets dir.
pub const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

const LLM_DIR: &str = "llm";
const LAUNCHER_FILE: &str = "llama_server.py";
// Written last by the setup script, so its presence means every other file was verified.
const READY_FILE: &str = "READY";

/// Where the installed pieces of the embedded LLM are: `<cache dir>/llm/` holding `venv/`, the
/// model, `READY`, and the launcher script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedAssets {
    dir: PathBuf,
    python: PathBuf,
    script: PathBuf,
    model: PathBuf,
}

impl EmbeddedAssets {
    /// The cache dir the setup script uses: `$HEARTH_CACHE_DIR`, else `$XDG_CACHE_HOME/hearth`,
    /// else `$HOME/.cache/hearth` (empty variables count as unset, as in the shell).
    pub fn default_cache_dir() -> Option<PathBuf> {
        let var = |name| {
            env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        var("HEARTH_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("hearth")))
            .or_else(|| var("HOME").map(|d| d.join(".cache").join("hearth")))
    }

    /// Finds the assets under `cache_dir` (default: [`Self::default_cache_dir`]) and makes sure the
    /// launcher script there matches the one compiled in.
    pub fn locate(cache_dir: Option<PathBuf>) -> Result<Self, EmbeddedError> {
        let cache_dir = cache_dir
            .or_else(Self::default_cache_dir)
            .ok_or(EmbeddedError::NoCacheDir)?;
        let dir = cache_dir.join(LLM_DIR);
        let python = dir.join("venv").join("bin").join("python");
        let model = dir.join(MODEL_FILE);
        for required in [dir.join(READY_FILE), python.clone(), model.clone()] {
            if !required.is_file() {
                return Err(EmbeddedError::NotInstalled { missing: required });
            }
        }
        let script = dir.join(LAUNCHER_FILE);
        install_launcher(&script)?;
        Ok(Self {
            dir,
            python,
            script,
            model,
        })
    }

    /// `<cache dir>/llm`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The venv's interpreter, which has `xllamacpp` installed.
    pub fn python(&self) -> &Path {
        &self.python
    }

    /// The launcher script (`llama_server.py`), kept identical to [`LAUNCHER_SOURCE`].
    pub fn script(&self) -> &Path {
        &self.script
    }

    /// The GGUF model file ([`MODEL_FILE`]) the server loads.
    pub fn model(&self) -> &Path {
        &self.model
    }
}

/// Writes the compiled-in launcher unless an identical one is there. A different one is replaced:
/// the launcher must match the binary that passes it arguments.
fn install_launcher(path: &Path) -> Result<(), EmbeddedError> {
    if fs::read_to_string(path).is_ok_and(|current| current == LAUNCHER_SOURCE) {
        return Ok(());
    }
    // Write then rename, so a daemon starting concurrently never runs a half-written script.
    let tmp = path.with_extension(format!("py.{}.tmp", std::process::id()));
    let io = |op, source| EmbeddedError::Io {
        op,
        path: path.to_path_buf(),
        source,
    };
    fs::write(&tmp, LAUNCHER_SOURCE).map_err(|e| io("write", e))?;
    fs::rename(&tmp, path).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io("rename into", e)
    })
}
