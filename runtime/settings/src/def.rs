//! Typed definitions: what a key holds, what it means, what it is until someone sets it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Key, SettingsError};

/// The type of a setting's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SettingKind {
    /// `true` / `false`.
    Bool,
    /// A whole number.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// A list of strings.
    StringList,
    /// Any JSON value.
    Json,
}

impl SettingKind {
    /// The name in error messages and in `settings.defs`.
    pub fn name(self) -> &'static str {
        match self {
            SettingKind::Bool => "a boolean",
            SettingKind::Integer => "an integer",
            SettingKind::Number => "a number",
            SettingKind::String => "a string",
            SettingKind::StringList => "a list of strings",
            SettingKind::Json => "any JSON value",
        }
    }

    /// Whether `value` has this type (`null` never does: unsetting is `reset`).
    pub fn admits(self, value: &Value) -> bool {
        match self {
            SettingKind::Bool => value.is_boolean(),
            SettingKind::Integer => value.is_i64() || value.is_u64(),
            SettingKind::Number => value.is_number(),
            SettingKind::String => value.is_string(),
            SettingKind::StringList => value
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string)),
            SettingKind::Json => !value.is_null(),
        }
    }

    /// Reads `text` as a value of this type, as typed on a command line: a string kind takes
    /// the text as it is (a JSON string literal is unquoted), every other kind takes JSON.
    pub fn parse_text(self, key: &Key, text: &str) -> Result<Value, SettingsError> {
        let value = match self {
            SettingKind::String => match serde_json::from_str::<Value>(text) {
                Ok(Value::String(s)) => Value::String(s),
                _ => Value::String(text.to_owned()),
            },
            _ => serde_json::from_str(text).map_err(|_| SettingsError::WrongType {
                key: key.to_string(),
                expected: self.name(),
                found: clip(text.to_owned()),
            })?,
        };
        self.check(key, &value)?;
        Ok(value)
    }

    /// `Ok` when `value` has this type, else [`SettingsError::WrongType`] naming `key`.
    pub fn check(self, key: &Key, value: &Value) -> Result<(), SettingsError> {
        if self.admits(value) {
            return Ok(());
        }
        Err(SettingsError::WrongType {
            key: key.to_string(),
            expected: self.name(),
            found: clip(value.to_string()),
        })
    }
}

/// A value as an error message quotes it: at most 80 bytes.
fn clip(mut found: String) -> String {
    if found.len() > 80 {
        found.truncate(found.floor_char_boundary(80));
        found.push('…');
    }
    found
}

/// When a changed value takes effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Applies {
    /// At once: the running part reads it again.
    Live,
    /// When its owner restarts: the daemon reloads the plugin that owns it.
    #[default]
    Reload,
    /// At the next start of the daemon.
    Restart,
}

impl Applies {
    /// What a change means, in words for `hearth settings set`.
    pub fn describe(self) -> &'static str {
        match self {
            Applies::Live => "applied now",
            Applies::Reload => "applied when its owner reloads",
            Applies::Restart => "takes effect when hearthd restarts",
        }
    }
}

/// A setting's definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingDef {
    /// The full key.
    pub key: String,
    /// Its type.
    pub kind: SettingKind,
    /// Its value until one is set; `null` for none (the key reads as `null` until set).
    pub default: Value,
    /// One sentence for `hearth settings` and the web page.
    pub description: String,
    /// When a change takes effect (a plugin's keys: when it reloads, unless it says otherwise).
    #[serde(default)]
    pub applies: Applies,
    /// A secret (a key, a password hash): listings show only that it is set; reading the one
    /// key still gives it, to whoever may read the key.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

impl SettingDef {
    /// A definition of `key`.
    pub fn new(
        key: impl Into<String>,
        kind: SettingKind,
        default: Value,
        description: impl Into<String>,
    ) -> SettingDef {
        SettingDef {
            key: key.into(),
            kind,
            default,
            description: description.into(),
            applies: Applies::default(),
            secret: false,
        }
    }

    /// The same definition, marked secret.
    pub fn secret(mut self) -> SettingDef {
        self.secret = true;
        self
    }

    /// The same definition, taking effect as `applies` says.
    pub fn applies(mut self, applies: Applies) -> SettingDef {
        self.applies = applies;
        self
    }
}
