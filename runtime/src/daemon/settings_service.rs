//! `hearth settings get|set|reset|list`, served by the daemon over its socket (it owns
//! `settings.db`) or by the CLI itself on the file when no daemon runs. A value is checked
//! against its definition's type and, for a `core.*` key, against the configuration it
//! would make, before it is stored; then it is applied as far as the running parts allow.

use super::settings::{effective, is_core};
use crate::config::Config;
use hearth_plugin_host::{PluginHost, PluginState};
use hearth_settings::{Access, Applies, Key, SetValue, Settings, SettingsError};
use hearth_stages::ToolRegistry;
use serde_json::{Value, json};
use std::sync::Arc;

/// A settings request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SettingsOp {
    /// One key, with its origin and definition.
    Get(String),
    /// Every key under a prefix (`""`: all).
    List(String),
    /// Sets a key: JSON as it is, or text read by the key's type.
    Set {
        /// The full key.
        key: String,
        /// A typed value.
        value: Option<Value>,
        /// A value as typed on a command line.
        text: Option<String>,
    },
    /// Forgets the user value: the file's value or the default applies again.
    Reset(String),
}

/// The key of the LLM source tried first.
pub const SOURCE_KEY: &str = "core.agent.source";

/// Why a settings request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsServiceError {
    /// The registry refused it (unknown key, wrong type, denied, the file).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The value has the right type but the configuration refuses it.
    #[error("{0}")]
    Invalid(String),
    /// Stored, but applying it to a running plugin failed.
    #[error("{key} is set, but applying it failed: {source}")]
    Apply {
        /// The key.
        key: String,
        /// The plugin host's error.
        source: hearth_plugin_host::PluginError,
    },
}

/// The running parts a change can reach.
pub struct LiveParts {
    /// Takes `core.tools.*` at once.
    pub tools: Arc<ToolRegistry>,
    /// Reloads the plugin whose key changed.
    pub plugins: Arc<PluginHost>,
    /// Takes `core.agent.source` at once.
    pub sources: Arc<super::sources::Sources>,
}

/// The settings registry with the configuration it sits over.
pub struct SettingsService {
    settings: Arc<Settings>,
    /// `hearth.toml` and the environment, without the user's values.
    base: Config,
    live: Option<LiveParts>,
}

impl std::fmt::Debug for SettingsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettingsService")
            .field("settings", &self.settings)
            .field("live", &self.live.is_some())
            .finish()
    }
}

impl SettingsService {
    /// Over `settings`, opened for `base`; `live` when a daemon runs.
    pub fn new(settings: Arc<Settings>, base: Config, live: Option<LiveParts>) -> Self {
        Self {
            settings,
            base,
            live,
        }
    }

    /// Defines the settings of every plugin installed under `plugins_dir` (after an install).
    pub fn define_plugins(&self, plugins_dir: &std::path::Path) {
        super::settings::define_plugins(&self.settings, plugins_dir);
    }

    /// Serves one request; the answer is JSON (a setting, a list, or what a change did).
    pub fn serve(&self, op: SettingsOp) -> Result<Value, SettingsServiceError> {
        let kernel = Access::kernel();
        match op {
            SettingsOp::Get(key) => Ok(json!(self.settings.setting_as(&kernel, &key)?)),
            SettingsOp::List(prefix) => Ok(json!(self.settings.list_as(&kernel, &prefix)?)),
            SettingsOp::Set { key, value, text } => {
                let value = match (value, text) {
                    (Some(v), _) => v,
                    (None, Some(t)) => self.typed(&key, &t)?,
                    (None, None) => {
                        return Err(SettingsServiceError::Invalid(format!(
                            "setting {key} needs a value"
                        )));
                    }
                };
                self.change(&key, value)
            }
            SettingsOp::Reset(key) => self.change(&key, Value::Null),
        }
    }

    fn typed(&self, key: &str, text: &str) -> Result<Value, SettingsServiceError> {
        let full = Access::kernel().resolve(key)?;
        let def = self.settings.defined(&full)?;
        Ok(def.kind.parse_text(&full, text)?)
    }

    fn change(&self, key: &str, value: Value) -> Result<Value, SettingsServiceError> {
        let kernel = Access::kernel();
        let full = kernel.resolve(key)?;
        let def = self.settings.defined(&full)?;
        if !value.is_null() {
            def.kind.check(&full, &value)?;
        }
        if is_core(key) {
            effective(&self.base, &self.settings, Some((key, &value)))
                .map_err(SettingsServiceError::Invalid)?;
        }
        // A source preference names a source of the running daemon: checked before it is kept.
        if full.as_str() == SOURCE_KEY
            && let (Some(live), Some(name)) = (&self.live, value.as_str())
        {
            live.sources
                .check_preference(name)
                .map_err(|e| SettingsServiceError::Invalid(e.to_string()))?;
        }
        self.settings
            .set_defined_as(&kernel, key, SetValue::Json(&value))?;
        let applied = self.apply(key)?;
        Ok(json!({
            "setting": self.settings.setting_as(&kernel, key)?,
            "applied": applied,
        }))
    }

    /// Applies a stored change as far as the running parts allow; says what happened.
    fn apply(&self, key: &str) -> Result<String, SettingsServiceError> {
        let applies = self
            .settings
            .def(key)
            .map_or(Applies::Restart, |d| d.applies);
        let Some(live) = &self.live else {
            return Ok("stored; hearthd reads it when it starts".into());
        };
        let plugin = Key::parse(key)?.plugin().map(str::to_owned);
        match (plugin, applies) {
            (None, Applies::Live) => {
                let cfg = effective(&self.base, &self.settings, None)
                    .map_err(SettingsServiceError::Invalid)?;
                live.tools.set_policy(cfg.tools);
                if let Err(e) = live.sources.prefer(&cfg.agent.source) {
                    // Kept, yet naming no source any more (removed since): priority order.
                    tracing::warn!("{SOURCE_KEY}: {e}");
                }
                Ok(Applies::Live.describe().into())
            }
            (None, other) => Ok(other.describe().into()),
            (Some(_), Applies::Live) => Ok(Applies::Live.describe().into()),
            (Some(name), _) => {
                let running = live
                    .plugins
                    .supervisor()
                    .status(&name)
                    .is_some_and(|s| s.state == PluginState::Running);
                if !running {
                    return Ok(format!("applied when plugin {name} next starts"));
                }
                live.plugins
                    .reload(&name)
                    .map_err(|source| SettingsServiceError::Apply {
                        key: key.to_owned(),
                        source,
                    })?;
                Ok(format!("applied: plugin {name} reloaded"))
            }
        }
    }
}
