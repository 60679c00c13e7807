//! The audit log: one JSON line per destructive operation done on a user's behalf (forgetting a
//! memory), appended to `<data_dir>/audit.jsonl` and synced before the operation is answered,
//! so what was removed, when and by whom is never lost with it.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde_json::Value;

/// The file the records go to.
pub(super) const AUDIT_FILE: &str = "audit.jsonl";

pub(super) struct AuditLog {
    path: PathBuf,
    /// One writer at a time, so lines never interleave.
    lock: Mutex<()>,
}

impl AuditLog {
    pub(super) fn new(data_dir: &Path) -> AuditLog {
        AuditLog {
            path: data_dir.join(AUDIT_FILE),
            lock: Mutex::new(()),
        }
    }

    /// Appends `record` as one line and syncs it.
    pub(super) fn record(&self, record: &Value) -> std::io::Result<()> {
        let _one = self.lock.lock();
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let mut line = record.to_string();
        line.push('\n');
        file.write_all(line.as_bytes())?;
        file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn records_are_appended_one_line_each() {
        let dir = tempfile::tempdir().expect("dir");
        let log = AuditLog::new(dir.path());
        log.record(&json!({"op": "forget", "id": 1}))
            .expect("first");
        log.record(&json!({"op": "forget", "id": 2}))
            .expect("second");
        let text = std::fs::read_to_string(dir.path().join(AUDIT_FILE)).expect("read");
        let ids: Vec<i64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_i64()
                    .unwrap()
            })
            .collect();
        assert_eq!(ids, [1, 2]);
    }
}
