//! The daemon's side of the settings registry: the kernel's `core.*` keys (the tunables of
//! `hearth.toml` a daemon reads), the plugins' keys from their manifests, the file layer, and
//! the effective configuration once the user's values are laid over the file.
//!
//! Precedence, lowest first: built-in default < `hearth.toml` < the value a user set (kept in
//! `settings.db`). The environment overrides only the bootstrap keys (`HEARTH_DATA_DIR`,
//! `HEARTH_SOCKET`, `HEARTH_API_KEY`, `HEARTH_WORKERS`), which are not in the registry: the
//! registry lives in the data dir, so it cannot say where the data dir is.

use crate::config::{AgentConfig, Config, EmbeddedConfig, SocketLimits};
use hearth_settings::{Applies, SettingDef, SettingKind, Settings, SettingsError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// One `core.*` key: its type, when a change applies, what it means.
struct CoreKey {
    key: &'static str,
    kind: SettingKind,
    applies: Applies,
    description: &'static str,
}

const fn core(
    key: &'static str,
    kind: SettingKind,
    applies: Applies,
    description: &'static str,
) -> CoreKey {
    CoreKey {
        key,
        kind,
        applies,
        description,
    }
}

use Applies::{Live, Restart};
use SettingKind::{Bool, Integer, StringList};

/// Every `core.*` key; `core.<a>.<b>` is `[a] b` in `hearth.toml`.
const CORE: &[CoreKey] = &[
    core(
        "core.probe_loopback",
        Bool,
        Restart,
        "Use an OpenAI-compatible server on loopback (Ollama) when no source is configured.",
    ),
    core(
        "core.memory_model",
        Bool,
        Restart,
        "Load the dense embedding model for recall (off: keyword recall only, about 200 MB less memory).",
    ),
    core(
        "core.agent.system_prompt",
        SettingKind::String,
        Restart,
        "The system prompt of every turn.",
    ),
    core(
        "core.agent.max_tool_turns",
        Integer,
        Restart,
        "Model calls at most per turn when it keeps calling tools.",
    ),
    core(
        "core.agent.max_context_size",
        Integer,
        Restart,
        "Messages kept in the working window before older ones go to cold memory.",
    ),
    core(
        "core.agent.prune_slack",
        SettingKind::Number,
        Restart,
        "Share of the working window a prune frees beyond its limit (0 to 1), so the next turns only append and a local model reuses the prompt it read.",
    ),
    core(
        "core.agent.language",
        SettingKind::String,
        Restart,
        "The language of the kernel's own texts: auto, en or zh.",
    ),
    core(
        "core.agent.source",
        SettingKind::String,
        Live,
        "The LLM source tried first while it is available, by name (empty: by priority).",
    ),
    core(
        "core.embedded.enabled",
        Bool,
        Restart,
        "Start the embedded model server when no source is configured and none answers on loopback.",
    ),
    core(
        "core.embedded.threads",
        Integer,
        Restart,
        "Threads of the embedded model (0: cores − 1).",
    ),
    core(
        "core.embedded.ctx",
        Integer,
        Restart,
        "Context window of the embedded model, in tokens.",
    ),
    core(
        "core.socket.max_connections",
        Integer,
        Restart,
        "Client connections open at most.",
    ),
    core(
        "core.socket.idle_timeout_secs",
        Integer,
        Restart,
        "Seconds a connection may stay idle before it is closed.",
    ),
    core(
        "core.socket.write_timeout_secs",
        Integer,
        Restart,
        "Seconds a client may read nothing while output waits.",
    ),
    core(
        "core.socket.write_buffer_bytes",
        Integer,
        Restart,
        "Streamed output buffered per connection before deltas are dropped.",
    ),
    core(
        "core.socket.shutdown_grace_ms",
        Integer,
        Restart,
        "At shutdown, how long waiting clients are still served.",
    ),
    core(
        "core.tools.disabled",
        StringList,
        Live,
        "Tools (or owners: mcp:<server>, plugin:<name>, builtin) never offered to the model.",
    ),
    core(
        "core.tools.denied",
        StringList,
        Live,
        "Capabilities (mcp.write, network) no offered tool may carry.",
    ),
];

/// The part of [`Config`] the `core.*` keys cover, as JSON paths: `core.agent.language` is
/// `/agent/language`. Laid over by value so every key is checked by the same typed parse as
/// the file.
#[derive(Serialize, Deserialize)]
struct Tunables {
    probe_loopback: bool,
    memory_model: bool,
    agent: AgentConfig,
    embedded: EmbeddedConfig,
    socket: SocketLimits,
    tools: hearth_stages::ToolPolicy,
}

impl Tunables {
    fn of(cfg: &Config) -> Tunables {
        Tunables {
            probe_loopback: cfg.probe_loopback,
            memory_model: cfg.memory_model,
            agent: cfg.agent.clone(),
            embedded: cfg.embedded.clone(),
            socket: cfg.socket.clone(),
            tools: cfg.tools.clone(),
        }
    }

    fn apply(self, cfg: &mut Config) {
        cfg.probe_loopback = self.probe_loopback;
        cfg.memory_model = self.memory_model;
        cfg.agent = self.agent;
        cfg.embedded = self.embedded;
        cfg.socket = self.socket;
        cfg.tools = self.tools;
    }
}

fn pointer(key: &str) -> String {
    let path = key.strip_prefix("core.").unwrap_or(key);
    format!("/{}", path.replace('.', "/"))
}

/// Whether `key` is one of the kernel's.
pub fn is_core(key: &str) -> bool {
    CORE.iter().any(|c| c.key == key)
}

/// Opens `<data_dir>/settings.db` with every definition (the kernel's, and each installed
/// plugin's from its manifest) and the file layer of `cfg`. Fails when another process holds
/// the file, or when `hearth.toml` gives a plugin key a value of the wrong type.
pub fn open(cfg: &Config) -> Result<Settings, SettingsError> {
    let settings = Settings::open(&cfg.data_dir)?;
    let defaults = serde_json::to_value(Tunables::of(&Config::default())).unwrap_or_default();
    for c in CORE {
        let default = defaults
            .pointer(&pointer(c.key))
            .cloned()
            .unwrap_or_default();
        settings
            .define(SettingDef::new(c.key, c.kind, default, c.description).applies(c.applies))?;
    }
    define_plugins(&settings, &cfg.data_dir.join("plugins"));
    for c in CORE {
        if let Some(v) = file_value(&cfg.file, c.key) {
            settings.set_file_value(c.key, v)?;
        }
    }
    for (plugin, table) in &cfg.plugin {
        for (name, value) in table {
            let value = serde_json::to_value(value).unwrap_or_default();
            settings.set_file_value(&format!("plugin.{plugin}.{name}"), value)?;
        }
    }
    Ok(settings)
}

/// The file's value of a `core.*` key, if the file sets it.
fn file_value(file: &toml::Table, key: &str) -> Option<Value> {
    let mut parts = key.strip_prefix("core.")?.split('.');
    let mut at = file.get(parts.next()?)?;
    for part in parts {
        at = at.as_table()?.get(part)?;
    }
    serde_json::to_value(at).ok()
}

/// Each installed plugin's `config_schema` properties as its `plugin.<name>.*` keys (applied by
/// reloading it). A plugin may define more at run time; a manifest that does not load is
/// reported by the plugin host, not here.
pub(super) fn define_plugins(settings: &Settings, plugins_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(plugins_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(manifest) = hearth_plugin_host::Manifest::load(&entry.path()) else {
            continue;
        };
        let Some(props) = manifest.config_schema["properties"].as_object() else {
            continue;
        };
        for (name, schema) in props {
            let kind = match (schema["type"].as_str(), schema["items"]["type"].as_str()) {
                (Some("boolean"), _) => Bool,
                (Some("integer"), _) => Integer,
                (Some("number"), _) => SettingKind::Number,
                (Some("string"), _) => SettingKind::String,
                (Some("array"), Some("string")) => StringList,
                _ => SettingKind::Json,
            };
            let def = SettingDef::new(
                format!("plugin.{}.{name}", manifest.name),
                kind,
                schema.get("default").cloned().unwrap_or_default(),
                schema["description"].as_str().unwrap_or_default(),
            );
            // JSON Schema's `writeOnly` marks a secret: listings show only that it is set.
            let def = if schema["writeOnly"] == true {
                def.secret()
            } else {
                def
            };
            if let Err(e) = settings.define(def) {
                tracing::warn!(plugin = %manifest.name, "a setting of its manifest: {e}");
            }
        }
    }
}

/// `cfg` with the user values of `settings` laid over it (and `change`, a value about to be
/// set, over those): the configuration the daemon runs with. An error names the key whose
/// value the configuration refuses.
pub fn effective(
    cfg: &Config,
    settings: &Settings,
    change: Option<(&str, &Value)>,
) -> Result<Config, String> {
    let mut tunables = serde_json::to_value(Tunables::of(cfg)).map_err(|e| e.to_string())?;
    // What a reset uncovers: the file's value, else the default.
    let below = |key| file_value(&cfg.file, key).or_else(|| settings.def(key).map(|d| d.default));
    for c in CORE {
        let value = match change {
            Some((key, v)) if key == c.key && v.is_null() => below(c.key),
            Some((key, v)) if key == c.key => Some(v.clone()),
            _ => {
                let s = settings
                    .setting_as(&hearth_settings::Access::kernel(), c.key)
                    .map_err(|e| e.to_string())?;
                s.is_set.then_some(s.value)
            }
        };
        if let (Some(value), Some(slot)) = (value, tunables.pointer_mut(&pointer(c.key))) {
            *slot = value;
        }
    }
    let tunables: Tunables = serde_json::from_value(tunables).map_err(|e| match change {
        Some((key, _)) => format!("{key}: {e}"),
        None => format!("a value in settings.db: {e}"),
    })?;
    let mut out = cfg.clone();
    tunables.apply(&mut out);
    out.validate().map_err(|e| e.to_string())?;
    Ok(out)
}
