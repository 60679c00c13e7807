//! One short streamed chat call (the bundled OpenAI adapter, three events) against a loopback
//! server that frames answers as chunked bodies, on a connection kept from the previous call,
//! beside the same call on a new connection each time (the same server answering with
//! `Connection: close`), measured in the same run. Loopback makes the saved handshake as cheap
//! as it ever gets: to a remote API the new connection also costs a round trip or two and a
//! TLS handshake, which this bench does not include.

use hearth_bench::{Samples, report, timed};
use hearth_engine::CancelToken;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::{
    ChatProvider, ChatRequest, LuaSource, Message, SourceConfig, StreamChunk,
};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(30);

const EVENTS: [&str; 3] = [
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hello there\"},\"finish_reason\":null}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    "data: [DONE]\n\n",
];

/// Serves every request on a connection until the client closes it, or answers once and closes
/// when `close` is set; returns the base URL.
fn serve(close: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || answer(stream, close));
        }
    });
    base
}

fn answer(mut stream: TcpStream, close: bool) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let connection = if close { "Connection: close\r\n" } else { "" };
    let mut out = Vec::new();
    while read_request(&mut reader) {
        out.clear();
        write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{connection}\
             Transfer-Encoding: chunked\r\n\r\n"
        )
        .expect("head");
        for event in EVENTS {
            write!(out, "{:x}\r\n{event}\r\n", event.len()).expect("chunk");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        if stream.write_all(&out).is_err() || close {
            return;
        }
    }
}

/// Reads one request; `false` once the client closed the connection.
fn read_request(reader: &mut BufReader<TcpStream>) -> bool {
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) if line.trim().is_empty() => break,
            Ok(_) => {}
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).is_ok()
}

fn source(base_url: &str) -> LuaSource {
    let cfg = SourceConfig {
        name: "bench".into(),
        base_url: base_url.into(),
        model: "m".into(),
        adapter: "openai".into(),
        ..SourceConfig::default()
    };
    cfg.validate().expect("valid source");
    let lua = Adapter::load("openai.lua", bundled::source("openai").expect("bundled"))
        .expect("adapter loads");
    LuaSource::new(cfg, Arc::new(lua), HttpClient::new())
}

fn run(provider: &LuaSource, rounds: u64, samples: &mut Vec<Duration>) {
    let request = ChatRequest::new(vec![Message::user("hi")], Vec::new());
    let cancel = CancelToken::new();
    timed(rounds, samples, || {
        let mut chars = 0;
        provider
            .chat_stream(&request, &cancel, &mut |c: StreamChunk| {
                chars += c.content.len()
            })
            .expect("call");
        assert_eq!(chars, "hello there".len());
    });
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (batches, rounds) = if full { (10, 500) } else { (2, 20) };
    let kept = source(&serve(false));
    let fresh = source(&serve(true));
    let (mut scratch, mut kept_samples, mut fresh_samples) = (Vec::new(), Vec::new(), Vec::new());
    run(&kept, rounds / 4, &mut scratch);
    run(&fresh, rounds / 4, &mut scratch);
    for _ in 0..batches {
        run(&kept, rounds, &mut kept_samples);
        std::thread::sleep(SETTLE);
        run(&fresh, rounds, &mut fresh_samples);
        std::thread::sleep(SETTLE);
    }
    report(
        "streamed chat call on a kept connection (loopback, chunked answer, OpenAI adapter)",
        &Samples::new(kept_samples),
        "the same call on a new connection each time",
        &Samples::new(fresh_samples),
        None,
    );
}
