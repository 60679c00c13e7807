//! An LLM source reached over HTTP through a Lua adapter (SPEC §7.2): the request is turned
//! into the API's shape by the adapter, sent with the cancellable HTTP client, and every
//! streamed line goes back through the adapter into a [`StreamChunk`].

use super::openai_stream::{NativeChunk, parse_openai_stream_chunk};
use super::retry_after::parse_retry_after;
use super::unified::{parse_openai_chunk, parse_unified_chunk};
use super::{ChatProvider, ChatRequest, ProviderError, StreamChunk};
use crate::adapter::{Adapter, HeaderMeta, StreamFormat};
use crate::http::{HttpClient, HttpError, HttpResponse, RequestOptions, SseRef};
use crate::provider::SourceConfig;
use hearth_engine::CancelToken;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The sampling temperature of a request that names none, from a source that sets none (SPEC §7.2).
const DEFAULT_TEMPERATURE: f64 = 0.7;

/// Largest error body kept for the error message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// How long a finished answer may take to reach the end of its body. Servers send the end of
/// a chunked body right behind the end marker; reading it lets the connection be kept for the
/// next call, and a server that holds the stream open costs the turn at most this.
const END_WAIT: Duration = Duration::from_millis(50);

/// Where the source's base URL comes from: fixed, or moving (the embedded server restarts on
/// a new port).
pub type BaseUrl = Arc<dyn Fn() -> String + Send + Sync>;

/// An HTTP source spoken to through a Lua adapter.
pub struct LuaSource {
    cfg: SourceConfig,
    adapter: Arc<Adapter>,
    http: HttpClient,
    base_url: BaseUrl,
}

impl std::fmt::Debug for LuaSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LuaSource")
            .field("name", &self.cfg.name)
            .field("adapter", &self.adapter.name())
            .finish()
    }
}

impl LuaSource {
    /// A source for `cfg` using `adapter` over `http`.
    pub fn new(cfg: SourceConfig, adapter: Arc<Adapter>, http: HttpClient) -> Self {
        let url = cfg.base_url.clone();
        Self::with_base_url(cfg, adapter, http, Arc::new(move || url.clone()))
    }

    /// Like `new`, with the base URL already parsed.
    pub fn with_base_url(
        cfg: SourceConfig,
        adapter: Arc<Adapter>,
        http: HttpClient,
        base_url: BaseUrl,
    ) -> Self {
        Self {
            cfg,
            adapter,
            http,
            base_url,
        }
    }

    /// The source's configuration.
    pub fn config(&self) -> &SourceConfig {
        &self.cfg
    }

    /// The request as this source sends it: its model when the caller left it open, the
    /// source's sampling settings, no tools for a source that takes none, streaming on.
    fn prepare(&self, request: &ChatRequest) -> ChatRequest {
        let model = if request.model.is_empty() || request.model.eq_ignore_ascii_case("AUTO") {
            self.cfg.model.clone()
        } else {
            request.model.clone()
        };
        let max_tokens = match self.cfg.max_tokens {
            0 => request.max_tokens,
            limit => limit,
        };
        // A source that takes no tools never copies their schemas (they can be most of a
        // request's bytes).
        let offered = !self.cfg.no_tools;
        ChatRequest {
            model,
            messages: request.messages.clone(),
            temperature: request
                .temperature
                .or(Some(self.cfg.temperature.unwrap_or(DEFAULT_TEMPERATURE))),
            max_tokens,
            stream: true,
            tools: if offered {
                request.tools.clone()
            } else {
                Vec::new()
            },
            tool_choice: request.tool_choice.clone().filter(|_| offered),
            disable_thinking: request.disable_thinking,
        }
    }

    fn adapter_err(&self, e: impl std::fmt::Display) -> ProviderError {
        ProviderError::Other(format!(
            "source {}: adapter {}: {e}",
            self.cfg.name,
            self.adapter.name()
        ))
    }

    fn http_err(&self, e: HttpError) -> ProviderError {
        match e {
            HttpError::Cancelled => ProviderError::Cancelled,
            HttpError::Status { status, body } => classify_status(status, body),
            other => ProviderError::Other(format!("source {}: {other}", self.cfg.name)),
        }
    }

    /// One streamed line through the adapter; `None` = skip it.
    fn chunk(&self, raw: &str) -> Result<Option<StreamChunk>, ProviderError> {
        let out = self
            .adapter
            .transform_stream_chunk(raw)
            .map_err(|e| self.adapter_err(e))?;
        if out.is_empty() {
            return Ok(None);
        }
        // A passthrough (no transform, or it gave the line back) is read as an OpenAI chunk.
        let parsed = if out == raw {
            parse_openai_chunk(raw)
        } else {
            parse_unified_chunk(&out)
        };
        parsed.map(Some).map_err(|e| self.adapter_err(e))
    }
}

/// A non-2xx response as the provider error: a 429 or 503 that says when to come back
/// becomes [`ProviderError::Busy`], the rest go through [`classify_status`].
fn status_error(response: HttpResponse) -> ProviderError {
    let status = response.status;
    let retry_after = matches!(status, 429 | 503)
        .then(|| response.header("retry-after"))
        .flatten()
        .and_then(|v| parse_retry_after(v, SystemTime::now()));
    let body = response.read_text(ERROR_BODY_LIMIT).unwrap_or_default();
    match retry_after {
        Some(retry_after) => ProviderError::Busy {
            status,
            body,
            retry_after,
        },
        None => classify_status(status, body),
    }
}

/// Turns an HTTP error status into the provider error the fallback logic needs. A prompt too
/// long for the model is recognised in each API's wording and reported as context overflow.
pub fn classify_status(status: u16, body: String) -> ProviderError {
    let lower = body.to_ascii_lowercase();
    let overflow = [
        "context_length_exceeded",
        "maximum context length",
        "exceeds the available context size",
        "context size has been exceeded",
        "prompt is too long",
        "input is too long",
        "exceeds the maximum number of tokens",
        "too many tokens",
    ]
    .iter()
    .any(|needle| lower.contains(needle));
    if overflow && matches!(status, 400 | 413 | 422 | 500) {
        ProviderError::ContextOverflow(format!("api error {status}: {body}"))
    } else {
        ProviderError::Status { status, body }
    }
}

impl ChatProvider for LuaSource {
    fn name(&self) -> &str {
        &self.cfg.name
    }

    fn max_context_tokens(&self) -> usize {
        self.cfg.context_window
    }

    fn takes_tools(&self) -> bool {
        !self.cfg.no_tools
    }

    fn chat_stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        sink: &mut dyn FnMut(StreamChunk),
    ) -> Result<(), ProviderError> {
        let req = self.prepare(request);
        let raw = serde_json::to_string(&req).map_err(|e| ProviderError::Other(e.to_string()))?;
        let body = self
            .adapter
            .transform_request(&raw)
            .map_err(|e| self.adapter_err(e))?;
        let url = self.adapter.url(&(self.base_url)(), &req.model, true);
        let meta = HeaderMeta {
            url: url.clone(),
            method: "POST".into(),
            body: body.clone(),
            api_key: self.cfg.api_key.clone(),
            timestamp: hearth_engine::now_ms() / 1000,
            source: self.cfg.name.clone(),
        };
        let headers = self
            .adapter
            .request_headers(&meta)
            .map_err(|e| self.adapter_err(e))?;
        let response = self
            .http
            .post(
                &url,
                &headers,
                body.into_bytes(),
                cancel,
                RequestOptions::streaming_within(self.cfg.stream_timeouts()),
            )
            .map_err(|e| self.http_err(e))?;
        if !response.is_success() {
            return Err(status_error(response));
        }
        let progress = response.progress();
        // Whether the server said the answer is complete; a stream that just stops is cut off.
        let mut finished = false;
        let mut deliver = |chunk: StreamChunk, sink: &mut dyn FnMut(StreamChunk)| {
            finished |= chunk.done || chunk.finish_reason.is_some();
            sink(chunk);
        };
        match self.adapter.stream_format() {
            StreamFormat::Sse => {
                let native = self.adapter.native_openai_stream();
                let mut events = response.into_sse();
                while let Some(item) = events.next_ref().map_err(|e| self.http_err(e))? {
                    progress.mark();
                    let SseRef::Event { data, .. } = item else {
                        finished = true;
                        break;
                    };
                    let chunk = match native.then(|| parse_openai_stream_chunk(data)) {
                        Some(NativeChunk::Chunk(chunk)) => Some(chunk),
                        Some(NativeChunk::Skip) => None,
                        Some(NativeChunk::Unusual) | None => self.chunk(data)?,
                    };
                    if let Some(chunk) = chunk {
                        deliver(chunk, sink);
                    }
                }
                if finished && progress.end_within(END_WAIT) {
                    events.ends_here();
                }
            }
            StreamFormat::Ndjson => {
                let mut lines = response.into_ndjson();
                for line in &mut lines {
                    progress.mark();
                    let line = line.map_err(|e| self.http_err(e))?;
                    if let Some(chunk) = self.chunk(&line.to_string())? {
                        let done = chunk.done;
                        deliver(chunk, sink);
                        if done {
                            break;
                        }
                    }
                }
                if finished && progress.end_within(END_WAIT) {
                    lines.ends_here();
                }
            }
        }
        if cancel.is_cancelled() {
            return Err(ProviderError::Cancelled);
        }
        if !finished {
            return Err(ProviderError::Other(format!(
                "source {}: the stream ended without a finish reason or end marker (cut off)",
                self.cfg.name
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, ToolSpec};

    #[test]
    fn overflow_is_recognised_per_api_wording() {
        let openai = r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens"}}"#;
        assert!(matches!(
            classify_status(400, openai.into()),
            ProviderError::ContextOverflow(_)
        ));
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it"}}"#;
        assert!(matches!(
            classify_status(400, llama.into()),
            ProviderError::ContextOverflow(_)
        ));
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(matches!(
            classify_status(400, anthropic.into()),
            ProviderError::ContextOverflow(_)
        ));
        assert!(matches!(
            classify_status(401, "bad key".into()),
            ProviderError::Status { status: 401, .. }
        ));
        assert!(matches!(
            classify_status(500, "oops".into()),
            ProviderError::Status { status: 500, .. }
        ));
    }

    fn source(tune: impl FnOnce(&mut SourceConfig)) -> LuaSource {
        let mut cfg = SourceConfig {
            name: "s".into(),
            base_url: "http://127.0.0.1:9".into(),
            model: "its-model".into(),
            adapter: "openai".into(),
            ..SourceConfig::default()
        };
        tune(&mut cfg);
        let adapter = Adapter::load(
            "openai.lua",
            crate::adapter::bundled::source("openai").unwrap(),
        )
        .expect("adapter loads");
        LuaSource::new(cfg, Arc::new(adapter), HttpClient::new())
    }

    /// What a source changes in a request: its model when none was asked for, its sampling
    /// settings, streaming; the tools only for a source that takes none.
    #[test]
    fn a_request_is_prepared_for_its_source() {
        let tool = ToolSpec {
            name: "system_time".into(),
            description: "the time".into(),
            parameters: serde_json::json!({"type": "object"}),
        };
        let mut asked = ChatRequest::new(vec![Message::user("hi")], vec![tool]);
        asked.stream = false;
        let takes_tools = source(|c| c.max_tokens = 99).prepare(&asked);
        assert_eq!(takes_tools.model, "its-model");
        assert_eq!(takes_tools.max_tokens, 99);
        assert_eq!(takes_tools.temperature, Some(DEFAULT_TEMPERATURE));
        assert!(takes_tools.stream);
        assert_eq!(takes_tools.tools, asked.tools);
        assert_eq!(takes_tools.tool_choice.as_deref(), Some("auto"));
        assert_eq!(takes_tools.messages, asked.messages);

        asked.model = "asked-model".into();
        asked.temperature = Some(0.1);
        let none = source(|c| c.no_tools = true).prepare(&asked);
        assert_eq!(
            (none.model.as_str(), none.temperature),
            ("asked-model", Some(0.1))
        );
        assert_eq!(
            none.max_tokens, 4096,
            "the request's own limit when the source sets none"
        );
        assert!(none.tools.is_empty() && none.tool_choice.is_none());
        assert_eq!(none.messages, asked.messages);
        assert!(source(|c| c.max_tokens = 99).takes_tools());
        assert!(!source(|c| c.no_tools = true).takes_tools());
    }
}
