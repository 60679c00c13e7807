//! Lua adapters: one small script per LLM API that turns Hearth's OpenAI-shaped request into
//! that API's request, and its answers back into one unified shape. HTTP is not done here; the
//! provider layer sends what an adapter builds.
//!
//! # Script contract
//!
//! The chunk returns a table:
//!
//! | field | meaning |
//! |---|---|
//! | `name` | overrides the file name |
//! | `version` | free text |
//! | `endpoint` | path after the base URL, default `/chat/completions`; `{model}` is replaced by the request's model |
//! | `stream_endpoint` | path used when streaming, default `endpoint` (Gemini: `…:streamGenerateContent?alt=sse`) |
//! | `stream_format` | `"sse"` (default) or `"ndjson"` (native Ollama) |
//! | `stream_parser` | `"openai"`: the stream is OpenAI chunks over SSE, parsed natively for the usual shapes (no Lua call per token); `transform_stream_chunk` still reads the rest |
//! | `headers` | static `{name = value}` headers |
//! | `build_headers(meta)` | optional; `meta = {url, method, body, api_key, timestamp, source = {name}}`, returns a headers table |
//! | `transform_request(raw_json)` | **required**; returns the body to send |
//! | `transform_response(raw_json)` | optional; returns the unified response (missing or `nil`: passes through) |
//! | `transform_stream_chunk(raw_data)` | optional; returns a unified chunk, `""` to skip the line (missing or `nil`: passes through) |
//!
//! A transform may return a table instead of a string; it is JSON-encoded.
//!
//! # Unified shapes
//!
//! Response: `{content, reasoning_content?, finish_reason?, token_usage: {prompt, completion,
//! total}, tool_calls: [{id, type: "function", name, arguments: {…}, raw_arguments?,
//! stream_index?}]}`; `arguments` is the decoded object (`{}` when the model's text is not a
//! JSON object), `raw_arguments` the text as the API sent it.
//!
//! Stream chunk: `{content, reasoning_content?, done, finish_reason?, tool_calls?: [{stream_index,
//! id?, name?, arguments}], usage?: {prompt, completion, total}}`; a tool call's `arguments` is a
//! text fragment, and fragments sharing a `stream_index` concatenate to the call's JSON.
//! `finish_reason` uses OpenAI's words: `stop`, `length`, `tool_calls`, `content_filter`, and
//! `error` for an error event inside the stream.
//!
//! # Script environment
//!
//! `string`, `table`, `math`, `utf8` and the safe base functions; `load` compiles text only.
//! `log(level, msg)` logs `[lua/<level>] msg` through `tracing`; `print` logs at debug. A
//! message is cut at [`MAX_LOG_MESSAGE_BYTES`], and an adapter may log [`LOG_BURST`] messages
//! at once, then [`LOG_PER_SECOND`] a second; the rest are dropped and counted in one warning. `json`
//! holds `encode`, `decode`, `null`, `array(t?)` and `is_array(v)` (see the `json` module
//! notes below). `util` holds the small helpers the bundled adapters share (`present`, `str`,
//! `num`, `list`, `nonempty`, `trim`, `merge`, `object_of`, `text_of`; `runtime/adapters/prelude.lua`).
//! No file, process, network or module access.
//!
//! JSON rules: a table whose keys are all positive integers is an array, anything else an
//! object, so an empty table encodes as `{}`; tables decoded from JSON arrays, and tables marked
//! with `json.array(t)`, stay arrays even when empty. JSON `null` decodes to `json.null`, which
//! is truthy in Lua, so scripts compare against it. Integers stay integers. `json.encode` gives
//! `"null"` for what it cannot encode; `json.decode` gives `nil` for what is not JSON.
//!
//! # Isolation
//!
//! Each adapter has its own Lua state with a memory limit, on a thread of its own; calls are
//! serialised. Each call has an instruction budget and a wall-clock deadline, enforced from a VM
//! hook that a script cannot catch. A caller waits at most the deadline plus a grace: a library
//! call that never reaches the hook (a pathological pattern match) makes that call return
//! [`AdapterError::Hung`], and the adapter refuses calls until the stuck call returns.
//!
//! ```
//! use hearth_llm::adapter::{Adapter, bundled};
//!
//! let openai = Adapter::load("openai.lua", bundled::source("openai").expect("bundled"))?;
//! let body = openai.transform_request(r#"{"model":"m","messages":[],"stream":true,"disable_thinking":true}"#)?;
//! assert!(body.contains("include_usage"));
//! # Ok::<(), hearth_llm::adapter::AdapterError>(())
//! ```

pub mod bundled;
mod error;
mod handle;
mod json;
mod json_encode;
mod json_shape;
mod log_limit;
pub mod sandbox;
mod vm;

pub use error::{AdapterError, Exceeded};
pub use handle::{Adapter, AdapterLimits, HeaderMeta, StreamFormat};
pub use log_limit::{LOG_BURST, LOG_PER_SECOND, MAX_LOG_MESSAGE_BYTES};
pub use vm::DEFAULT_ENDPOINT;

#[cfg(test)]
mod tests;
