//! Who is asking: the kernel (every key) or a plugin (its own namespace, unless granted).

use crate::{Key, SettingsError};

/// The caller of a settings operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    plugin: Option<String>,
    cross: bool,
}

impl Access {
    /// The kernel, the CLI and the web page: every key.
    pub fn kernel() -> Access {
        Access {
            plugin: None,
            cross: false,
        }
    }

    /// Plugin `name`: `plugin.<name>.*` only. A relative key (`greeting`) means
    /// `plugin.<name>.greeting`.
    pub fn plugin(name: &str) -> Access {
        Access {
            plugin: Some(name.to_owned()),
            cross: false,
        }
    }

    /// A plugin granted `settings_cross`: every key.
    pub fn cross(mut self) -> Access {
        self.cross = true;
        self
    }

    fn who(&self) -> String {
        match &self.plugin {
            Some(p) => format!("plugin {p}"),
            None => "the kernel".to_owned(),
        }
    }

    /// The full key prefix `prefix` names for this caller (as [`resolve`](Self::resolve) does
    /// for keys), if it may list under it.
    pub fn resolve_prefix(&self, prefix: &str) -> Result<String, SettingsError> {
        let Some(me) = &self.plugin else {
            return Ok(prefix.to_owned());
        };
        if !prefix.starts_with("core.") && !prefix.starts_with("plugin.") && prefix != "core" {
            return Ok(format!("plugin.{me}.{prefix}"));
        }
        let own = format!("plugin.{me}.");
        if self.cross || prefix.starts_with(&own) {
            return Ok(prefix.to_owned());
        }
        Err(SettingsError::Denied {
            who: self.who(),
            key: prefix.to_owned(),
            reason: "a plugin reaches only plugin.<its name>.* without the settings_cross capability",
        })
    }

    /// The full key `key` names for this caller, if it may touch it.
    pub fn resolve(&self, key: &str) -> Result<Key, SettingsError> {
        let full = match &self.plugin {
            Some(p) if !key.starts_with("core.") && !key.starts_with("plugin.") => {
                format!("plugin.{p}.{key}")
            }
            _ => key.to_owned(),
        };
        let parsed = Key::parse(&full)?;
        let Some(me) = &self.plugin else {
            return Ok(parsed);
        };
        if self.cross || parsed.plugin() == Some(me.as_str()) {
            return Ok(parsed);
        }
        Err(SettingsError::Denied {
            who: self.who(),
            key: full,
            reason: "a plugin reaches only plugin.<its name>.* without the settings_cross capability",
        })
    }
}
