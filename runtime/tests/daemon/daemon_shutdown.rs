//! Stopping and starting `hearthd`: SIGTERM with a full queue, a vanished socket file, a second
//! daemon on the same data dir, file modes under a permissive umask, and what is at the socket
//! path before the daemon binds it.

use crate::harness::{Daemon, held_server, source, within};
use crate::raw::{Got, Raw};
use hearth_memory::StoreReader;
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::Duration;

const CLIENTS: usize = 100;

#[test]
fn sigterm_with_a_hundred_queued_inputs_gives_every_client_its_terminal_line() {
    within(Duration::from_secs(240), || {
        let (server, _gate) = held_server();
        let mut daemon = Daemon::start(&source("remote", &server.base_url, 0));
        let (first_tx, first_rx) = crossbeam_channel::unbounded();
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                let socket = daemon.socket.clone();
                let first_tx = first_tx.clone();
                std::thread::spawn(move || {
                    let mut raw = Raw::connect(&socket);
                    raw.send_text(&format!("queued input {i}"));
                    let mut first = true;
                    loop {
                        match raw.next() {
                            Got::Eof => return None,
                            Got::Line(v) => {
                                if first {
                                    first = false;
                                    let _ = first_tx.send(());
                                }
                                let kind = v["type"].as_str().unwrap_or_default().to_string();
                                if !matches!(kind.as_str(), "accepted" | "delta" | "lag") {
                                    return Some(v);
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        for _ in 0..CLIENTS {
            first_rx
                .recv_timeout(Duration::from_secs(60))
                .expect("every client hears back before the stop");
        }
        server.wait_requests(1, Duration::from_secs(60));
        let (took, clean) = daemon.terminate(Duration::from_secs(15));
        assert!(clean, "hearthd exits cleanly on SIGTERM");
        let answers: Vec<_> = clients
            .into_iter()
            .map(|c| c.join().expect("client"))
            .collect();
        let lost = answers.iter().filter(|a| a.is_none()).count();
        eprintln!(
            "SIGTERM with {CLIENTS} queued: {lost} answers lost, exit after {} ms",
            took.as_millis()
        );
        assert_eq!(lost, 0, "clients saw EOF without a terminal line");
        assert!(
            took < Duration::from_secs(6),
            "exit took {took:?}, past the grace period"
        );
        // Told `shutdown`, so journaled as ended: nothing of it runs again at the next start.
        let store = StoreReader::open(daemon.dir.join("memory.db")).expect("store");
        let pending = store.journal_pending().expect("pending");
        assert!(pending.is_empty(), "{} inputs still pending", pending.len());
    });
}

#[test]
fn sigterm_completes_when_the_socket_file_is_gone() {
    within(Duration::from_secs(60), || {
        // Model off: a SIGTERM while the embedding model still loads waits for the load (its
        // runtime's destructors must not run under it), which on a loaded machine alone takes
        // longer than this bound; what is timed here is the gone socket file.
        let mut daemon = Daemon::start("memory_model = false\n");
        // An idle client too: the daemon must not wait for it.
        let _idle = Raw::connect(&daemon.socket);
        std::fs::remove_file(&daemon.socket).expect("remove the socket file");
        let (took, clean) = daemon.terminate(Duration::from_secs(10));
        assert!(clean);
        assert!(took < Duration::from_secs(3), "took {took:?}");
    });
}

#[test]
fn a_second_daemon_on_the_same_data_dir_is_refused_naming_the_first() {
    within(Duration::from_secs(60), || {
        let daemon = Daemon::start("");
        // Its own socket path, so only the data dir lock can stop it.
        let other = daemon.dir.join("other.sock");
        let out = Daemon::command(
            &daemon.dir,
            &format!("socket_path = \"{}\"\n", other.display()),
        )
        .stderr(Stdio::piped())
        .output()
        .expect("second hearthd runs");
        assert!(!out.status.success(), "the second daemon must not start");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("another hearthd (pid {})", daemon.pid())),
            "{err}"
        );
        assert!(err.contains(&daemon.dir.display().to_string()), "{err}");
        assert!(!other.exists(), "the refused daemon bound nothing");
        // The first one still serves.
        let mut raw = Raw::connect(&daemon.socket);
        raw.send(r#"{"op":"help"}"#);
        assert_eq!(raw.line()["type"], "response");
    });
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
}

#[test]
fn under_umask_000_the_data_dir_socket_and_files_are_private() {
    within(Duration::from_secs(60), || {
        let dir = Daemon::fresh_dir();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let hearthd = Daemon::command(&dir, "");
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c")
            .arg("umask 000; exec \"$0\" \"$@\"")
            .arg(hearthd.get_program())
            .args(hearthd.get_args())
            .envs(hearthd.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
            .env_remove("HEARTH_DATA_DIR")
            .env_remove("HEARTH_SOCKET")
            .stdout(Stdio::null());
        let daemon = Daemon::adopt(sh.spawn().expect("hearthd under umask 000"), dir);
        let out = daemon.run(&[
            "source",
            "add",
            "spare",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ]);
        assert!(out.status.success(), "{}", crate::harness::stderr(&out));
        assert_eq!(mode(&daemon.dir), 0o700, "data dir");
        assert_eq!(mode(&daemon.socket), 0o600, "socket");
        assert_eq!(mode(&daemon.dir.join("hearthd.lock")), 0o600, "lock file");
        assert_eq!(
            mode(&daemon.dir.join("sources.json")),
            0o600,
            "sources.json"
        );
        let readable = readable_by_another_user(&daemon.dir);
        eprintln!("files of the data dir another user could read: {readable:?}");
        assert!(readable.is_empty(), "another user reads {readable:?}");
    });
}

/// The files of `dir` that user `nobody` can open, tried for real with `setpriv` when the test
/// runs as root (empty, and said so, otherwise).
fn readable_by_another_user(dir: &std::path::Path) -> Vec<String> {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0");
    if !root {
        eprintln!("not root: cannot switch to another user, only the modes were checked");
        return Vec::new();
    }
    let opens = |path: &std::path::Path| {
        std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "head",
                "-c1",
            ])
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("setpriv runs")
            .success()
    };
    // The probe itself works: a world-readable file outside the data dir opens.
    let control = std::env::temp_dir().join(format!("hearth-probe-{}", std::process::id()));
    std::fs::write(&control, "x").expect("probe file");
    std::fs::set_permissions(&control, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert!(
        opens(&control),
        "setpriv cannot read a 0644 file: the probe is broken"
    );
    let _ = std::fs::remove_file(&control);
    std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file() && opens(p))
        .map(|p| p.display().to_string())
        .collect()
}

#[test]
fn a_regular_file_at_the_socket_path_is_an_error_and_is_kept() {
    within(Duration::from_secs(60), || {
        let dir = Daemon::fresh_dir();
        let path = dir.join("hearth.sock");
        std::fs::write(&path, "not a socket").expect("file");
        let out = Daemon::command(&dir, "")
            .stderr(Stdio::piped())
            .output()
            .expect("hearthd runs");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("not a socket"), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("kept"),
            "not a socket"
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn queue_full_is_never_preceded_by_accepted_and_is_journaled_as_ended() {
    within(Duration::from_secs(180), || {
        let (server, _gate) = held_server();
        let config = format!(
            "{}\n[socket]\nmax_connections = 1000\n",
            source("remote", &server.base_url, 0)
        );
        let daemon = Daemon::start(&config);
        let clients: Vec<_> = (0..700)
            .map(|i| {
                let socket = daemon.socket.clone();
                std::thread::spawn(move || {
                    let mut raw = Raw::connect(&socket);
                    raw.send_text(&format!("flood {i}"));
                    // An accepted input waits behind the held call: its first line is enough.
                    let first = raw.line();
                    if first["type"] == "accepted" {
                        return (first, None);
                    }
                    (first.clone(), Some(first))
                })
            })
            .collect();
        let mut refused = Vec::new();
        for c in clients {
            let (first, terminal) = c.join().expect("client");
            match terminal {
                None => assert_eq!(first["type"], "accepted"),
                Some(t) => {
                    assert_eq!(t["type"], "skipped", "{t}");
                    assert_eq!(t["reason"], "queue_full", "{t}");
                    refused.push(t["request_id"].as_str().expect("id").to_string());
                }
            }
        }
        assert!(!refused.is_empty(), "the flood overflowed the queue");
        let store = StoreReader::open(daemon.dir.join("memory.db")).expect("store");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        for id in &refused {
            loop {
                let entry = store.journal_get(id).expect("read").expect("journaled");
                if entry.reply.is_some() {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "queue_full input {id} is still pending: it would run after a restart"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        eprintln!(
            "flood of 700: {} answered queue_full, all journaled as ended",
            refused.len()
        );
    });
}
