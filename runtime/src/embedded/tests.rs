//! The real server from the installed assets (`make setup`); without them these tests fail and
//! say so. Each test body runs under a watchdog, and the tests that start a server take a
//! file lock so parallel test processes do not fight over the two cores (1 thread each).

use std::{
    fs::{self, File},
    io::{BufRead, BufReader, Read},
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    thread,
    time::{Duration, Instant, SystemTime},
};

use crossbeam_channel::{RecvTimeoutError, bounded};
use nix::{
    errno::Errno,
    fcntl::{Flock, FlockArg},
    sys::signal::{Signal, kill},
    unistd::Pid,
};

use super::*;

const WATCHDOG: Duration = Duration::from_secs(120);
const TEST_ALIAS: &str = "hearth-test-model";

fn with_watchdog<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = bounded(1);
    let handle = thread::spawn(move || {
        let _ = tx.send(body());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(value) => {
            let _ = handle.join();
            value
        }
        Err(RecvTimeoutError::Timeout) => panic!("watchdog: test body exceeded {WATCHDOG:?}"),
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Err(panic) => std::panic::resume_unwind(panic),
            Ok(()) => panic!("test body ended without a result"),
        },
    }
}

/// The installed assets; a missing install fails the test with the `make setup` message.
fn installed() -> EmbeddedAssets {
    EmbeddedAssets::locate(None).unwrap_or_else(|e| panic!("{e}"))
}

/// Serialises the tests that run a server, across test processes too.
fn exclusive(assets: &EmbeddedAssets) -> Flock<File> {
    let path = assets.dir().join(".test-lock");
    let file = File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Flock::lock(file, FlockArg::LockExclusive).unwrap_or_else(|(_, e)| panic!("flock: {e}"))
}

fn test_options() -> EmbeddedOptions {
    EmbeddedOptions {
        threads: 1,
        alias: TEST_ALIAS.into(),
        ..EmbeddedOptions::default()
    }
}

fn origin(base_url: &str) -> &str {
    base_url.strip_suffix("/v1").expect("base url ends in /v1")
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .proxy(None)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

fn get(url: &str) -> (u16, String) {
    let response = agent(Duration::from_secs(10))
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .read_to_string()
        .unwrap_or_else(|e| panic!("GET {url} body: {e}"));
    (status, body)
}

/// Gone = no such process, or a zombie waiting for an init that does not reap.
fn process_gone(pid: u32) -> bool {
    let raw = Pid::from_raw(i32::try_from(pid).expect("pid fits in i32"));
    match kill(raw, None::<Signal>) {
        Err(Errno::ESRCH) => true,
        _ => fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit(')')
                    .next()
                    .map(|rest| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true),
    }
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// A cache dir that passes `locate`, with `python` replaced by the given shell script.
fn fake_install(python_script: &str) -> PathBuf {
    let cache = hearth_testkit::fresh_dir("embedded-test");
    let llm = cache.join("llm");
    fs::create_dir_all(llm.join("venv/bin")).expect("create fake venv");
    fs::write(llm.join("READY"), "fake\n").expect("write READY");
    fs::write(llm.join(MODEL_FILE), "not a model").expect("write model");
    let python = llm.join("venv/bin/python");
    fs::write(&python, python_script).expect("write fake python");
    fs::set_permissions(&python, fs::Permissions::from_mode(0o755)).expect("chmod fake python");
    cache
}

#[test]
fn locate_without_an_install_says_to_run_make_setup() {
    let cache = hearth_testkit::fresh_dir("embedded-test");
    let err = EmbeddedAssets::locate(Some(cache.clone())).expect_err("nothing is installed");
    let message = err.to_string();
    assert!(matches!(err, EmbeddedError::NotInstalled { .. }), "{err:?}");
    assert!(
        message.contains("embedded LLM not installed: run `make setup`"),
        "{message}"
    );
    // A venv and model without the READY marker are a half-finished install: still not ready.
    fs::create_dir_all(cache.join("llm/venv/bin")).expect("mkdir");
    fs::write(cache.join("llm/venv/bin/python"), "").expect("write");
    fs::write(cache.join("llm").join(MODEL_FILE), "").expect("write");
    let err = EmbeddedAssets::locate(Some(cache.clone())).expect_err("no READY marker");
    assert!(err.to_string().contains("READY"), "{err}");
    let _ = fs::remove_dir_all(cache);
}

#[test]
fn locate_writes_the_compiled_in_launcher_and_replaces_a_stale_one() {
    let cache = fake_install("#!/bin/sh\nexit 0\n");
    let assets = EmbeddedAssets::locate(Some(cache.clone())).expect("fake install is complete");
    assert_eq!(assets.dir(), cache.join("llm"));
    assert_eq!(assets.python(), cache.join("llm/venv/bin/python"));
    assert_eq!(assets.model(), cache.join("llm").join(MODEL_FILE));
    assert_eq!(
        fs::read_to_string(assets.script()).expect("launcher written"),
        LAUNCHER_SOURCE
    );

    fs::write(assets.script(), "print('an older launcher')\n").expect("write stale launcher");
    let again = EmbeddedAssets::locate(Some(cache.clone())).expect("still complete");
    assert_eq!(
        fs::read_to_string(again.script()).expect("launcher"),
        LAUNCHER_SOURCE
    );
    let _ = fs::remove_dir_all(cache);
}

#[test]
fn a_launcher_that_dies_fails_the_start_with_its_last_log_lines() {
    let cache = fake_install("#!/bin/sh\necho 'xllamacpp: cannot load model' >&2\nexit 3\n");
    let assets = EmbeddedAssets::locate(Some(cache.clone())).expect("fake install is complete");
    let err = with_watchdog(move || {
        EmbeddedServer::start(assets, test_options()).expect_err("the fake launcher exits")
    });
    let message = err.to_string();
    assert!(message.contains("exited before listening"), "{message}");
    assert!(message.contains("exit status: 3"), "{message}");
    assert!(
        message.contains("xllamacpp: cannot load model"),
        "{message}"
    );
    let _ = fs::remove_dir_all(cache);
}

#[test]
fn a_launcher_that_never_listens_times_out_and_is_killed() {
    let cache = fake_install("#!/bin/sh\necho $$ >&2\nexec sleep 600\n");
    let assets = EmbeddedAssets::locate(Some(cache.clone())).expect("fake install is complete");
    let opts = EmbeddedOptions {
        start_timeout: Duration::from_millis(500),
        ..test_options()
    };
    let err =
        with_watchdog(move || EmbeddedServer::start(assets, opts).expect_err("never listens"));
    let EmbeddedError::Start { reason, log } = &err else {
        panic!("expected a start error, got {err:?}");
    };
    assert!(reason.contains("no listening address within"), "{reason}");
    let pid: u32 = log
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("fake launcher pid in {log:?}"));
    assert!(
        process_gone(pid),
        "the timed-out launcher {pid} is still running"
    );
    let _ = fs::remove_dir_all(cache);
}

#[test]
fn server_is_healthy_and_lists_its_alias() {
    let assets = installed();
    with_watchdog(move || {
        let _lock = exclusive(&assets);
        let began = Instant::now();
        let server =
            EmbeddedServer::start(assets, test_options()).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("embedded server healthy after {:?}", began.elapsed());
        let base = server.base_url();
        assert!(
            base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"),
            "{base}"
        );
        assert!(server.is_healthy());

        let (status, body) = get(&format!("{}/health", origin(&base)));
        assert_eq!(status, 200, "{body}");
        let (status, body) = get(&format!("{base}/models"));
        assert_eq!(status, 200, "{body}");
        let models: serde_json::Value = serde_json::from_str(&body).expect("models is JSON");
        let ids: Vec<&str> = models["data"]
            .as_array()
            .expect("data is a list")
            .iter()
            .filter_map(|m| m["id"].as_str())
            .collect();
        assert_eq!(ids, [TEST_ALIAS], "{body}");
    });
}

#[test]
fn streaming_chat_completion_sends_sse_chunks_ending_in_done() {
    let assets = installed();
    with_watchdog(move || {
        let _lock = exclusive(&assets);
        let server =
            EmbeddedServer::start(assets, test_options()).unwrap_or_else(|e| panic!("{e}"));
        let request = serde_json::json!({
            "model": TEST_ALIAS,
            "stream": true,
            "temperature": 0,
            "max_tokens": 8,
            "messages": [{"role": "user", "content": "Say hi"}],
        });
        let began = Instant::now();
        let response = agent(Duration::from_secs(60))
            .post(format!("{}/chat/completions", server.base_url()))
            .header("content-type", "application/json")
            .send(request.to_string())
            .unwrap_or_else(|e| panic!("POST chat/completions: {e}"));
        assert_eq!(response.status().as_u16(), 200);
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}"
        );

        let reader = BufReader::new(response.into_body().into_reader());
        let events: Vec<String> = reader
            .lines()
            .map(|line| line.expect("read SSE line"))
            .filter_map(|line| line.strip_prefix("data: ").map(str::to_string))
            .collect();
        eprintln!("{} SSE events in {:?}", events.len(), began.elapsed());

        let (done, chunks) = events.split_last().expect("at least one event");
        assert_eq!(done, "[DONE]");
        let chunks: Vec<serde_json::Value> = chunks
            .iter()
            .map(|c| serde_json::from_str(c).unwrap_or_else(|e| panic!("chunk {c}: {e}")))
            .collect();
        assert!(
            chunks.len() >= 3,
            "role, content and finish chunks: {chunks:?}"
        );
        for chunk in &chunks {
            assert_eq!(chunk["object"], "chat.completion.chunk", "{chunk}");
            assert_eq!(chunk["model"], TEST_ALIAS, "{chunk}");
        }
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        assert!(
            chunks.iter().any(|c| c["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|s| !s.is_empty())),
            "no content delta: {chunks:?}"
        );
        let finish = &chunks.last().expect("chunks")["choices"][0]["finish_reason"];
        assert!(finish == "length" || finish == "stop", "{finish}");
    });
}

#[test]
fn supervisor_restarts_a_killed_server() {
    let assets = installed();
    with_watchdog(move || {
        let _lock = exclusive(&assets);
        let server =
            EmbeddedServer::start(assets, test_options()).unwrap_or_else(|e| panic!("{e}"));
        let url_source = server.base_url_source();
        let old = server.pid().expect("running");
        kill(Pid::from_raw(old as i32), Signal::SIGKILL).expect("SIGKILL the server");

        let killed = Instant::now();
        let restarted = wait_until(Duration::from_secs(20), || {
            server.restarts() == 1 && server.pid().is_some_and(|p| p != old) && server.is_healthy()
        });
        assert!(
            restarted,
            "no healthy restart within 20 s (restarts {})",
            server.restarts()
        );
        let took = killed.elapsed();
        eprintln!("restarted after {took:?}");
        // The first restart waits the supervisor's first delay.
        let first_delay = hearth_plugin_host::RestartPolicy::default().delays[0];
        assert!(
            took >= first_delay,
            "restarted after {took:?}, before the backoff"
        );
        assert!(process_gone(old), "the killed server {old} was not reaped");
        assert_eq!(url_source.get(), server.base_url());
        let (status, _) = get(&format!("{}/health", origin(&url_source.get())));
        assert_eq!(status, 200);
    });
}

/// The model server follows the plugins' rule: the 4th crash within the window is not
/// restarted, and the status says so.
#[test]
fn the_fourth_crash_within_the_window_stops_the_restarts() {
    let assets = installed();
    with_watchdog(move || {
        let _lock = exclusive(&assets);
        let server =
            EmbeddedServer::start(assets, test_options()).unwrap_or_else(|e| panic!("{e}"));
        let policy = hearth_plugin_host::RestartPolicy::default();
        for crash in 1..=policy.max_crashes {
            let pid = server.pid().expect("running");
            kill(Pid::from_raw(pid as i32), Signal::SIGKILL).expect("SIGKILL the server");
            if crash < policy.max_crashes {
                let back = wait_until(Duration::from_secs(30), || {
                    server.restarts() == crash as u64 && server.pid().is_some_and(|p| p != pid)
                });
                assert!(
                    back,
                    "no restart after crash {crash}: {:?}",
                    server.status()
                );
            }
        }
        let gave_up = wait_until(Duration::from_secs(10), || {
            server.status().is_some_and(|s| {
                s.state
                    == hearth_plugin_host::PluginState::GaveUp {
                        crashes: policy.max_crashes,
                    }
            })
        });
        let status = server.status();
        assert!(gave_up, "not given up: {status:?}");
        let status = status.expect("a status");
        assert!(
            status
                .last_error
                .as_deref()
                .is_some_and(|e| e.contains("SIGKILL")),
            "{status:?}"
        );
        // Given up means no new process: none appears in longer than the longest delay.
        thread::sleep(policy.delays.iter().max().copied().unwrap_or_default());
        assert_eq!(server.pid(), None);
        assert_eq!(server.restarts(), policy.max_crashes as u64 - 1);
        assert!(!server.is_healthy());
    });
}

#[test]
fn stop_and_drop_leave_no_server_process_behind() {
    let assets = installed();
    with_watchdog(move || {
        let _lock = exclusive(&assets);
        let mut server =
            EmbeddedServer::start(assets.clone(), test_options()).unwrap_or_else(|e| panic!("{e}"));
        let pid = server.pid().expect("running");
        let base = server.base_url();
        let began = Instant::now();
        server.stop();
        // Well inside the grace period: SIGTERM alone stopped it, no SIGKILL escalation.
        assert!(
            began.elapsed() < STOP_GRACE,
            "stop took {:?}",
            began.elapsed()
        );
        assert!(process_gone(pid), "server {pid} still exists after stop()");
        assert_eq!(server.pid(), None);
        assert!(!server.is_healthy());
        assert!(
            super::process::http_status(
                &format!("{}/health", origin(&base)),
                Duration::from_secs(2)
            )
            .is_none()
        );
        server.stop();

        let server =
            EmbeddedServer::start(assets, test_options()).unwrap_or_else(|e| panic!("{e}"));
        let pid = server.pid().expect("running");
        drop(server);
        assert!(process_gone(pid), "server {pid} still exists after drop");
    });
}

#[test]
fn launcher_exits_when_its_parent_dies() {
    let assets = installed();
    with_watchdog(move || {
        let _lock = exclusive(&assets);
        // An intermediate shell is the launcher's parent; killing it orphans the launcher.
        let mut shell = Command::new("sh")
            .arg("-c")
            .arg(r#""$@" & echo $!; wait"#)
            .arg("sh")
            .arg(assets.python())
            .arg(assets.script())
            .args(["--model"])
            .arg(assets.model())
            .args(["--threads", "1", "--ctx", "512", "--alias", TEST_ALIAS])
            .env_remove("HEARTH_PARENT_PID")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn sh");
        let mut lines = BufReader::new(shell.stdout.take().expect("piped")).lines();
        let pid: u32 = lines
            .next()
            .and_then(Result::ok)
            .and_then(|l| l.trim().parse().ok())
            .expect("launcher pid from sh");
        let listening = lines.next().and_then(Result::ok).expect("listening line");
        assert!(listening.contains("\"listening\""), "{listening}");

        shell.kill().expect("SIGKILL the parent shell");
        let _ = shell.wait();
        let gone = wait_until(Duration::from_secs(10), || process_gone(pid));
        assert!(
            gone,
            "orphaned launcher {pid} still running 10 s after its parent died"
        );
    });
}

#[test]
fn setup_script_second_run_is_a_quick_no_op() {
    let assets = installed();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/setup-llm.sh");
    let ready = assets.dir().join("READY");
    let modified =
        |p: &Path| -> SystemTime { fs::metadata(p).and_then(|m| m.modified()).expect("mtime") };
    let before = (modified(&ready), modified(assets.model()));
    let output = with_watchdog(move || {
        let began = Instant::now();
        let mut child = Command::new("bash")
            .arg(&script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run setup-llm.sh");
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .expect("piped")
            .read_to_string(&mut stderr)
            .expect("stderr");
        let status = child.wait().expect("wait");
        (status, stderr, began.elapsed())
    });
    let (status, stderr, took) = output;
    assert!(status.success(), "setup-llm.sh failed: {stderr}");
    assert!(
        stderr.contains("setup: llm: everything present, nothing to do"),
        "{stderr}"
    );
    assert!(!stderr.contains("downloading"), "{stderr}");
    assert!(took < Duration::from_secs(20), "second run took {took:?}");
    assert_eq!(
        (modified(&ready), modified(assets.model())),
        before,
        "a no-op run rewrote files"
    );
}
