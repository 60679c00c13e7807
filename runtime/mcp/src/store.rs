//! `<data_dir>/mcp.toml`: the servers `hearth mcp add` keeps, read by the daemon at start next
//! to the `[[mcp]]` entries of `hearth.toml`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{McpError, McpServerConfig};

/// The file's name inside the data dir.
pub const STORE_FILE: &str = "mcp.toml";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    mcp: Vec<McpServerConfig>,
}

/// The kept server entries of one data dir.
#[derive(Debug, Clone)]
pub struct McpStore {
    path: PathBuf,
}

impl McpStore {
    /// The store of `data_dir`.
    pub fn new(data_dir: &Path) -> McpStore {
        McpStore {
            path: data_dir.join(STORE_FILE),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry; none when the file does not exist.
    pub fn load(&self) -> Result<Vec<McpServerConfig>, McpError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.error(format!("cannot read it: {e}"))),
        };
        let file: File = toml::from_str(&text).map_err(|e| self.error(e.to_string()))?;
        Ok(file.mcp)
    }

    /// Adds a valid entry whose name is new.
    pub fn add(&self, entry: McpServerConfig) -> Result<(), McpError> {
        entry.endpoint()?;
        let mut all = self.load()?;
        if all.iter().any(|e| e.name == entry.name) {
            return Err(McpError::Config {
                name: entry.name,
                reason: format!(
                    "a server of that name is already in {}; remove it first",
                    self.path.display()
                ),
            });
        }
        all.push(entry);
        self.save(all)
    }

    /// Removes the entry named `name`; false when there was none.
    pub fn remove(&self, name: &str) -> Result<bool, McpError> {
        let mut all = self.load()?;
        let before = all.len();
        all.retain(|e| e.name != name);
        if all.len() == before {
            return Ok(false);
        }
        self.save(all).map(|()| true)
    }

    /// Written to a temporary file and renamed, so a crash leaves the old file or the new one.
    fn save(&self, mcp: Vec<McpServerConfig>) -> Result<(), McpError> {
        let text = toml::to_string(&File { mcp }).map_err(|e| self.error(e.to_string()))?;
        let tmp = self.path.with_extension("toml.tmp");
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| self.error(e.to_string()))?;
        }
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &self.path))
            .map_err(|e| self.error(format!("cannot write it: {e}")))
    }

    fn error(&self, reason: String) -> McpError {
        McpError::Config {
            name: String::new(),
            reason: format!("{}: {reason}", self.path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_list_remove_round_trip_and_refuse_bad_or_duplicate_entries() {
        let dir = tempfile::tempdir().expect("dir");
        let store = McpStore::new(dir.path());
        assert!(store.load().expect("empty").is_empty());
        let mut fs = McpServerConfig::stdio("fs", "npx", &["-y", "server", "/tmp"]);
        fs.env.insert("K".into(), "v".into());
        store.add(fs.clone()).expect("added");
        store
            .add(McpServerConfig::http("web", "http://127.0.0.1:3001/mcp"))
            .expect("added");
        assert_eq!(
            store.load().expect("two"),
            [
                fs.clone(),
                McpServerConfig::http("web", "http://127.0.0.1:3001/mcp")
            ]
        );
        let dup = store.add(fs).unwrap_err();
        assert!(dup.to_string().contains("already"), "{dup}");
        let bad = store
            .add(McpServerConfig::stdio("a_b", "x", &[]))
            .unwrap_err();
        assert!(bad.to_string().contains("letters"), "{bad}");
        assert_eq!(store.remove("fs"), Ok(true));
        assert_eq!(store.remove("fs"), Ok(false));
        assert_eq!(store.load().expect("one").len(), 1);
    }

    #[test]
    fn a_broken_file_is_a_clear_error_and_is_not_overwritten() {
        let dir = tempfile::tempdir().expect("dir");
        let store = McpStore::new(dir.path());
        std::fs::write(store.path(), "[[mcp]]\nnme = 1\n").expect("write");
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("mcp.toml") && err.contains("nme"), "{err}");
        assert!(store.add(McpServerConfig::stdio("x", "y", &[])).is_err());
        assert_eq!(
            std::fs::read_to_string(store.path()).expect("kept"),
            "[[mcp]]\nnme = 1\n"
        );
    }
}
