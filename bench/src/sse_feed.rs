//! The paced SSE feed the per-token benches read: OpenAI chunks whose content is their send
//! time, written from a stack buffer so the feed allocates nothing (benches count allocations),
//! served over real loopback HTTP or a bare socket.

use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Nanoseconds since the process's first call; the clock send and receipt times share.
pub fn stamp() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// Streams `tokens` chunks `pace` apart (spinning, not sleeping, for an exact pace), then a
/// finish chunk and `[DONE]`; with `sse_head`, an HTTP response head first.
pub fn stream_tokens(out: &mut TcpStream, sse_head: bool, tokens: usize, pace: Duration) {
    epoch();
    if sse_head {
        let _ = out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
        );
    }
    let mut buf = [0u8; 512];
    for _ in 0..tokens {
        let spin_until = Instant::now() + pace;
        while Instant::now() < spin_until {
            std::hint::spin_loop();
        }
        let mut cursor = Cursor::new(&mut buf[..]);
        let _ = write!(
            cursor,
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{} \"}},\"finish_reason\":null}}]}}\n\n",
            stamp()
        );
        let n = cursor.position() as usize;
        if out.write_all(&buf[..n]).is_err() {
            return;
        }
    }
    let _ = out.write_all(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
    );
}

/// Answers every HTTP request on `listener` with the feed.
pub fn serve_sse(listener: TcpListener, tokens: usize, pace: Duration) {
    serve_sse_planned(listener, move || (tokens, pace));
}

/// Answers every HTTP request on `listener` with a feed of the `(tokens, pace)` that `plan`
/// gives when the request arrives (one stub serving a bench's short and long answers).
pub fn serve_sse_planned(listener: TcpListener, plan: impl Fn() -> (usize, Duration)) {
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        let _ = reader.read_exact(&mut body);
        let (tokens, pace) = plan();
        stream_tokens(&mut stream, true, tokens, pace);
    }
}

/// A stub on a fresh loopback port answering every request with `tokens` paced `pace` apart,
/// and the OpenAI-compatible source that reaches it (the benches' one way to aim a real
/// `LuaSource` at the feed).
pub fn stub_source(tokens: usize, pace: Duration) -> hearth_llm::provider::SourceConfig {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || serve_sse(listener, tokens, pace));
    hearth_llm::provider::SourceConfig {
        name: "bench".into(),
        base_url,
        model: "m".into(),
        adapter: "openai".into(),
        ..Default::default()
    }
}

/// A plain socket already receiving the feed (no HTTP): the baseline the benches compare to.
pub fn bare_feed(tokens: usize, pace: Duration) -> TcpStream {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            stream_tokens(&mut stream, false, tokens, pace);
        }
    });
    TcpStream::connect(addr).expect("connect")
}
