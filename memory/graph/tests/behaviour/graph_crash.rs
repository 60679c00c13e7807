//! SIGKILL during distillation: a child distills in a loop and is killed at a random moment;
//! the reopened graph has every item it reported, no half-written item and no duplicate.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::{assert_invariants, count, peek};

const ROUNDS: u64 = 4;

#[test]
fn sigkill_during_distillation_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    let mut reported: Vec<i64> = Vec::new();
    for round in 0..ROUNDS {
        // Every round starts from item 1: items already done must be skipped, not redone.
        let mut child = Command::new(env!("CARGO_BIN_EXE_graph_crash_distiller"))
            .arg(&path)
            .arg("1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn distiller");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line.parse::<i64>().unwrap()).is_err() {
                    break;
                }
            }
        });
        let wanted = 15 + (round as usize * 7) % 11;
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        let fresh = |seen: &Vec<i64>| seen.iter().filter(|id| !reported.contains(id)).count();
        while fresh(&seen) < wanted {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(id) => seen.push(id),
                Err(_) => panic!("distiller stalled (watchdog) after {} items", seen.len()),
            }
        }
        // Kill mid-transaction at a varying point of the next item.
        std::thread::sleep(Duration::from_micros(300 * round));
        child.kill().unwrap();
        child.wait().unwrap();
        seen.extend(rx.try_iter());
        reader.join().unwrap();
        let new: Vec<i64> = seen
            .into_iter()
            .filter(|id| !reported.contains(id))
            .collect();
        reported.extend(new);

        assert_invariants(&path);
        let conn = peek(&path);
        let done: Vec<i64> = conn
            .prepare("SELECT cold_item FROM distilled WHERE state = 'done' ORDER BY cold_item")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for id in &reported {
            assert!(
                done.contains(id),
                "item {id} was reported committed but is not done"
            );
        }
        let n = done.len() as i64;
        assert_eq!(
            done,
            (1..=n).collect::<Vec<_>>(),
            "done items are a prefix: none skipped"
        );
        // Each done item wrote exactly its rows; no item wrote rows without being done.
        let per_item = |sql: &str| count(&conn, sql);
        assert_eq!(
            per_item("SELECT count(DISTINCT cold_item) FROM provenance"),
            n
        );
        assert_eq!(
            per_item("SELECT count(*) FROM events"),
            n,
            "one dated move per item"
        );
        assert_eq!(
            per_item(
                "SELECT count(*) FROM relations WHERE predicate = 'lives_in' AND subject_id = \
             (SELECT id FROM entities WHERE norm = 'user')"
            ),
            n
        );
        assert_eq!(
            per_item(
                "SELECT count(*) FROM relations WHERE predicate = 'lives_in' AND valid_to_ms IS NULL \
                      AND subject_id = (SELECT id FROM entities WHERE norm = 'user')"
            ),
            1,
            "one current home"
        );
        assert_eq!(
            per_item("SELECT mentions FROM relations WHERE predicate = 'likes'"),
            n,
            "'I like tea' merged once per item, never duplicated or counted twice"
        );
    }
    assert!(reported.len() as u64 >= ROUNDS * 15);
}
