//! `plugin.json`: what a plugin is, what it runs, where it runs and what it may do.
//!
//! ```json
//! {"name": "timer", "version": "0.1.0", "description": "Reminders.", "entry": "bin/timer",
//!  "platforms": ["linux"], "capabilities": ["io"], "needs": ["ring"],
//!  "config_schema": {"type": "object"}}
//! ```

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use hearth_rpc::Grants;
use serde::Deserialize;
use serde_json::Value;

use crate::PluginError;
use crate::order::Facility;

/// The manifest's file name inside a plugin's directory.
pub const MANIFEST_FILE: &str = "plugin.json";

/// A validated manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `^[a-z0-9_-]{1,64}$`; also the directory name under `<data_dir>/plugins/`.
    pub name: String,
    /// Free text, shown by `hearth plugin list`.
    pub version: String,
    /// One line for `hearth plugin info`.
    pub description: String,
    /// The program to run, absolute (resolved against the plugin's directory).
    pub entry: PathBuf,
    /// `os` or `os-arch` names the plugin runs on; empty: everywhere.
    pub platforms: Vec<String>,
    /// Capability groups granted (PROTOCOL §8); empty: unrestricted.
    pub capabilities: Vec<String>,
    /// The facilities that must be up before it starts.
    pub needs: Vec<Facility>,
    /// JSON schema of the plugin's config section (shown by `info`, passed on as is).
    pub config_schema: Value,
    /// The directory the plugin lives in (its working directory when it runs).
    pub dir: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    description: String,
    entry: String,
    #[serde(default)]
    platforms: Vec<String>,
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default)]
    needs: Vec<String>,
    #[serde(default)]
    config_schema: Value,
}

/// This machine as a platform name: `linux-x86_64`.
pub fn current_platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

impl Manifest {
    /// Reads and validates `<dir>/plugin.json`.
    pub fn load(dir: &Path) -> Result<Manifest, PluginError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| PluginError::Manifest {
            path: path.clone(),
            problem: format!("cannot be read: {e}"),
            fix: format!(
                "put a {MANIFEST_FILE} (name, version, entry, …) in the plugin's directory"
            ),
        })?;
        Manifest::parse(&text, dir)
    }

    /// Validates manifest `text` of a plugin living in `dir`. The entry must exist and be
    /// executable, and the platform must match this machine.
    pub fn parse(text: &str, dir: &Path) -> Result<Manifest, PluginError> {
        let path = dir.join(MANIFEST_FILE);
        let bad = |problem: String, fix: &str| PluginError::Manifest {
            path: path.clone(),
            problem,
            fix: fix.to_owned(),
        };
        let raw: Raw = serde_json::from_str(text).map_err(|e| {
            bad(
                format!("is not a valid manifest: {e}"),
                "write a JSON object with at least \"name\" and \"entry\"; allowed fields: name, \
                 version, description, entry, platforms, capabilities, needs, config_schema",
            )
        })?;
        if !valid_name(&raw.name) {
            return Err(bad(
                format!("name {:?} is not 1–64 of a-z, 0-9, '_', '-'", raw.name),
                "rename the plugin, e.g. \"my-plugin\"",
            ));
        }
        if let Err(e) = Grants::from_manifest(&raw.capabilities) {
            return Err(bad(
                e.to_string(),
                "remove or correct the unknown capability",
            ));
        }
        let needs = raw
            .needs
            .iter()
            .map(|n| Facility::parse(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(e, "use memory, ring, settings or plugin:<name>"))?;
        let here = current_platform();
        if !raw.platforms.is_empty()
            && !raw
                .platforms
                .iter()
                .any(|p| *p == here || *p == std::env::consts::OS)
        {
            return Err(bad(
                format!(
                    "the plugin is built for {:?}, this machine is {here}",
                    raw.platforms
                ),
                "install the build of the plugin for this machine",
            ));
        }
        if raw.entry.is_empty() {
            return Err(bad(
                "entry is empty".into(),
                "set \"entry\" to the program, relative to the plugin's directory",
            ));
        }
        let entry = dir.join(&raw.entry);
        check_entry(&entry, &path)?;
        Ok(Manifest {
            name: raw.name,
            version: raw.version,
            description: raw.description,
            entry,
            platforms: raw.platforms,
            capabilities: raw.capabilities,
            needs,
            config_schema: raw.config_schema,
            dir: dir.to_path_buf(),
        })
    }

    /// What the capability gate allows this plugin.
    pub fn grants(&self) -> Grants {
        // Validated in `parse`, so this cannot fail; an empty list is unrestricted.
        Grants::from_manifest(&self.capabilities).unwrap_or_else(|_| Grants::unrestricted())
    }
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

fn check_entry(entry: &Path, manifest: &Path) -> Result<(), PluginError> {
    let bad = |problem: String, fix: String| PluginError::Manifest {
        path: manifest.to_path_buf(),
        problem,
        fix,
    };
    let meta = std::fs::metadata(entry).map_err(|e| {
        bad(
            format!("entry {} cannot be found: {e}", entry.display()),
            "build the plugin, or correct \"entry\" (relative to the plugin's directory)".into(),
        )
    })?;
    // A `.lua` entry is a script the Lua plugin host runs in its sandbox, never executed.
    let script = entry.extension().is_some_and(|e| e == "lua");
    if script && meta.is_file() {
        return Ok(());
    }
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(bad(
            format!("entry {} is not an executable file", entry.display()),
            format!("chmod +x {}", entry.display()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("run");
        std::fs::write(&bin, "#!/bin/sh\n").expect("entry");
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        dir
    }

    fn error(text: &str, dir: &Path) -> String {
        Manifest::parse(text, dir).expect_err("invalid").to_string()
    }

    #[test]
    fn a_full_manifest_parses() {
        let dir = plugin_dir();
        let m = Manifest::parse(
            r#"{"name":"timer","version":"1.2","description":"d","entry":"run",
                "platforms":["linux"],"capabilities":["io"],"needs":["ring","plugin:clock"],
                "config_schema":{"type":"object"}}"#,
            dir.path(),
        )
        .expect("valid");
        assert_eq!(m.entry, dir.path().join("run"));
        assert_eq!(
            m.needs,
            vec![Facility::Ring, Facility::Plugin("clock".into())]
        );
        assert!(m.grants().allows("io"));
        assert!(!m.grants().allows("memory"));
    }

    #[test]
    fn every_error_names_the_file_and_a_fix() {
        let dir = plugin_dir();
        let file = dir.path().join(MANIFEST_FILE).display().to_string();
        let cases = [
            ("{", "not a valid manifest"),
            (r#"{"name":"x","entry":"run","colour":1}"#, "unknown field"),
            (r#"{"name":"Bad Name","entry":"run"}"#, "is not 1–64"),
            (
                r#"{"name":"x","entry":"run","capabilities":["memroy"]}"#,
                "memroy",
            ),
            (r#"{"name":"x","entry":"run","needs":["gpu"]}"#, "gpu"),
            (r#"{"name":"x","entry":"missing"}"#, "cannot be found"),
            (r#"{"name":"x","entry":""}"#, "entry is empty"),
            (
                r#"{"name":"x","entry":"run","platforms":["plan9-mips"]}"#,
                "this machine is",
            ),
        ];
        for (text, want) in cases {
            let e = error(text, dir.path());
            assert!(e.starts_with(&file), "{e}");
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.contains("; fix: "), "{e}");
        }
    }

    #[test]
    fn a_non_executable_entry_says_chmod() {
        let dir = plugin_dir();
        std::fs::set_permissions(
            dir.path().join("run"),
            std::fs::Permissions::from_mode(0o644),
        )
        .expect("chmod");
        let e = error(r#"{"name":"x","entry":"run"}"#, dir.path());
        assert!(
            e.contains("not an executable file") && e.contains("chmod +x"),
            "{e}"
        );
    }

    #[test]
    fn this_platform_matches_by_os_or_os_arch() {
        let dir = plugin_dir();
        for p in [std::env::consts::OS.to_owned(), current_platform()] {
            let text = format!(r#"{{"name":"x","entry":"run","platforms":["{p}"]}}"#);
            Manifest::parse(&text, dir.path()).expect("this platform");
        }
    }

    #[test]
    fn a_missing_manifest_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = Manifest::load(dir.path()).expect_err("missing").to_string();
        assert!(
            e.contains("plugin.json") && e.contains("cannot be read"),
            "{e}"
        );
    }
}
