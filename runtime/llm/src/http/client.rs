//! [`HttpClient`]: one blocking request per call, returning after the response head so the
//! caller streams the body; cancellable from another thread at every step; connections kept
//! alive between calls.

use super::call_scope::{self, CallBinding};
use super::cancel_connector::{CancelConnector, SharedTls};
use super::cancel_resolver::CancelResolver;
use super::deadline::{ReadDeadline, StreamProgress, StreamTimeouts};
use super::error::{HttpError, from_ureq};
use super::ndjson::NdjsonReader;
use super::sse::SseReader;
use hearth_engine::CancelToken;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;
use std::time::Duration;
use ureq::Agent;
use ureq::config::Config;
use ureq::http::{Method, Request, Uri};
use ureq::unversioned::transport::Connector;

/// How long establishing a connection (lookup, TCP, TLS) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The whole-request limit of a non-streaming call, body included (SPEC §7.2).
pub const NON_STREAMING_TIMEOUT: Duration = Duration::from_secs(180);

/// How many idle connections to one server are kept for later calls. A turn runs one call at
/// a time; the spare ones serve calls that overlap it (a consolidation, a health check).
pub const IDLE_CONNECTIONS_PER_HOST: usize = 4;

/// How many idle connections are kept in all (a few configured sources).
const IDLE_CONNECTIONS: usize = 16;

/// How long an idle connection is kept. Shorter than the idle limits of common front ends and
/// of home routers' connection tracking, so a kept connection is rarely one the other end has
/// forgotten; a server that closes sooner (several local servers wait 5 s) is caught by the
/// probe before reuse, or by the one retry if its close crosses our request.
pub const IDLE_CONNECTION_AGE: Duration = Duration::from_secs(15);

/// Read buffer in front of the response body; SSE lines are usually far shorter.
const BODY_BUFFER_BYTES: usize = 16 * 1024;

/// Client-wide settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpClientConfig {
    /// How long a connection may take to open.
    pub connect_timeout: Duration,
    /// The `User-Agent` header.
    pub user_agent: String,
}

impl Default for HttpClientConfig {
    fn default() -> Self {
        Self {
            connect_timeout: CONNECT_TIMEOUT,
            user_agent: concat!("hearth/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// Per-call settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestOptions {
    /// Deadline for the whole call including the body; `None` for a stream, which may run as
    /// long as the model talks and is ended by the cancel token or its `stream` limits.
    pub total_timeout: Option<Duration>,
    /// First-event, idle and total limits of a streamed body, enforced on the socket's reads;
    /// the reader reports events through [`HttpResponse::progress`].
    pub stream: Option<StreamTimeouts>,
}

impl RequestOptions {
    /// No deadline but the connect timeout: the call runs until the body ends or the token
    /// fires.
    pub fn streaming() -> Self {
        Self {
            total_timeout: None,
            stream: None,
        }
    }

    /// A stream under `limits`.
    pub fn streaming_within(limits: StreamTimeouts) -> Self {
        Self {
            total_timeout: None,
            stream: Some(limits),
        }
    }

    /// [`NON_STREAMING_TIMEOUT`] for the whole call.
    pub fn non_streaming() -> Self {
        Self {
            total_timeout: Some(NON_STREAMING_TIMEOUT),
            stream: None,
        }
    }
}

/// A blocking HTTP/1.1 client for `http://` and `https://` (rustls, webpki roots).
///
/// Cheap to clone and shareable between threads; clones share one pool of idle connections.
/// A connection goes back to the pool when its response was read to the end, and is closed
/// when the body is dropped early, the call fails or is cancelled. Nothing is redirected or
/// proxied; see [`HttpClient::post`] for the one retry.
#[derive(Clone, Debug)]
pub struct HttpClient {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    config: HttpClientConfig,
    agent: Agent,
}

impl Default for HttpClient {
    fn default() -> Self {
        Self::with_config(HttpClientConfig::default())
    }
}

impl HttpClient {
    /// A client with the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// A client with `config`.
    pub fn with_config(config: HttpClientConfig) -> Self {
        let agent = agent_for(&config);
        Self {
            inner: Arc::new(Shared { config, agent }),
        }
    }

    /// The client's configuration.
    pub fn config(&self) -> &HttpClientConfig {
        &self.inner.config
    }

    /// Sends a POST and returns once the response head has arrived, whatever its status.
    ///
    /// `cancel` may be fired from any thread at any point: a call still connecting or waiting
    /// for the head returns [`HttpError::Cancelled`], and one whose body is being read sees its
    /// next (or current, blocked) read fail with it. The socket is shut down, so the server
    /// sees the connection close.
    ///
    /// A request sent on a kept-alive connection that fails before any answer arrives, with the
    /// token not fired, is sent again: that is how a server that closed the idle connection
    /// while we were writing shows itself. A failure on a connection this call opened is
    /// reported as it is.
    pub fn post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: Vec<u8>,
        cancel: &CancelToken,
        opts: RequestOptions,
    ) -> Result<HttpResponse, HttpError> {
        self.send(Method::POST, url, headers, Some(body), cancel, opts)
    }

    /// Sends a GET (health checks, model lists); otherwise as [`Self::post`].
    pub fn get(
        &self,
        url: &str,
        headers: &[(String, String)],
        cancel: &CancelToken,
        opts: RequestOptions,
    ) -> Result<HttpResponse, HttpError> {
        self.send(Method::GET, url, headers, None, cancel, opts)
    }

    fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<Vec<u8>>,
        cancel: &CancelToken,
        opts: RequestOptions,
    ) -> Result<HttpResponse, HttpError> {
        if cancel.is_cancelled() {
            return Err(HttpError::Cancelled);
        }
        let uri: Uri = url
            .parse()
            .map_err(|e| HttpError::InvalidUrl(format!("{url}: {e}")))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(HttpError::InvalidUrl(format!("{url}: not an http(s) url")));
        }
        let deadline = opts.stream.map(ReadDeadline::start);
        // Host and path only: a query string may carry a key.
        tracing::debug!(%method, host = uri.host(), path = uri.path(), "http request");
        // Every stale idle connection may be tried once before a fresh one is opened.
        let mut attempts_left = IDLE_CONNECTIONS_PER_HOST + 1;
        let (call, response) = loop {
            attempts_left -= 1;
            let call = CallBinding::new(cancel.clone(), deadline.clone());
            let mut request = Request::builder().method(method.clone()).uri(uri.clone());
            for (name, value) in headers {
                request = request.header(name.as_str(), value.as_str());
            }
            let sent = {
                let _current = call_scope::enter(&call);
                match &body {
                    Some(body) => self.run(request.body(body.as_slice()), opts),
                    None => self.run(request.body(()), opts),
                }
            };
            match sent {
                Ok(response) => break (call, response),
                Err(_) if cancel.is_cancelled() => return Err(HttpError::Cancelled),
                Err(e) if call.reused() && attempts_left > 0 && stale(&e) => {
                    tracing::debug!(host = uri.host(), error = %e, "kept connection was closed, sending again");
                }
                Err(e) => return Err(e),
            }
        };
        let status = response.status().as_u16();
        tracing::debug!(status, host = uri.host(), "http response head");
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = CancelAwareBody::new(response.into_body().into_reader(), call);
        Ok(HttpResponse {
            status,
            headers,
            body: Box::new(body),
            progress: StreamProgress::new(deadline),
        })
    }

    /// Runs one request through the shared agent under this call's whole-request limit.
    fn run<B: ureq::AsSendBody>(
        &self,
        request: Result<Request<B>, ureq::http::Error>,
        opts: RequestOptions,
    ) -> Result<ureq::http::Response<ureq::Body>, HttpError> {
        let request = request.map_err(|e| HttpError::InvalidRequest(e.to_string()))?;
        let request = self
            .inner
            .agent
            .configure_request(request)
            .timeout_global(opts.total_timeout)
            .build();
        self.inner.agent.run(request).map_err(from_ureq)
    }
}

/// Whether a call's failure is how a kept connection the server had closed shows itself: the
/// connection broke, or ended before a whole response head.
fn stale(err: &HttpError) -> bool {
    matches!(err, HttpError::Io(_) | HttpError::Protocol(_))
}

/// The one agent of a client: its pool keeps connections between calls; its resolver and
/// connector serve whichever call is current on the calling thread.
fn agent_for(cfg: &HttpClientConfig) -> Agent {
    let config = Config::builder()
        .http_status_as_error(false)
        .timeout_resolve(Some(cfg.connect_timeout))
        .timeout_connect(Some(cfg.connect_timeout))
        .max_redirects(0)
        .max_idle_connections(IDLE_CONNECTIONS)
        .max_idle_connections_per_host(IDLE_CONNECTIONS_PER_HOST)
        .max_idle_age(IDLE_CONNECTION_AGE)
        .proxy(None)
        .user_agent(cfg.user_agent.as_str())
        .build();
    let connector = CancelConnector.chain(SharedTls::default());
    Agent::with_parts(
        config,
        connector,
        CancelResolver::remembering_for(IDLE_CONNECTION_AGE),
    )
}

/// The streamed response body.
pub type ResponseBody = Box<dyn BufRead + Send>;

/// A response whose head has arrived; the body is read by the caller as it streams in.
pub struct HttpResponse {
    /// The HTTP status code.
    pub status: u16,
    /// In arrival order, names lower-case; values that are not UTF-8 are decoded lossily.
    pub headers: Vec<(String, String)>,
    /// Read errors carry an [`HttpError`]; recover it with [`HttpError::from_io`].
    pub body: ResponseBody,
    progress: StreamProgress,
}

impl std::fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

impl HttpResponse {
    /// Where the body's reader reports complete events, restarting the idle limit of a call
    /// made with [`RequestOptions::stream`] limits (a no-op otherwise). Take it before
    /// [`Self::into_sse`] or [`Self::into_ndjson`] consume the response.
    pub fn progress(&self) -> StreamProgress {
        self.progress.clone()
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The whole body, or [`HttpError::TooLarge`] once it passes `limit` bytes.
    pub fn read_body(self, limit: usize) -> Result<Vec<u8>, HttpError> {
        let mut out = Vec::new();
        let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
        self.body
            .take(cap)
            .read_to_end(&mut out)
            .map_err(HttpError::from_io)?;
        if out.len() > limit {
            return Err(HttpError::TooLarge { limit });
        }
        Ok(out)
    }

    /// [`Self::read_body`] as UTF-8 text.
    pub fn read_text(self, limit: usize) -> Result<String, HttpError> {
        String::from_utf8(self.read_body(limit)?)
            .map_err(|e| HttpError::InvalidUtf8(format!("in response body: {e}")))
    }

    /// Passes a 2xx response through; turns any other into [`HttpError::Status`] carrying up
    /// to `body_limit` bytes of the body (lossy UTF-8), the shape SPEC §7.2 reports.
    pub fn error_for_status(self, body_limit: usize) -> Result<Self, HttpError> {
        if self.is_success() {
            return Ok(self);
        }
        let status = self.status;
        let mut raw = Vec::new();
        let cap = u64::try_from(body_limit).unwrap_or(u64::MAX);
        self.body
            .take(cap)
            .read_to_end(&mut raw)
            .map_err(HttpError::from_io)?;
        Err(HttpError::Status {
            status,
            body: String::from_utf8_lossy(&raw).into_owned(),
        })
    }

    /// Reads the body as server-sent events.
    pub fn into_sse(self) -> SseReader<ResponseBody> {
        SseReader::new(self.body)
    }

    /// Reads the body as newline-delimited JSON.
    pub fn into_ndjson(self) -> NdjsonReader<ResponseBody> {
        NdjsonReader::new(self.body)
    }
}

/// The body as the caller sees it: once the token fires, nothing more is delivered (not even
/// bytes already buffered), and whatever the interrupted read produced (an I/O error, or a clean
/// EOF after the shutdown) becomes [`HttpError::Cancelled`]. It holds the call's binding: once
/// it is dropped the call is over, and a later cancel of its token leaves the connection (now
/// idle in the pool, or another call's) alone.
struct CancelAwareBody<R> {
    inner: BufReader<R>,
    cancel: CancelToken,
    _call: Arc<CallBinding>,
}

impl<R: Read> CancelAwareBody<R> {
    fn new(inner: R, call: Arc<CallBinding>) -> Self {
        Self {
            inner: BufReader::with_capacity(BODY_BUFFER_BYTES, inner),
            cancel: call.cancel.clone(),
            _call: call,
        }
    }
}

/// A failed read is reported as the cancellation that caused it, if the token fired.
fn cancelled_or(cancel: &CancelToken, err: io::Error) -> io::Error {
    if cancel.is_cancelled() {
        HttpError::Cancelled.into_io()
    } else {
        HttpError::from_io(err).into_io()
    }
}

impl<R: Read> Read for CancelAwareBody<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_cancelled() {
            return Err(HttpError::Cancelled.into_io());
        }
        match self.inner.read(buf) {
            Ok(0) if !buf.is_empty() && self.cancel.is_cancelled() => {
                Err(HttpError::Cancelled.into_io())
            }
            Ok(n) => Ok(n),
            Err(e) => Err(cancelled_or(&self.cancel, e)),
        }
    }
}

impl<R: Read> BufRead for CancelAwareBody<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.cancel.is_cancelled() {
            return Err(HttpError::Cancelled.into_io());
        }
        match self.inner.fill_buf() {
            Ok([]) if self.cancel.is_cancelled() => Err(HttpError::Cancelled.into_io()),
            Ok(buf) => Ok(buf),
            Err(e) => Err(cancelled_or(&self.cancel, e)),
        }
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
    }
}
