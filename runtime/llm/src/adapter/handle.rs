//! The thread-safe handle to one adapter: its Lua state lives on a thread of its own, calls are
//! serialised by a mutex, and a caller never waits longer than the call budget plus a grace.

use super::AdapterError;
use super::vm::{AdapterInfo, AdapterVm, Func};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, bounded};
use parking_lot::Mutex;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

/// Resource limits of one adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterLimits {
    /// Memory limit of the adapter's Lua state, in bytes.
    pub memory_bytes: usize,
    /// VM instructions one call may execute.
    pub instructions: u64,
    /// Wall-clock time one call may take, checked by the instruction hook.
    pub wall: Duration,
    /// Extra time a caller waits beyond `wall` before declaring the call hung (a library function
    /// such as a pattern match runs without reaching the hook).
    pub grace: Duration,
}

impl Default for AdapterLimits {
    fn default() -> Self {
        Self {
            memory_bytes: 32 << 20,
            instructions: 50_000_000,
            wall: Duration::from_secs(2),
            grace: Duration::from_secs(1),
        }
    }
}

/// How a streamed answer is framed on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFormat {
    /// Server-sent events: each `data:` line is one chunk (`[DONE]` ends the stream).
    Sse,
    /// One JSON object per line (native Ollama).
    Ndjson,
}

/// What `build_headers(meta)` is given.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct HeaderMeta {
    /// The request URL.
    pub url: String,
    /// The HTTP method.
    pub method: String,
    /// The request body.
    pub body: String,
    /// The source's API key ("" when none).
    pub api_key: String,
    /// Unix time in seconds.
    pub timestamp: i64,
    /// The source (provider) name, seen by the script as `meta.source.name`.
    pub source: String,
}

impl std::fmt::Debug for HeaderMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeaderMeta")
            .field("url", &self.url)
            .field("method", &self.method)
            .field("body_len", &self.body.len())
            .field(
                "api_key",
                &if self.api_key.is_empty() {
                    ""
                } else {
                    "<redacted>"
                },
            )
            .field("timestamp", &self.timestamp)
            .field("source", &self.source)
            .finish()
    }
}

type Job = Box<dyn FnOnce(&AdapterVm) + Send>;

struct Link {
    /// `None` once the VM thread is gone.
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    /// Set while a call that overran its wait is still running: disconnects when it returns.
    stuck: Option<(Receiver<()>, &'static str)>,
}

/// A loaded adapter script. `Send + Sync`; share it with an `Arc`.
pub struct Adapter {
    info: AdapterInfo,
    limits: AdapterLimits,
    link: Mutex<Link>,
}

impl std::fmt::Debug for Adapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Adapter")
            .field("name", &self.info.name)
            .field("file", &self.info.file)
            .field("version", &self.info.version)
            .field("endpoint", &self.info.endpoint)
            .finish_non_exhaustive()
    }
}

impl Adapter {
    /// Loads `source` (named `file_name`, e.g. `openai.lua`) with the default limits.
    pub fn load(file_name: &str, source: &str) -> Result<Self, AdapterError> {
        Self::load_with(file_name, source, AdapterLimits::default())
    }

    /// Reads and loads an adapter file; its file name names it until the script says otherwise.
    pub fn load_file(path: &Path, limits: AdapterLimits) -> Result<Self, AdapterError> {
        let source = std::fs::read_to_string(path).map_err(|e| AdapterError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string());
        Self::load_with(&file, &source, limits)
    }

    /// Loads `source` into a new sandboxed Lua state on its own thread.
    pub fn load_with(
        file_name: &str,
        source: &str,
        limits: AdapterLimits,
    ) -> Result<Self, AdapterError> {
        let load_err = |message: String| AdapterError::Load {
            file: file_name.to_string(),
            message,
        };
        let (ready_tx, ready_rx) = bounded::<Result<AdapterInfo, AdapterError>>(1);
        // One job at a time: `run` holds the link's lock until its job has answered (or is
        // marked stuck, after which no job is sent until it returns), so one slot is enough.
        let (jobs_tx, jobs_rx) = bounded::<Job>(1);
        let (file, source) = (file_name.to_string(), source.to_string());
        // Thread names must be short and free of NUL bytes; the file name is only a hint.
        let stem: String = file_name
            .strip_suffix(".lua")
            .unwrap_or(file_name)
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .take(11)
            .collect();
        let thread = std::thread::Builder::new()
            .name(format!("lua-{stem}"))
            .spawn(move || {
                let vm = match AdapterVm::load(&file, &source, limits) {
                    Ok((vm, info)) => {
                        if ready_tx.send(Ok(info)).is_err() {
                            return;
                        }
                        vm
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                for job in jobs_rx {
                    job(&vm);
                }
            })
            .map_err(|e| load_err(format!("cannot start the adapter thread: {e}")))?;
        let waited = limits.wall + limits.grace;
        match ready_rx.recv_timeout(waited) {
            Ok(Ok(info)) => Ok(Self {
                info,
                limits,
                link: Mutex::new(Link {
                    jobs: Some(jobs_tx),
                    thread: Some(thread),
                    stuck: None,
                }),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            // Dropping `jobs_tx` lets the thread end on its own if the chunk ever finishes.
            Err(RecvTimeoutError::Timeout) => Err(load_err(format!(
                "the chunk did not finish within {} ms",
                waited.as_millis()
            ))),
            Err(RecvTimeoutError::Disconnected) => Err(load_err(
                "the adapter thread stopped while loading".to_string(),
            )),
        }
    }

    /// The adapter's name: the table's `name`, else the file name without `.lua`.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The file the adapter was loaded from.
    pub fn file_name(&self) -> &str {
        &self.info.file
    }

    /// The script's declared version ("" when none).
    pub fn version(&self) -> &str {
        &self.info.version
    }

    /// The endpoint as the script wrote it (default `/chat/completions`); may hold `{model}`.
    pub fn endpoint(&self) -> &str {
        &self.info.endpoint
    }

    /// The streaming endpoint (`stream_endpoint`, default: `endpoint`).
    pub fn stream_endpoint(&self) -> &str {
        &self.info.stream_endpoint
    }

    /// The endpoint for one request: the streaming one when `stream`, with `{model}` replaced by
    /// the percent-encoded model name.
    pub fn endpoint_for(&self, model: &str, stream: bool) -> String {
        let template = if stream {
            &self.info.stream_endpoint
        } else {
            &self.info.endpoint
        };
        template.replace("{model}", &percent_encode(model))
    }

    /// `base_url` without trailing `/` followed by [`Adapter::endpoint_for`].
    pub fn url(&self, base_url: &str, model: &str, stream: bool) -> String {
        format!(
            "{}{}",
            base_url.trim_end_matches('/'),
            self.endpoint_for(model, stream)
        )
    }

    /// How the source streams its answers.
    pub fn stream_format(&self) -> StreamFormat {
        self.info.stream_format
    }

    /// The script's static `headers` table, sorted by name.
    pub fn static_headers(&self) -> &[(String, String)] {
        &self.info.headers
    }

    /// Whether the script defines `build_headers`.
    pub fn has_build_headers(&self) -> bool {
        self.info.has_build_headers
    }

    /// Whether the script defines `transform_response`.
    pub fn has_response_transform(&self) -> bool {
        self.info.has_response_transform
    }

    /// Whether the script defines `transform_stream_chunk`.
    pub fn has_stream_transform(&self) -> bool {
        self.info.has_stream_transform
    }

    /// Whether the script declared `stream_parser = "openai"`: its stream chunks are OpenAI's,
    /// parsed natively on the reading thread, with `transform_stream_chunk` called only for the
    /// shapes the native parse leaves to it.
    pub fn native_openai_stream(&self) -> bool {
        self.info.native_openai_stream
    }

    /// The budgets calls run under.
    pub fn limits(&self) -> AdapterLimits {
        self.limits
    }

    /// The adapter's headers for one request: `build_headers(meta)` when the script has it,
    /// otherwise its static `headers` table. Sorted by name.
    pub fn headers(&self, meta: &HeaderMeta) -> Result<Vec<(String, String)>, AdapterError> {
        if !self.info.has_build_headers {
            return Ok(self.info.headers.clone());
        }
        let meta = meta.clone();
        self.run("build_headers", move |vm| vm.build_headers(&meta))
    }

    /// Every header of one request: [`Adapter::headers`], plus `Content-Type: application/json`
    /// and `Authorization: Bearer <api_key>` when missing. The bearer header is left out when the
    /// key is empty or another header already carries it (`x-api-key`, `x-goog-api-key`): a
    /// Gemini key sent as a bearer token is rejected as a malformed OAuth token.
    pub fn request_headers(
        &self,
        meta: &HeaderMeta,
    ) -> Result<Vec<(String, String)>, AdapterError> {
        let mut headers = self.headers(meta)?;
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        {
            headers.push(("Content-Type".to_string(), "application/json".to_string()));
        }
        let key = meta.api_key.as_str();
        let carried = key.is_empty()
            || headers
                .iter()
                .any(|(n, v)| n.eq_ignore_ascii_case("authorization") || v.contains(key));
        if !carried {
            headers.push(("Authorization".to_string(), format!("Bearer {key}")));
        }
        Ok(headers)
    }

    /// Turns a request in the OpenAI chat shape into this API's request body.
    pub fn transform_request(&self, raw: &str) -> Result<String, AdapterError> {
        self.transform(Func::Request, raw)
    }

    /// Turns a response body into the unified response JSON; passes through when the script has
    /// no `transform_response` or it returns `nil`.
    pub fn transform_response(&self, raw: &str) -> Result<String, AdapterError> {
        if !self.info.has_response_transform {
            return Ok(raw.to_string());
        }
        self.transform(Func::Response, raw)
    }

    /// Turns one stream line (an SSE `data:` payload or an NDJSON line) into a unified chunk;
    /// `""` means skip it. Passes through when the script has no `transform_stream_chunk` or it
    /// returns `nil`.
    pub fn transform_stream_chunk(&self, raw: &str) -> Result<String, AdapterError> {
        if !self.info.has_stream_transform {
            return Ok(raw.to_string());
        }
        self.transform(Func::StreamChunk, raw)
    }

    fn transform(&self, func: Func, raw: &str) -> Result<String, AdapterError> {
        let raw = raw.to_string();
        self.run(func.name(), move |vm| vm.call(func, &raw))
    }

    /// Runs `job` on the VM thread and waits at most the call budget plus the grace.
    fn run<T: Send + 'static>(
        &self,
        function: &'static str,
        job: impl FnOnce(&AdapterVm) -> Result<T, AdapterError> + Send + 'static,
    ) -> Result<T, AdapterError> {
        let mut link = self.link.lock();
        if let Some((done, stuck_in)) = &link.stuck {
            match done.try_recv() {
                Err(TryRecvError::Empty) => {
                    return Err(self.broken(format!("an earlier {stuck_in} call is still running")));
                }
                Ok(()) | Err(TryRecvError::Disconnected) => link.stuck = None,
            }
        }
        let Some(jobs) = &link.jobs else {
            return Err(self.broken("its Lua thread has stopped".to_string()));
        };
        let (reply_tx, reply_rx) = bounded::<Result<T, AdapterError>>(1);
        // Dropped with the job, when the VM thread has finished with it.
        let (done_tx, done_rx) = bounded::<()>(0);
        let boxed: Job = Box::new(move |vm| {
            let _done = done_tx;
            let _ = reply_tx.send(job(vm));
        });
        if jobs.send(boxed).is_err() {
            link.jobs = None;
            return Err(self.broken("its Lua thread has stopped".to_string()));
        }
        let waited = self.limits.wall + self.limits.grace;
        match reply_rx.recv_timeout(waited) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => {
                tracing::error!(adapter = %self.info.name, function, "adapter call hung; refusing calls until it returns");
                link.stuck = Some((done_rx, function));
                Err(AdapterError::Hung {
                    adapter: self.info.name.clone(),
                    function,
                    waited,
                })
            }
            Err(RecvTimeoutError::Disconnected) => {
                link.jobs = None;
                Err(self.broken(format!("its Lua thread stopped during {function}")))
            }
        }
    }

    fn broken(&self, reason: String) -> AdapterError {
        AdapterError::Broken {
            adapter: self.info.name.clone(),
            reason,
        }
    }
}

impl Drop for Adapter {
    fn drop(&mut self) {
        let link = self.link.get_mut();
        link.jobs = None;
        // A thread still stuck in a call is left to finish on its own rather than block here.
        let still_running = link
            .stuck
            .as_ref()
            .is_some_and(|(done, _)| matches!(done.try_recv(), Err(TryRecvError::Empty)));
        if let Some(thread) = link.thread.take()
            && !still_running
        {
            let _ = thread.join();
        }
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters and `:` (model names such as
/// `llama3:8b` keep their colon, which is legal in a path segment).
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
