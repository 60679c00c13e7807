//! The plugins shipped with Hearth (today `web`, the chat page and OpenAI-compatible API):
//! installed into `<data_dir>/plugins/` on start when their binary sits beside `hearthd` and
//! they are not installed yet, so a new install serves the page without a step. An installed
//! one is left as it is (the user may have edited or disabled it); `bundled_plugins = false`
//! in the config turns this off.

use std::path::Path;

use serde_json::Value;

/// Name, binary beside `hearthd`, manifest.
const BUNDLED: &[(&str, &str, &str)] = &[(
    "web",
    "hearth-web",
    include_str!("../../plugins/web/plugin.json"),
)];

/// Installs each bundled plugin that is missing; returns the names installed.
pub(super) fn install(data_dir: &Path) -> Vec<String> {
    let Some(bin_dir) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    let mut installed = Vec::new();
    for (name, binary, manifest) in BUNDLED {
        let entry = bin_dir.join(binary);
        let dir = data_dir.join("plugins").join(name);
        if !entry.is_file() || dir.join("plugin.json").exists() {
            continue;
        }
        let mut manifest: Value =
            serde_json::from_str(manifest).expect("a bundled manifest is valid JSON");
        manifest["entry"] = Value::String(entry.display().to_string());
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("plugin.json"), manifest.to_string()));
        match written {
            Ok(()) => installed.push((*name).to_owned()),
            Err(e) => tracing::warn!(plugin = name, "installing the bundled plugin: {e}"),
        }
    }
    installed
}
