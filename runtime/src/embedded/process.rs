use std::{
    collections::VecDeque,
    io::{BufRead, BufReader, Read},
    os::unix::process::CommandExt,
    process::{Child, Command, ExitStatus, Stdio},
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded, select};
use nix::{
    errno::Errno,
    sys::{
        signal::{Signal, kill},
        wait::{Id, WaitPidFlag, waitid},
    },
    unistd::Pid,
};
use parking_lot::Mutex;

use super::{EmbeddedAssets, EmbeddedError, EmbeddedOptions};

/// Stderr lines kept for the error message of a failed start.
const LOG_TAIL: usize = 20;
const HEALTH_POLL: Duration = Duration::from_millis(50);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
const LOG_TARGET: &str = "hearth::embedded::llama";

/// One running launcher process (`llama_server.py`), from spawn to reap.
///
/// The child stays unreaped until [`ServerProcess::reap`], so its pid cannot be reused while this
/// value may still signal it. Dropping an unreaped process kills it: no error path leaks a server.
pub(crate) struct ServerProcess {
    child: Child,
    pid: u32,
    origin: String,
    /// Disconnects (never receives) once the child has exited; level-triggered, so every
    /// `select!` that looks at it sees the exit.
    exited: Receiver<()>,
    reaped: bool,
}

impl ServerProcess {
    /// Spawns the launcher and returns once `GET /health` answers 200, or fails within
    /// `opts.start_timeout`. A disconnected `cancel` aborts the start.
    pub(crate) fn launch(
        assets: &EmbeddedAssets,
        opts: &EmbeddedOptions,
        cancel: &Receiver<()>,
    ) -> Result<Self, EmbeddedError> {
        let deadline = Instant::now() + opts.start_timeout;
        let mut cmd = Command::new(assets.python());
        cmd.arg(assets.script())
            .arg("--model")
            .arg(assets.model())
            .arg("--threads")
            .arg(opts.threads.max(1).to_string())
            .arg("--ctx")
            .arg(opts.ctx.to_string())
            .arg("--alias")
            .arg(&opts.alias);
        if let Some(template) = &opts.chat_template_file {
            cmd.arg("--chat-template-file").arg(template);
        }
        // The launcher exits when this pid stops being its parent (no parent-death signal
        // without unsafe code); its own process group keeps a terminal's Ctrl-C, meant for the
        // daemon, from killing it behind the supervisor's back.
        cmd.env("HEARTH_PARENT_PID", std::process::id().to_string())
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd.spawn().map_err(|source| EmbeddedError::Io {
            op: "spawn",
            path: assets.python().to_path_buf(),
            source,
        })?;
        let pid = child.id();
        let stdout = child.stdout.take().expect("stdout was piped above");
        let stderr = child.stderr.take().expect("stderr was piped above");
        let (exit_tx, exited) = bounded::<()>(0);
        let mut process = Self {
            child,
            pid,
            origin: String::new(),
            exited,
            reaped: false,
        };

        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(LOG_TAIL)));
        let (stderr_done_tx, stderr_done) = bounded::<()>(0);
        let (listen_tx, listen_rx) = bounded(1);
        let tail_w = Arc::clone(&tail);
        let spawned = spawn_named("hearth-llm-stderr", move || {
            forward_stderr(stderr, pid, &tail_w);
            drop(stderr_done_tx);
        })
        .and_then(|()| {
            spawn_named("hearth-llm-stdout", move || {
                read_stdout(stdout, pid, listen_tx)
            })
        })
        .and_then(|()| spawn_named("hearth-llm-wait", move || wait_exit(pid, exit_tx)));
        if let Err(e) = spawned {
            return Err(start_error(
                format!("cannot spawn a thread: {e}"),
                &tail,
                None,
            ));
        }

        let fail = |process: &mut Self, reason: String| {
            process.terminate(Duration::ZERO);
            // The reader may still hold the last lines, which are the ones that explain.
            let _ = stderr_done.recv_timeout(Duration::from_secs(1));
            start_error(reason, &tail, None)
        };
        let timeout = opts.start_timeout;
        let first_line = select! {
            recv(listen_rx) -> line => line,
            recv(cancel) -> _ => {
                process.terminate(Duration::ZERO);
                return Err(EmbeddedError::Cancelled);
            }
            default(deadline.saturating_duration_since(Instant::now())) => {
                return Err(fail(&mut process, format!("no listening address within {timeout:?}")));
            }
        };
        process.origin = match first_line {
            Ok(Ok(origin)) => origin,
            Ok(Err(line)) => {
                return Err(fail(
                    &mut process,
                    format!("unexpected launcher output {line:?}"),
                ));
            }
            Err(_) => {
                let status = process.terminate(Duration::ZERO);
                let _ = stderr_done.recv_timeout(Duration::from_secs(1));
                return Err(start_error(
                    "the launcher exited before listening".into(),
                    &tail,
                    status,
                ));
            }
        };

        loop {
            if http_status(&format!("{}/health", process.origin), HEALTH_TIMEOUT) == Some(200) {
                return Ok(process);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let reason = format!("{} not healthy within {timeout:?}", process.origin);
                return Err(fail(&mut process, reason));
            }
            select! {
                recv(process.exited) -> _ => {
                    let status = process.terminate(Duration::ZERO);
                    let _ = stderr_done.recv_timeout(Duration::from_secs(1));
                    return Err(start_error(
                        "the server exited while loading".into(),
                        &tail,
                        status,
                    ));
                }
                recv(cancel) -> _ => {
                    process.terminate(Duration::ZERO);
                    return Err(EmbeddedError::Cancelled);
                }
                default(HEALTH_POLL.min(left)) => {}
            }
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// `http://127.0.0.1:PORT`, as the launcher reported it.
    pub(crate) fn origin(&self) -> &str {
        &self.origin
    }

    /// Disconnects once the child has exited.
    pub(crate) fn exited(&self) -> &Receiver<()> {
        &self.exited
    }

    /// Collects the exit status. Blocks until the child exits, so call it after [`Self::exited`]
    /// fired or a signal was sent.
    pub(crate) fn reap(&mut self) -> Option<ExitStatus> {
        if self.reaped {
            return self.child.try_wait().ok().flatten();
        }
        self.reaped = true;
        match self.child.wait() {
            Ok(status) => Some(status),
            Err(e) => {
                tracing::warn!(pid = self.pid, error = %e, "embedded LLM server: cannot reap");
                None
            }
        }
    }

    /// SIGTERM, then SIGKILL once `grace` has passed without an exit; then reaps.
    pub(crate) fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        if !self.reaped && !has_exited(&self.exited) {
            let pid = Pid::from_raw(i32::try_from(self.pid).expect("Linux pids fit in i32"));
            // Unreaped, so the pid is still this child's (at worst a zombie): no stray signal.
            let termed = grace > Duration::ZERO && kill(pid, Signal::SIGTERM).is_ok();
            let exited_in_time = termed
                && !matches!(
                    self.exited.recv_timeout(grace),
                    Err(RecvTimeoutError::Timeout)
                );
            if !exited_in_time {
                if termed {
                    tracing::warn!(
                        pid = self.pid,
                        ?grace,
                        "embedded LLM server ignored SIGTERM; killing it"
                    );
                }
                let _ = self.child.kill();
            }
        }
        self.reap()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.reaped {
            self.terminate(Duration::ZERO);
        }
    }
}

/// `GET url` on loopback; the status code, or `None` when the server cannot be reached.
pub(crate) fn http_status(url: &str, timeout: Duration) -> Option<u16> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        // Loopback must never go through a proxy taken from the environment.
        .proxy(None)
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into();
    agent.get(url).call().ok().map(|r| r.status().as_u16())
}

fn has_exited(exited: &Receiver<()>) -> bool {
    matches!(
        exited.try_recv(),
        Err(crossbeam_channel::TryRecvError::Disconnected)
    )
}

fn spawn_named(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    thread::Builder::new().name(name.into()).spawn(f).map(drop)
}

fn start_error(
    reason: String,
    tail: &Mutex<VecDeque<String>>,
    status: Option<ExitStatus>,
) -> EmbeddedError {
    let reason = match status {
        Some(status) => format!("{reason} ({status})"),
        None => reason,
    };
    let log = tail
        .lock()
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n");
    EmbeddedError::Start { reason, log }
}

/// Waits for the child to exit without reaping it (WNOWAIT), then drops `exit_tx`, so the owner
/// learns of the exit at once yet still holds an unreaped (unrecyclable) pid.
fn wait_exit(pid: u32, exit_tx: Sender<()>) {
    let pid = Pid::from_raw(i32::try_from(pid).expect("Linux pids fit in i32"));
    // Returns once exited, or already reaped (ECHILD): either way it is gone.
    while let Err(Errno::EINTR) = waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
    {
    }
    drop(exit_tx);
}

/// The first stdout line is `{"listening": "http://127.0.0.1:PORT"}`; anything after it is logged.
fn read_stdout(stdout: impl Read, pid: u32, listen_tx: Sender<Result<String, String>>) {
    let mut lines = BufReader::new(stdout).split(b'\n');
    if let Some(Ok(first)) = lines.next() {
        let line = String::from_utf8_lossy(&first).trim().to_string();
        let _ = listen_tx.send(parse_listening(&line).ok_or(line));
    }
    drop(listen_tx);
    for line in lines.map_while(Result::ok) {
        tracing::debug!(target: LOG_TARGET, pid, "{}", String::from_utf8_lossy(&line).trim_end());
    }
}

fn parse_listening(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let origin = value.get("listening")?.as_str()?.trim_end_matches('/');
    // Only ever a loopback server of our own making.
    let port = origin.strip_prefix("http://127.0.0.1:")?;
    port.parse::<u16>().ok().filter(|&p| p != 0)?;
    Some(origin.to_string())
}

/// Forwards the child's stderr to tracing, keeping the last lines for error messages.
fn forward_stderr(stderr: impl Read, pid: u32, tail: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(stderr).split(b'\n').map_while(Result::ok) {
        let line = String::from_utf8_lossy(&line).trim_end().to_string();
        if line.is_empty() {
            continue;
        }
        // llama.cpp lines read "<time> <level letter> <message>".
        match line.split_whitespace().nth(1) {
            Some("E") => tracing::warn!(target: LOG_TARGET, pid, "{line}"),
            _ if line.starts_with("llama_server:") => {
                tracing::info!(target: LOG_TARGET, pid, "{line}")
            }
            Some("I" | "D" | "W" | "T") => tracing::debug!(target: LOG_TARGET, pid, "{line}"),
            // Anything else (a Python traceback) is unusual enough to show.
            _ => tracing::info!(target: LOG_TARGET, pid, "{line}"),
        }
        let mut tail = tail.lock();
        if tail.len() == LOG_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

#[cfg(test)]
mod unit {
    use super::parse_listening;

    #[test]
    fn listening_line_accepts_only_a_loopback_origin_with_a_port() {
        assert_eq!(
            parse_listening(r#"{"listening": "http://127.0.0.1:34293"}"#).as_deref(),
            Some("http://127.0.0.1:34293")
        );
        assert_eq!(
            parse_listening(r#"{"listening": "http://127.0.0.1:8080/"}"#).as_deref(),
            Some("http://127.0.0.1:8080")
        );
        for bad in [
            r#"{"listening": "http://0.0.0.0:8080"}"#,
            r#"{"listening": "http://127.0.0.1:0"}"#,
            r#"{"listening": "http://127.0.0.1:x"}"#,
            r#"{"address": "http://127.0.0.1:8080"}"#,
            "listening on 8080",
        ] {
            assert_eq!(parse_listening(bad), None, "{bad}");
        }
    }
}
