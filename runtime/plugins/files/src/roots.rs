//! The directories the user allowed, and how a requested path maps into one of them.

use std::path::{Component, Path, PathBuf};

use hearth_plugin::{ErrorKind, ToolError};
use serde::Deserialize;
use serde_json::Value;

/// One allowed directory.
#[derive(Debug)]
pub struct Root {
    /// Canonical path (symlinks resolved once, at start).
    pub path: PathBuf,
    /// Whether writes are allowed under it.
    pub write: bool,
}

/// A root entry in the config: a path (read-only) or `{path, write}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RootConfig {
    Path(String),
    Entry {
        path: String,
        #[serde(default)]
        write: bool,
    },
}

/// Largest read unless the config says otherwise.
pub const DEFAULT_MAX_READ: u64 = 4 << 20;

/// The plugin's config, checked.
#[derive(Debug)]
pub struct Roots {
    pub roots: Vec<Root>,
    pub max_read: u64,
}

/// A request resolved to a root and a path relative to it (no `..`, not absolute).
#[derive(Debug)]
pub struct Target<'a> {
    pub root: &'a Root,
    /// Relative to the root; `.` for the root itself.
    pub rel: PathBuf,
}

impl Target<'_> {
    /// The path as the user knows it (for results and errors).
    pub fn shown(&self) -> PathBuf {
        self.root.path.join(&self.rel)
    }
}

/// A refusal of the path itself (outside the roots, through a symlink, read-only): the
/// request names something the plugin may not touch, so it is `denied`, not a failure.
pub fn refused(message: String) -> ToolError {
    ToolError::new(ErrorKind::Denied, message)
}

/// A failed operation on `target` (I/O), naming the path.
pub fn io_failed(target: &Target<'_>, e: impl std::fmt::Display) -> ToolError {
    ToolError::failed(format!("{}: {e}", target.shown().display()))
}

impl Roots {
    /// From the `plugin.init` config: every root must exist and be a directory.
    pub fn from_config(config: &Value) -> Result<Roots, String> {
        let entries: Vec<RootConfig> =
            serde_json::from_value(config["roots"].clone()).map_err(|e| {
                format!(
                    "files: config.roots must be a list of directories (a path, or {{\"path\", \
                     \"write\"}}): {e}"
                )
            })?;
        let mut roots = Vec::new();
        for entry in entries {
            let (path, write) = match entry {
                RootConfig::Path(p) => (p, false),
                RootConfig::Entry { path, write } => (path, write),
            };
            let canonical = std::fs::canonicalize(&path)
                .map_err(|e| format!("files: allowed directory {path:?}: {e}"))?;
            if !canonical.is_dir() {
                return Err(format!(
                    "files: allowed directory {path:?} is not a directory"
                ));
            }
            roots.push(Root {
                path: canonical,
                write,
            });
        }
        let max_read = config["max_read_bytes"]
            .as_u64()
            .unwrap_or(DEFAULT_MAX_READ);
        Ok(Roots { roots, max_read })
    }

    /// Maps `path` into a root: relative paths are under the first root; absolute ones must
    /// lie (lexically) inside one. `..` is refused outright, so no request can even name a
    /// way out; symlinks are dealt with when opening (`beneath`).
    pub fn resolve(&self, path: &str) -> Result<Target<'_>, ToolError> {
        let requested = Path::new(path);
        if requested
            .components()
            .any(|c| matches!(c, Component::ParentDir))
        {
            return Err(refused(format!(
                "{path:?}: path traversal (`..`) is refused"
            )));
        }
        let Some(first) = self.roots.first() else {
            return Err(ToolError::failed(
                "files: no directory is allowed (config.roots is empty)",
            ));
        };
        if !requested.is_absolute() {
            return Ok(Target {
                root: first,
                rel: clean(requested),
            });
        }
        // The longest root that contains it, so nested roots pick the inner one.
        self.roots
            .iter()
            .filter_map(|root| {
                requested
                    .strip_prefix(&root.path)
                    .ok()
                    .map(|rel| (root, clean(rel)))
            })
            .max_by_key(|(root, _)| root.path.as_os_str().len())
            .map(|(root, rel)| Target { root, rel })
            .ok_or_else(|| {
                refused(format!(
                    "{path:?} is outside the allowed directories ({})",
                    self.listed()
                ))
            })
    }

    /// The roots, for messages.
    pub fn listed(&self) -> String {
        self.roots
            .iter()
            .map(|r| r.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `rel` without `.` components; `.` when nothing is left.
fn clean(rel: &Path) -> PathBuf {
    let out: PathBuf = rel
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}
