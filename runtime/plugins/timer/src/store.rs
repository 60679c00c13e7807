//! The timers, kept in `timers.json` in the plugin's directory so they survive a restart.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One reminder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timer {
    /// Unique within the store, never reused.
    pub id: u64,
    /// When it is due, milliseconds since the Unix epoch (wall clock, so it survives a reboot).
    pub due_ms: u64,
    /// What to remind of.
    pub text: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    next_id: u64,
    timers: Vec<Timer>,
}

/// The timers and where they are saved.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    file: File,
}

impl Store {
    /// Opens `dir/timers.json`; missing means no timers. A damaged file is an error, never
    /// silently emptied.
    pub fn open(dir: &Path) -> Result<Store, String> {
        let path = dir.join("timers.json");
        let file = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: not a timer file ({e}); fix it or move it away",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => File::default(),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        Ok(Store { path, file })
    }

    /// Adds a timer due at `due_ms`; saved before it returns.
    pub fn add(&mut self, due_ms: u64, text: &str) -> Result<Timer, String> {
        self.file.next_id += 1;
        let timer = Timer {
            id: self.file.next_id,
            due_ms,
            text: text.to_owned(),
        };
        self.file.timers.push(timer.clone());
        self.save()?;
        Ok(timer)
    }

    /// Every timer, soonest first.
    pub fn list(&self) -> Vec<Timer> {
        let mut timers = self.file.timers.clone();
        timers.sort_by_key(|t| (t.due_ms, t.id));
        timers
    }

    /// Removes timer `id`; whether there was one.
    pub fn remove(&mut self, id: u64) -> Result<bool, String> {
        let before = self.file.timers.len();
        self.file.timers.retain(|t| t.id != id);
        if self.file.timers.len() == before {
            return Ok(false);
        }
        self.save()?;
        Ok(true)
    }

    /// The timers due at `now_ms`, soonest first.
    pub fn due(&self, now_ms: u64) -> Vec<Timer> {
        self.list()
            .into_iter()
            .filter(|t| t.due_ms <= now_ms)
            .collect()
    }

    fn save(&self) -> Result<(), String> {
        let tmp = self.path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(&self.file).map_err(|e| e.to_string())?;
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_survive_reopening_and_come_due_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = Store::open(dir.path()).expect("empty");
        let late = s.add(2_000, "late").expect("add");
        let early = s.add(1_000, "early").expect("add");
        let s2 = Store::open(dir.path()).expect("reopen");
        assert_eq!(s2.list(), vec![early.clone(), late.clone()]);
        assert_eq!(s2.due(1_500), vec![early.clone()]);
        assert!(s2.due(999).is_empty());
        let mut s2 = s2;
        assert!(s2.remove(early.id).expect("remove"));
        assert!(!s2.remove(early.id).expect("again"));
        let s3 = Store::open(dir.path()).expect("reopen");
        assert_eq!(s3.list(), vec![late]);
    }

    #[test]
    fn ids_are_not_reused_after_a_cancel() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = Store::open(dir.path()).expect("empty");
        let a = s.add(1, "a").expect("add");
        s.remove(a.id).expect("remove");
        let b = s.add(1, "b").expect("add");
        assert_ne!(a.id, b.id);
    }

    #[test]
    fn a_damaged_file_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("timers.json"), "[").expect("write");
        let e = Store::open(dir.path()).expect_err("damaged");
        assert!(e.contains("timers.json"), "{e}");
    }
}
