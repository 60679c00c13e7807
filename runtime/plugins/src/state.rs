//! Which installed plugins are disabled, persisted in `<data_dir>/plugins/state.json` (0600).

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::PluginError;

/// The state file's name inside the plugins directory.
pub(crate) const STATE_FILE: &str = "state.json";

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct EnabledState {
    /// Plugins the user disabled; every other installed plugin is enabled.
    #[serde(default)]
    disabled: BTreeSet<String>,
    #[serde(skip)]
    path: PathBuf,
}

impl EnabledState {
    /// Reads the state in `dir`; a missing file means every plugin is enabled. A damaged file
    /// is an error naming it, never silently reset (that would enable what the user disabled).
    pub(crate) fn load(dir: &Path) -> Result<EnabledState, PluginError> {
        let path = dir.join(STATE_FILE);
        let mut state = match std::fs::read_to_string(&path) {
            Ok(text) => {
                serde_json::from_str::<EnabledState>(&text).map_err(|e| PluginError::Manifest {
                    path: path.clone(),
                    problem: format!("is not valid: {e}"),
                    fix: "correct it to {\"disabled\": [names]} or delete it (every plugin is \
                          then enabled)"
                        .into(),
                })?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => EnabledState::default(),
            Err(e) => return Err(PluginError::io(&path)(e)),
        };
        state.path = path;
        Ok(state)
    }

    pub(crate) fn is_enabled(&self, name: &str) -> bool {
        !self.disabled.contains(name)
    }

    /// Records `name` as enabled or not and writes the file (atomically, mode 0600).
    pub(crate) fn set(&mut self, name: &str, enabled: bool) -> Result<(), PluginError> {
        if enabled {
            self.disabled.remove(name);
        } else {
            self.disabled.insert(name.to_owned());
        }
        self.save()
    }

    fn save(&self) -> Result<(), PluginError> {
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(PluginError::io(&tmp))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(PluginError::io(&tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(PluginError::io(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn disabled_names_persist_with_mode_0600() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = EnabledState::load(dir.path()).expect("empty");
        assert!(s.is_enabled("timer"));
        s.set("timer", false).expect("saves");
        let again = EnabledState::load(dir.path()).expect("reloads");
        assert!(!again.is_enabled("timer"));
        let mode = std::fs::metadata(dir.path().join(STATE_FILE))
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_damaged_file_is_an_error_not_a_reset() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(STATE_FILE), "{disabled").expect("write");
        let e = EnabledState::load(dir.path())
            .expect_err("damaged")
            .to_string();
        assert!(e.contains("state.json") && e.contains("fix:"), "{e}");
    }
}
