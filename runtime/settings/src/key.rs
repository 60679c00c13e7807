//! Keys and their two namespaces.

use crate::SettingsError;

/// A validated full key: `core.<name>` or `plugin.<plugin>.<name>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(String);

impl Key {
    /// Checks `key`: a known namespace, then non-empty dot-separated parts of `[a-z0-9_-]`.
    pub fn parse(key: &str) -> Result<Key, SettingsError> {
        let bad = |reason| SettingsError::BadKey {
            key: key.to_owned(),
            reason,
        };
        if key.len() > 200 {
            return Err(bad("longer than 200 bytes"));
        }
        let parts: Vec<&str> = key.split('.').collect();
        let ok_part = |p: &&str| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        };
        if !parts.iter().all(ok_part) {
            return Err(bad(
                "each dot-separated part must be non-empty lowercase letters, digits, _ or -",
            ));
        }
        match parts.as_slice() {
            ["core", _, ..] => Ok(Key(key.to_owned())),
            ["plugin", _, _, ..] => Ok(Key(key.to_owned())),
            ["plugin", ..] => Err(bad("a plugin key is plugin.<plugin>.<name>")),
            _ => Err(bad("keys start with core. or plugin.<plugin>.")),
        }
    }

    /// The plugin whose namespace holds the key (`None` for `core.*`).
    pub fn plugin(&self) -> Option<&str> {
        let rest = self.0.strip_prefix("plugin.")?;
        rest.split('.').next()
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_and_parts_are_checked() {
        assert!(Key::parse("core.socket.path").is_ok());
        assert_eq!(
            Key::parse("plugin.files.roots").unwrap().plugin(),
            Some("files")
        );
        assert_eq!(Key::parse("core.x").unwrap().plugin(), None);
        for bad in [
            "",
            "core",
            "core.",
            "plugin.files",
            "other.x",
            "core..x",
            "core.X",
            "core.a b",
        ] {
            assert!(Key::parse(bad).is_err(), "{bad:?} accepted");
        }
    }
}
