//! The model server as a child of the daemon's supervisor: the command that starts the
//! launcher (`llama_server.py`), and bringing a freshly spawned one up (its listening line, then
//! `GET /health`). Waiting for the exit, the parent-death signal, stopping and restarting are
//! the supervisor's (`hearth_plugin_host::supervisor`), as for every other child.

use std::{
    collections::VecDeque,
    io::{BufRead, BufReader, Read},
    os::unix::process::CommandExt,
    process::{Child, Command, Stdio},
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use crossbeam_channel::{Sender, bounded};
use hearth_plugin_host::supervisor::{SpawnError, Supervised};
use nix::{
    sys::wait::{Id, WaitPidFlag, WaitStatus, waitid},
    unistd::Pid,
};
use parking_lot::Mutex;

use super::options::{BaseUrl, EmbeddedOptions, api_url};
use super::{EmbeddedAssets, EmbeddedError};

/// The server's name in the supervisor's status and logs.
pub(crate) const SERVER_NAME: &str = "embedded-llm";
/// Stderr lines kept for the error message of a failed start.
const LOG_TAIL: usize = 20;
const HEALTH_POLL: Duration = Duration::from_millis(50);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a failed start waits for the child's last stderr lines.
const LAST_WORDS: Duration = Duration::from_secs(1);
const LOG_TARGET: &str = "hearth::embedded::llama";

/// The launcher as the supervisor runs it: each start builds a fresh command, each attach waits
/// for that child to serve, and publishes its address through the shared [`BaseUrl`].
pub(crate) struct LlamaServer {
    assets: EmbeddedAssets,
    opts: EmbeddedOptions,
    base_url: BaseUrl,
    /// Why the last start failed, kept whole (with the log tail) for [`super::EmbeddedServer::start`].
    start_error: Mutex<Option<EmbeddedError>>,
}

impl LlamaServer {
    pub(crate) fn new(assets: EmbeddedAssets, opts: EmbeddedOptions, base_url: BaseUrl) -> Self {
        Self {
            assets,
            opts,
            base_url,
            start_error: Mutex::new(None),
        }
    }

    /// The error of the last failed start, if any (taken: asked once).
    pub(crate) fn take_start_error(&self) -> Option<EmbeddedError> {
        self.start_error.lock().take()
    }

    /// Waits for the listening line, then for `GET /health` to answer 200, within
    /// `opts.start_timeout`.
    fn bring_up(&self, child: &mut Child) -> Result<String, EmbeddedError> {
        let deadline = Instant::now() + self.opts.start_timeout;
        let timeout = self.opts.start_timeout;
        let pid = child.id();
        let stdout = child.stdout.take().ok_or_else(|| not_piped("stdout"))?;
        let stderr = child.stderr.take().ok_or_else(|| not_piped("stderr"))?;
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(LOG_TAIL)));
        let (stderr_done_tx, stderr_done) = bounded::<()>(0);
        let (listen_tx, listen_rx) = bounded(1);
        let tail_w = Arc::clone(&tail);
        let fail = |child: &mut Child, reason: String| {
            // Still unreaped (the supervisor reaps), so the pid is this child's. Killed first:
            // its stderr then ends, and the last lines, the ones that explain, are in the tail.
            let _ = child.kill();
            let _ = stderr_done.recv_timeout(LAST_WORDS);
            start_error(reason, &tail, exit_of(child, LAST_WORDS))
        };
        let spawned = spawn_named("hearth-llm-stderr", move || {
            forward_stderr(stderr, pid, &tail_w);
            drop(stderr_done_tx);
        })
        .and_then(|()| {
            spawn_named("hearth-llm-stdout", move || {
                read_stdout(stdout, pid, listen_tx)
            })
        });
        if let Err(e) = spawned {
            return Err(fail(child, format!("cannot spawn a thread: {e}")));
        }
        let first_line = listen_rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let origin = match first_line {
            Ok(Ok(origin)) => origin,
            Ok(Err(line)) => {
                return Err(fail(child, format!("unexpected launcher output {line:?}")));
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                return Err(fail(
                    child,
                    format!("no listening address within {timeout:?}"),
                ));
            }
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                return Err(fail(child, "the launcher exited before listening".into()));
            }
        };
        loop {
            if http_status(&format!("{origin}/health"), HEALTH_TIMEOUT) == Some(200) {
                return Ok(origin);
            }
            if exit_of(child, Duration::ZERO).is_some() {
                return Err(fail(child, "the server exited while loading".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(fail(
                    child,
                    format!("{origin} not healthy within {timeout:?}"),
                ));
            }
            thread::sleep(HEALTH_POLL.min(left));
        }
    }
}

impl Supervised for LlamaServer {
    fn name(&self) -> &str {
        SERVER_NAME
    }

    fn command(&self) -> Result<Command, SpawnError> {
        let (assets, opts) = (&self.assets, &self.opts);
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
        // The supervisor adds the parent-death signal; the launcher also exits when this pid
        // stops being its parent, which covers a launcher started by hand. Its own process
        // group keeps a terminal's Ctrl-C, meant for the daemon, from killing it behind the
        // supervisor's back.
        cmd.env("HEARTH_PARENT_PID", std::process::id().to_string())
            .env_remove("PYTHONPATH")
            .env_remove("PYTHONHOME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        Ok(cmd)
    }

    fn attach(&self, child: &mut Child) -> Result<(), SpawnError> {
        match self.bring_up(child) {
            Ok(origin) => {
                let url = api_url(&origin);
                tracing::info!(%url, pid = child.id(), "embedded LLM server ready");
                self.base_url.set(url);
                *self.start_error.lock() = None;
                Ok(())
            }
            Err(e) => {
                let reported = SpawnError::attach(copy_of(&e));
                *self.start_error.lock() = Some(e);
                Err(reported)
            }
        }
    }

    fn detach(&self, why: &str) {
        tracing::info!("embedded LLM server gone: {why}");
    }
}

/// A second copy of a start failure: one is kept whole for [`super::EmbeddedServer::start`],
/// the other goes to the supervisor (an I/O error cannot be cloned, and a start fails with
/// [`EmbeddedError::Start`] only).
fn copy_of(e: &EmbeddedError) -> EmbeddedError {
    match e {
        EmbeddedError::Start { reason, log } => EmbeddedError::Start {
            reason: reason.clone(),
            log: log.clone(),
        },
        other => EmbeddedError::Start {
            reason: other.to_string(),
            log: String::new(),
        },
    }
}

fn not_piped(stream: &str) -> EmbeddedError {
    EmbeddedError::Start {
        reason: format!("the launcher's {stream} is not piped"),
        log: String::new(),
    }
}

/// How the child ended, if it has within `wait`, without reaping it (the supervisor's one
/// wait does): `exit status: 3`, `signal: 9`.
fn exit_of(child: &Child, wait: Duration) -> Option<String> {
    let pid = Pid::from_raw(i32::try_from(child.id()).ok()?);
    let until = Instant::now() + wait;
    loop {
        let peek = waitid(
            Id::Pid(pid),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG,
        );
        match peek {
            Ok(WaitStatus::Exited(_, code)) => return Some(format!("exit status: {code}")),
            Ok(WaitStatus::Signaled(_, sig, _)) => {
                return Some(format!("signal: {} ({})", sig as i32, sig.as_str()));
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return None,
        }
        if Instant::now() >= until {
            return None;
        }
        thread::sleep(Duration::from_millis(10));
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

fn spawn_named(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    thread::Builder::new().name(name.into()).spawn(f).map(drop)
}

fn start_error(
    reason: String,
    tail: &Mutex<VecDeque<String>>,
    status: Option<String>,
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
