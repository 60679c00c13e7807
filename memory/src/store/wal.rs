//! Write-ahead logging, as every Hearth SQLite file runs: readers never wait for the writer,
//! and a commit is one append to the log.

use rusqlite::Connection;

/// Switches `conn` to write-ahead logging. `Ok(None)` once it is; `Ok(Some(detail))` when
/// SQLite kept another journal mode (a file system without shared memory, say), with the words
/// for the caller's error. The caller checks the file's identity first: the switch already
/// writes the header.
pub fn switch_to_wal(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    Ok((!mode.eq_ignore_ascii_case("wal"))
        .then(|| format!("could not switch to WAL (journal_mode is {mode})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_goes_to_wal_and_memory_says_why_it_cannot() {
        let dir = hearth_testkit::fresh_dir("wal");
        let file = Connection::open(dir.join("x.db")).expect("open");
        assert_eq!(switch_to_wal(&file).expect("pragma"), None);
        drop(file);
        let _ = std::fs::remove_dir_all(&dir);
        // An in-memory database keeps its own journal mode.
        let memory = Connection::open_in_memory().expect("open");
        let detail = switch_to_wal(&memory).expect("pragma").expect("refused");
        assert!(detail.contains("journal_mode is memory"), "{detail}");
    }
}
