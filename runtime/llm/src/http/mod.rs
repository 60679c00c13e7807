//! The HTTP client the language-model providers speak through, and the two streaming body
//! formats they read: server-sent events (OpenAI-compatible sources) and newline-delimited JSON
//! (Ollama's native API).
//!
//! Requests go through `ureq` with a connection layer of our own underneath its TLS: every
//! socket a call opens is tied to the call's [`CancelToken`](hearth_engine::CancelToken), and
//! cancelling shuts the socket down, so a read blocked on a silent server (a long prefill)
//! returns at once instead of at the server's next byte. Name lookup and connecting run on a
//! helper thread the caller stops waiting for when cancelled. A connection whose answer was read
//! to its end is kept alive for the next call to the same server (up to
//! [`IDLE_CONNECTIONS_PER_HOST`] of them, for [`IDLE_CONNECTION_AGE`]), which saves a TCP and
//! TLS handshake per turn. The only retry is of a request that failed before any answer on a
//! connection an earlier call had opened, the server having closed it while idle; nothing is
//! redirected or proxied, and a cancelled request is never sent again.
//!
//! ```no_run
//! use hearth_llm::http::{HttpClient, RequestOptions};
//! use hearth_engine::CancelToken;
//!
//! let client = HttpClient::new();
//! let cancel = CancelToken::new();
//! let headers = [("Content-Type".to_owned(), "application/json".to_owned())];
//! let body = br#"{"stream":true}"#.to_vec();
//! let response = client.post(
//!     "http://127.0.0.1:11434/v1/chat/completions",
//!     &headers,
//!     body,
//!     &cancel,
//!     RequestOptions::streaming(),
//! )?;
//! for item in response.into_sse() {
//!     match item? {
//!         hearth_llm::http::SseItem::Event(event) => println!("{}", event.data),
//!         hearth_llm::http::SseItem::Done => break,
//!     }
//! }
//! # Ok::<(), hearth_llm::http::HttpError>(())
//! ```

mod call_scope;
mod cancel_connector;
mod cancel_resolver;
mod client;
mod deadline;
mod error;
mod line;
mod ndjson;
mod off_thread;
mod sse;

pub use client::{
    CONNECT_TIMEOUT, HttpClient, HttpClientConfig, HttpResponse, IDLE_CONNECTION_AGE,
    IDLE_CONNECTIONS_PER_HOST, NON_STREAMING_TIMEOUT, RequestOptions, ResponseBody,
};
pub use deadline::{StreamProgress, StreamTimeouts};
pub use error::HttpError;
pub use line::MAX_LINE_BYTES;
pub use ndjson::NdjsonReader;
pub use sse::{MAX_EVENT_BYTES, SseEvent, SseItem, SseReader, SseRef};

#[cfg(test)]
mod keep_alive_tests;
#[cfg(test)]
mod tests;
