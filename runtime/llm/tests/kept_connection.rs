//! Streamed calls through the bundled adapters against a loopback server that keeps its
//! connections alive and frames each answer as a chunked body, as llama.cpp's server, Ollama
//! and the cloud APIs do: consecutive calls share one connection, and a server that leaves a
//! finished stream open costs the call a bounded wait, never a hang.

use hearth_engine::CancelToken;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::{
    ChatProvider, ChatRequest, LuaSource, Message, ProviderError, SourceConfig, StreamChunk,
};
use hearth_testkit::within;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How a served answer ends.
#[derive(Clone, Copy)]
enum Ending {
    /// The end marker, then the chunked body's end at once.
    Prompt,
    /// The end marker, then the body stays open until the client goes.
    HeldOpen,
}

/// Serves every request on every connection with `events` as one chunked body; returns the
/// base URL and the count of accepted connections.
fn serve(kind: &'static str, events: Vec<String>, ending: Ending) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let events = events.clone();
            std::thread::spawn(move || answer_each(stream, kind, &events, ending));
        }
    });
    (base, accepted)
}

fn answer_each(mut stream: TcpStream, kind: &str, events: &[String], ending: Ending) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    while read_request(&mut reader) {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nTransfer-Encoding: chunked\r\n\r\n"
        );
        if stream.write_all(head.as_bytes()).is_err() {
            return;
        }
        for event in events {
            let _ = write!(stream, "{:x}\r\n{event}\r\n", event.len());
        }
        match ending {
            Ending::Prompt => {
                let _ = stream.write_all(b"0\r\n\r\n");
            }
            Ending::HeldOpen => {
                let mut buf = [0u8; 64];
                while matches!(stream.read(&mut buf), Ok(n) if n > 0) {}
                return;
            }
        }
    }
}

/// Reads one request; `false` once the client closed the connection.
fn read_request(reader: &mut BufReader<TcpStream>) -> bool {
    let mut length = 0usize;
    let mut first = true;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return !first;
        }
        first = false;
        if line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).is_ok()
}

fn openai_events(text: &str) -> Vec<String> {
    vec![
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
        ),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".into(),
        "data: [DONE]\n\n".into(),
    ]
}

fn ollama_events(text: &str) -> Vec<String> {
    vec![
        format!("{{\"message\":{{\"role\":\"assistant\",\"content\":\"{text}\"}},\"done\":false}}\n"),
        "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\"}\n"
            .into(),
    ]
}

fn source(adapter: &str, base_url: &str, client: &HttpClient) -> LuaSource {
    let cfg = SourceConfig {
        name: adapter.into(),
        base_url: base_url.into(),
        model: "m".into(),
        adapter: adapter.into(),
        ..SourceConfig::default()
    };
    cfg.validate().expect("valid source");
    let lua = Adapter::load(
        &format!("{adapter}.lua"),
        bundled::source(adapter).expect("bundled"),
    )
    .expect("adapter loads");
    LuaSource::new(cfg, Arc::new(lua), client.clone())
}

fn call(provider: &dyn ChatProvider) -> (Result<(), ProviderError>, String) {
    let mut text = String::new();
    let request = ChatRequest::new(vec![Message::user("hi")], Vec::new());
    let result = provider.chat_stream(&request, &CancelToken::new(), &mut |c: StreamChunk| {
        text.push_str(&c.content)
    });
    (result, text)
}

#[test]
fn consecutive_streamed_calls_share_one_connection() {
    within(Duration::from_secs(20), || {
        let client = HttpClient::new();
        for (adapter, kind, events) in [
            ("openai", "text/event-stream", openai_events("hello")),
            ("ollama", "application/x-ndjson", ollama_events("hello")),
        ] {
            let (base, accepted) = serve(kind, events, Ending::Prompt);
            let provider = source(adapter, &base, &client);
            for round in 0..3 {
                let (result, text) = call(&provider);
                result.unwrap_or_else(|e| panic!("{adapter} call {round}: {e}"));
                assert_eq!(text, "hello", "{adapter} call {round}");
            }
            assert_eq!(
                accepted.load(Ordering::SeqCst),
                1,
                "{adapter}: three calls, one connection"
            );
        }
    });
}

/// The delayed-acknowledgement stall: a server that leaves Nagle's algorithm on (as
/// cpp-httplib does by default) holds each small write until the previous one is acknowledged,
/// and a receiver that delays its acknowledgements (Linux does, up to 40 ms, once a connection
/// settles into request and answer) holds that. A new connection hides it for its first
/// segments; a kept one shows it on every answer unless the client acknowledges at once.
#[test]
fn small_writes_from_a_nagle_server_do_not_stall_a_kept_connection() {
    within(Duration::from_secs(30), || {
        let client = HttpClient::new();
        let (base, accepted) = serve("text/event-stream", openai_events("hi"), Ending::Prompt);
        let provider = source("openai", &base, &client);
        let calls = 20u32;
        let started = Instant::now();
        for round in 0..calls {
            let (result, text) = call(&provider);
            result.unwrap_or_else(|e| panic!("call {round}: {e}"));
            assert_eq!(text, "hi");
        }
        let took = started.elapsed();
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
        // Stalled, each call waits about 40 ms; unstalled, well under 1 ms on loopback.
        assert!(
            took < Duration::from_millis(20) * calls,
            "{calls} calls took {took:?}: answers waited for acknowledgements"
        );
    });
}

#[test]
fn a_stream_held_open_after_its_end_marker_costs_a_bounded_wait() {
    within(Duration::from_secs(20), || {
        let client = HttpClient::new();
        let (base, accepted) = serve(
            "text/event-stream",
            openai_events("hello"),
            Ending::HeldOpen,
        );
        let provider = source("openai", &base, &client);
        for round in 0..2 {
            let started = Instant::now();
            let (result, text) = call(&provider);
            result.unwrap_or_else(|e| panic!("call {round}: {e}"));
            assert_eq!(text, "hello");
            let took = started.elapsed();
            assert!(took < Duration::from_secs(1), "call {round} took {took:?}");
        }
        // Neither body reached its end, so neither connection was kept.
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    });
}
