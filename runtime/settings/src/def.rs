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

    pub(crate) fn check(self, key: &Key, value: &Value) -> Result<(), SettingsError> {
        if self.admits(value) {
            return Ok(());
        }
        let mut found = value.to_string();
        if found.len() > 80 {
            found.truncate(found.floor_char_boundary(80));
            found.push('…');
        }
        Err(SettingsError::WrongType {
            key: key.to_string(),
            expected: self.name(),
            found,
        })
    }
}

/// A setting's definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingDef {
    /// The full key.
    pub key: String,
    /// Its type.
    pub kind: SettingKind,
    /// Its value until one is set.
    pub default: Value,
    /// One sentence for `hearth settings` and the web page.
    pub description: String,
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
        }
    }
}
