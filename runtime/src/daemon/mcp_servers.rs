//! The MCP servers the daemon starts: `[[mcp]]` of `hearth.toml`, then those `hearth mcp add`
//! kept in the data dir (a name in both is taken from `hearth.toml`).

use hearth_mcp::{McpServerConfig, McpStore};
use std::path::Path;

/// `configured` (hearth.toml's) followed by the servers kept in `data_dir`; read again by a
/// sync, so `hearth mcp add|remove` take effect on a running daemon.
pub(super) fn entries(configured: &[McpServerConfig], data_dir: &Path) -> Vec<McpServerConfig> {
    let mut all = configured.to_vec();
    match McpStore::new(data_dir).load() {
        Ok(kept) => {
            for entry in kept {
                if all.iter().any(|e| e.name == entry.name) {
                    tracing::warn!(
                        server = %entry.name,
                        "mcp server defined in hearth.toml and in the data dir; using hearth.toml's"
                    );
                } else {
                    all.push(entry);
                }
            }
        }
        Err(e) => tracing::error!("{e}"),
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_config_file_wins_over_the_kept_entries() {
        let dir = tempfile::tempdir().expect("dir");
        let store = McpStore::new(dir.path());
        store
            .add(McpServerConfig::stdio("fs", "kept", &[]))
            .expect("kept");
        store
            .add(McpServerConfig::stdio("extra", "kept", &[]))
            .expect("kept");
        let cfg = Config {
            data_dir: dir.path().to_path_buf(),
            mcp: vec![McpServerConfig::stdio("fs", "configured", &[])],
            ..Config::default()
        };
        let all = entries(&cfg.mcp, &cfg.data_dir);
        let seen: Vec<(&str, &str)> = all
            .iter()
            .map(|e| (e.name.as_str(), e.command.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(seen, [("fs", "configured"), ("extra", "kept")]);
    }
}
