//! The daemon's Unix socket (mode 0600): one thread per client connection, outside the engine's
//! workers, so a slow client never stalls the graph. Streamed answers come from the event ring —
//! the same deltas every other reader sees — filtered by the request's id.

use super::protocol::{Answer, HELP, Request};
use hearth_ipc::{EventKind, KindMask, ReadResult, Reader};
use hearth_kernel::ingress::KernelHandle;
use hearth_kernel::input::{InputEvent, Reply, Trust};
use hearth_llm::provider::SourceConfig;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the socket may ask of the daemon beyond the kernel itself.
pub trait Control: Send + Sync + 'static {
    fn kernel(&self) -> &KernelHandle;
    /// Scheduler snapshot, providers and their availability.
    fn status(&self) -> Value;
    fn sources(&self) -> Value;
    fn add_source(&self, source: SourceConfig) -> Result<String, String>;
    fn remove_source(&self, name: &str) -> Result<String, String>;
    fn test_source(&self, name: &str) -> Result<String, String>;
}

/// Longest request line accepted from a client.
const MAX_LINE: usize = 1 << 20;

pub struct SocketServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SocketServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SocketServer")
            .field("path", &self.path)
            .finish()
    }
}

impl SocketServer {
    /// Binds `path` (a stale socket file is replaced; a live one is an error) with mode 0600.
    pub fn bind(
        path: &Path,
        api_key: Option<String>,
        control: Arc<dyn Control>,
    ) -> std::io::Result<Self> {
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    format!("another daemon is listening on {}", path.display()),
                ));
            }
            std::fs::remove_file(path)?;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let listener = UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let key = api_key.map(Arc::new);
        let accept = std::thread::Builder::new()
            .name("hearth-socket".into())
            .spawn(move || {
                for stream in listener.incoming() {
                    if flag.load(Ordering::Acquire) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let control = control.clone();
                    let key = key.clone();
                    let spawned = std::thread::Builder::new()
                        .name("hearth-client".into())
                        .spawn(move || {
                            if let Err(e) =
                                serve(stream, key.as_deref().map(String::as_str), &*control)
                            {
                                tracing::debug!("client connection ended: {e}");
                            }
                        });
                    if let Err(e) = spawned {
                        tracing::error!("cannot start a client thread: {e}");
                    }
                }
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            stop,
            accept: Some(accept),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stops accepting and removes the socket file. Open connections finish their request.
    pub fn shutdown(mut self) {
        self.close();
    }

    fn close(&mut self) {
        // SYNC: pairs with the Acquire load in the accept loop.
        self.stop.store(true, Ordering::Release);
        let _ = UnixStream::connect(&self.path);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Drop for SocketServer {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.close();
        }
    }
}

fn serve(stream: UnixStream, key: Option<&str>, control: &dyn Control) -> std::io::Result<()> {
    let mut out = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut authed = key.is_none();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n =
            std::io::Read::take(&mut reader, MAX_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.len() > MAX_LINE {
            out.write_all(
                Answer::error(format!("request line longer than {MAX_LINE} bytes"))
                    .to_line()
                    .as_bytes(),
            )?;
            return Ok(());
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            out.write_all(
                Answer::error("request is not valid UTF-8")
                    .to_line()
                    .as_bytes(),
            )?;
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        let request = match Request::parse(text) {
            Ok(r) => r,
            Err(e) => {
                out.write_all(Answer::error(e).to_line().as_bytes())?;
                continue;
            }
        };
        if !authed {
            match (&request, key) {
                (Request::Auth { key: given }, Some(expected))
                    if constant_time_eq(given.as_bytes(), expected.as_bytes()) =>
                {
                    authed = true;
                    out.write_all(
                        Answer::Response {
                            content: "authenticated".into(),
                            request_id: String::new(),
                        }
                        .to_line()
                        .as_bytes(),
                    )?;
                    continue;
                }
                _ => {
                    out.write_all(Answer::error("unauthorized").to_line().as_bytes())?;
                    return Ok(());
                }
            }
        }
        handle(request, control, &mut out)?;
    }
}

fn handle(request: Request, control: &dyn Control, out: &mut UnixStream) -> std::io::Result<()> {
    let kernel = control.kernel();
    let answer = match request {
        Request::Auth { .. } => Answer::Response {
            content: "authenticated".into(),
            request_id: String::new(),
        },
        Request::Help => Answer::Response {
            content: HELP.into(),
            request_id: String::new(),
        },
        Request::Send { text, source } => {
            // The socket is the local operator's, reached only after its key check.
            let input = InputEvent::text(source.unwrap_or_else(|| "cli".into()), text)
                .with_trust(Trust::Local);
            return stream_request(kernel, input, false, out);
        }
        Request::Interrupt {
            text,
            level,
            source,
        } => {
            let input = InputEvent::text(source.unwrap_or_else(|| "cli".into()), text)
                .with_payload("priority", json!(level.unwrap_or_else(|| "L1".into())))
                .with_payload("interrupt", json!(true))
                .with_trust(Trust::Local);
            return stream_request(kernel, input, true, out);
        }
        Request::Stop => match kernel.stop("cli").recv_timeout(Duration::from_secs(10)) {
            Ok(reply) => Answer::Response {
                content: reply.content,
                request_id: reply.request_id,
            },
            Err(_) => Answer::error("the kernel did not acknowledge the stop"),
        },
        Request::Status => Answer::Status {
            status: control.status(),
        },
        Request::SourceList => Answer::Sources {
            sources: control.sources(),
        },
        Request::SourceAdd { source } => result(control.add_source(source)),
        Request::SourceRemove { name } => result(control.remove_source(&name)),
        Request::SourceTest { name } => result(control.test_source(&name)),
    };
    out.write_all(answer.to_line().as_bytes())
}

fn result(r: Result<String, String>) -> Answer {
    match r {
        Ok(content) => Answer::Response {
            content,
            request_id: String::new(),
        },
        Err(e) => Answer::error(e),
    }
}

/// Submits `input` and streams its deltas from the ring, then its terminal reply.
fn stream_request(
    kernel: &KernelHandle,
    mut input: InputEvent,
    interrupt: bool,
    out: &mut UnixStream,
) -> std::io::Result<()> {
    // Subscribe before submitting, so not a single delta can be missed.
    let mut ring = kernel.subscribe(KindMask::of(&[
        EventKind::ContentDelta,
        EventKind::ReasoningDelta,
    ]));
    let request_id = input.request_id.clone();
    let rx = input.reply_channel();
    if kernel.submit_durably(input, interrupt).is_ok() {
        out.write_all(
            Answer::Accepted {
                request_id: request_id.clone(),
            }
            .to_line()
            .as_bytes(),
        )?;
    }
    let mut buf = Vec::new();
    loop {
        forward_deltas(
            &mut ring,
            &mut buf,
            &request_id,
            out,
            Some(Duration::from_millis(20)),
        )?;
        match rx.try_recv() {
            Ok(reply) => {
                // Every delta was published before the reply was sent: drain what is left.
                forward_deltas(&mut ring, &mut buf, &request_id, out, None)?;
                return out.write_all(terminal(reply).to_line().as_bytes());
            }
            Err(crossbeam_channel::TryRecvError::Empty) => {}
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                return out.write_all(
                    Answer::error("the kernel dropped the request")
                        .to_line()
                        .as_bytes(),
                );
            }
        }
    }
}

fn forward_deltas(
    ring: &mut Reader,
    buf: &mut Vec<u8>,
    request_id: &str,
    out: &mut UnixStream,
    wait: Option<Duration>,
) -> std::io::Result<()> {
    let mut first = true;
    loop {
        let next = match (wait, first) {
            (Some(d), true) => ring.next_timeout(buf, d),
            _ => ring.try_next(buf),
        };
        first = false;
        let ReadResult::Event { kind, .. } = next else {
            if matches!(next, ReadResult::Lagged { .. }) {
                continue;
            }
            return Ok(());
        };
        let Ok(envelope) = serde_json::from_slice::<Value>(buf) else {
            continue;
        };
        let payload = &envelope["payload"];
        if payload["request_id"] != request_id {
            continue;
        }
        let delta = Answer::Delta {
            content: payload["content"].as_str().unwrap_or_default().to_string(),
            reasoning: kind == EventKind::ReasoningDelta,
            reset: payload["reset"].as_bool().unwrap_or(false),
        };
        out.write_all(delta.to_line().as_bytes())?;
    }
}

fn terminal(reply: Reply) -> Answer {
    if reply.skipped {
        Answer::Skipped {
            reason: reply.reason.unwrap_or_default(),
            request_id: reply.request_id,
        }
    } else if reply.error {
        Answer::Error {
            error: reply.content,
        }
    } else {
        Answer::Response {
            content: reply.content,
            request_id: reply.request_id,
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
