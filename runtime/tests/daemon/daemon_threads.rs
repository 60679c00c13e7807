//! The threads of a running `hearthd` are the ones ARCHITECTURE.md §11 lists: the table is
//! parsed here, so a thread added without a row (or a row whose thread is gone) fails.

use crate::harness::{Daemon, within};
use std::time::{Duration, Instant};

/// One row of the table: the name patterns of its first cell, its number and its lifetime.
#[derive(Debug)]
struct Row {
    names: Vec<String>,
    number: String,
    always: bool,
}

fn table() -> Vec<Row> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ARCHITECTURE.md");
    let doc = std::fs::read_to_string(path).expect("ARCHITECTURE.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("11. Threads"))
        .expect("a section 11 on threads");
    let rows: Vec<Row> = section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 5, "five cells in {line}");
            Row {
                names: cells[0]
                    .split('`')
                    .skip(1)
                    .step_by(2)
                    .map(str::to_string)
                    .collect(),
                number: cells[2].to_string(),
                always: cells[4].starts_with("always"),
            }
        })
        .collect();
    assert!(rows.len() >= 10, "the table was found: {rows:?}");
    rows
}

/// Whether thread name `comm` (at most 15 bytes) is what `pattern` names.
fn matches(pattern: &str, comm: &str) -> bool {
    match pattern.find('<') {
        // The kernel cuts names to 15 bytes.
        None => comm == &pattern[..pattern.len().min(15)],
        Some(0) => false,
        Some(at) => comm.starts_with(&pattern[..at.min(15)]),
    }
}

fn comms(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("/proc task dir")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|c| c.trim_end().to_string())
        .collect()
}

/// Why `running` is not what the table lists, if it is not.
fn mismatch(rows: &[Row], running: &[String]) -> Option<String> {
    for comm in running {
        if !rows
            .iter()
            .any(|r| r.names.iter().any(|n| matches(n, comm)))
        {
            return Some(format!(
                "thread {comm} has no row in ARCHITECTURE.md §11 (running: {running:?})"
            ));
        }
    }
    for row in rows.iter().filter(|r| r.always) {
        let name = &row.names[0];
        let count = running.iter().filter(|c| matches(name, c)).count();
        let fits = match row.number.parse::<usize>() {
            Ok(expected) => count == expected,
            Err(_) => count >= 1,
        };
        if !fits {
            return Some(format!("{count} of {name} ({}) in {running:?}", row.number));
        }
    }
    None
}

#[test]
fn the_threads_at_start_up_are_the_ones_the_architecture_lists() {
    within(Duration::from_secs(60), || {
        let rows = table();
        let daemon = Daemon::start("memory_model = false\n");
        // The socket answers before every service has named its thread, and a thread being
        // started shows the process's name until it names itself: the table must hold once
        // start-up settles, within 10 s, and a thread the table lacks never settles.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let wrong = mismatch(&rows, &comms(daemon.pid()));
            match wrong {
                None => break,
                Some(why) if Instant::now() > deadline => panic!("{why}"),
                Some(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
}

#[test]
fn thread_names_are_matched_as_linux_cuts_them() {
    assert!(matches("hearth-llm-supervisor", "hearth-llm-supe"));
    assert!(matches("hearth-worker-<n>", "hearth-worker-1"));
    assert!(!matches("hearth-worker-<n>", "hearth-store"));
    assert!(!matches("<plugin>", "anything"));
    assert!(!matches("hearth-stage", "hearth-stage-ru"));
}
