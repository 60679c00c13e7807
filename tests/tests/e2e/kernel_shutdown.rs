//! Graceful shutdown of a real process on SIGTERM and SIGINT: every queued, suspended or running
//! task gets its terminal reply before the process exits.

use crate::support::within;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

fn run_host(signal: &str) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kernel_host"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kernel_host starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    assert_eq!(lines.next().expect("ready line").expect("utf-8"), "ready");
    // One long task runs, one interrupt preempts it (suspended frame), the rest queue up.
    for i in 0..5 {
        writeln!(stdin, "input:task {i}").expect("write");
    }
    writeln!(stdin, "interrupt:L3:urgent").expect("write");
    writeln!(stdin, "sync").expect("write");
    stdin.flush().expect("flush");
    assert_eq!(lines.next().expect("synced").expect("utf-8"), "submitted 6");
    std::thread::sleep(Duration::from_millis(200));
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let mut replies = Vec::new();
    for line in lines {
        let line = line.expect("utf-8");
        if line == "bye" {
            break;
        }
        replies.push(serde_json::from_str::<Value>(&line).expect("a JSON reply"));
    }
    let exit = child.wait().expect("child exits");
    assert!(exit.success(), "graceful exit, got {exit:?}");
    assert_eq!(replies.len(), 6, "one reply per task: {replies:?}");
    let mut ids: Vec<&str> = replies
        .iter()
        .map(|r| r["request_id"].as_str().unwrap_or(""))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 6, "no task answered twice");
    assert!(
        replies.iter().all(|r| r["reason"] != "dropped"),
        "{replies:?}"
    );
    assert!(
        replies.iter().any(|r| r["reason"] == "shutdown"),
        "pending tasks are told why: {replies:?}"
    );
}

#[test]
fn sigterm_answers_every_pending_task_before_exit() {
    within(Duration::from_secs(60), || run_host("TERM"));
}

#[test]
fn sigint_answers_every_pending_task_before_exit() {
    within(Duration::from_secs(60), || run_host("INT"));
}
