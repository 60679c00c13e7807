//! [`HttpClient`]: one blocking request per call, returning after the response head so the
//! caller streams the body; cancellable from another thread at every step.

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
/// Cheap to clone and shareable between threads. Every call opens its own connection and closes
/// it when the response body is dropped; nothing is pooled, retried, redirected or proxied.
#[derive(Clone, Debug, Default)]
pub struct HttpClient {
    inner: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    config: HttpClientConfig,
    tls: SharedTls,
}

impl HttpClient {
    /// A client with the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// A client with `config`.
    pub fn with_config(config: HttpClientConfig) -> Self {
        Self {
            inner: Arc::new(Shared {
                config,
                tls: SharedTls::default(),
            }),
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
        let mut request = Request::builder().method(method.clone()).uri(uri.clone());
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }

        let deadline = opts.stream.map(ReadDeadline::start);
        let agent = self.agent_for(cancel, opts, deadline.clone());
        // Host and path only: a query string may carry a key.
        tracing::debug!(%method, host = uri.host(), path = uri.path(), "http request");
        let sent = match body {
            Some(body) => {
                let request = request
                    .body(body)
                    .map_err(|e| HttpError::InvalidRequest(e.to_string()))?;
                agent.run(request)
            }
            None => {
                let request = request
                    .body(())
                    .map_err(|e| HttpError::InvalidRequest(e.to_string()))?;
                agent.run(request)
            }
        };
        let response = sent.map_err(|e| {
            if cancel.is_cancelled() {
                HttpError::Cancelled
            } else {
                from_ureq(e)
            }
        })?;
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
        let body = CancelAwareBody::new(response.into_body().into_reader(), cancel.clone());
        Ok(HttpResponse {
            status,
            headers,
            body: Box::new(body),
            progress: StreamProgress::new(deadline),
        })
    }

    /// One agent per call, because the connector and resolver carry the call's token.
    fn agent_for(
        &self,
        cancel: &CancelToken,
        opts: RequestOptions,
        deadline: Option<Arc<ReadDeadline>>,
    ) -> Agent {
        let cfg = &self.inner.config;
        let config = Config::builder()
            .http_status_as_error(false)
            .timeout_resolve(Some(cfg.connect_timeout))
            .timeout_connect(Some(cfg.connect_timeout))
            .timeout_global(opts.total_timeout)
            .max_redirects(0)
            .max_idle_connections(0)
            .max_idle_connections_per_host(0)
            .proxy(None)
            .user_agent(cfg.user_agent.as_str())
            .build();
        let connector =
            CancelConnector::new(cancel.clone(), deadline).chain(self.inner.tls.clone());
        Agent::with_parts(config, connector, CancelResolver::new(cancel.clone()))
    }
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
/// EOF after the shutdown) becomes [`HttpError::Cancelled`].
struct CancelAwareBody<R> {
    inner: BufReader<R>,
    cancel: CancelToken,
}

impl<R: Read> CancelAwareBody<R> {
    fn new(inner: R, cancel: CancelToken) -> Self {
        Self {
            inner: BufReader::with_capacity(BODY_BUFFER_BYTES, inner),
            cancel,
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
