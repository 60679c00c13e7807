//! Per-token cost of the LLM client alone: an OpenAI chunk streamed at 200 tok/s over a real
//! loopback HTTP connection, read by `LuaSource` into its sink, with the native chunk parse
//! and with every chunk through the Lua adapter, against a bare read of the same chunks off a
//! plain socket in the same run. Latency = receipt in the sink − send time carried in the
//! chunk. Allocations per token are counted by a counting global allocator between the first
//! and the last token (the server writes from a stack buffer and allocates nothing).

use hearth_bench::{Samples, report};
use hearth_engine::CancelToken;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::{ChatProvider, ChatRequest, LuaSource, Message, SourceConfig};
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const TOKENS: usize = 600;
const PACE: Duration = Duration::from_millis(5);

/// Counts every allocation of the process.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: defers to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn stamp() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// Streams `TOKENS` chunks whose content is the send time in ns, written from a stack buffer.
fn stream_tokens(out: &mut TcpStream, sse_head: bool) {
    if sse_head {
        let _ = out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
        );
    }
    let mut buf = [0u8; 512];
    for _ in 0..TOKENS {
        let spin_until = Instant::now() + PACE;
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

fn serve_sse(listener: TcpListener) {
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
        stream_tokens(&mut stream, true);
    }
}

/// Latencies and allocations per token of one run.
struct Run {
    samples: Samples,
    allocs_per_token: f64,
}

/// Collects a latency per token and the allocation count between the first and last token.
struct Recorder {
    samples: Vec<Duration>,
    first: Option<u64>,
    last: u64,
}

impl Recorder {
    fn new() -> Self {
        Self {
            samples: Vec::with_capacity(TOKENS),
            first: None,
            last: 0,
        }
    }

    fn token(&mut self, content: &str) {
        let now = stamp();
        if let Ok(sent) = content.trim().parse::<u64>() {
            self.samples
                .push(Duration::from_nanos(now.saturating_sub(sent)));
            let count = ALLOCATIONS.load(Relaxed);
            self.first.get_or_insert(count);
            self.last = count;
        }
    }

    fn finish(self) -> Run {
        let tokens = self.samples.len().saturating_sub(1).max(1) as f64;
        let allocs = self.last - self.first.unwrap_or(self.last);
        Run {
            allocs_per_token: allocs as f64 / tokens,
            samples: Samples::new(self.samples),
        }
    }
}

fn client_path(adapter_source: &str) -> Run {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || serve_sse(listener));
    let cfg = SourceConfig {
        name: "bench".into(),
        base_url,
        model: "m".into(),
        adapter: "openai".into(),
        ..SourceConfig::default()
    };
    let adapter = Arc::new(Adapter::load("openai.lua", adapter_source).expect("loads"));
    let source = LuaSource::new(cfg, adapter, HttpClient::new());
    let mut recorder = Recorder::new();
    let request = ChatRequest::new(vec![Message::user("stream")], Vec::new());
    source
        .chat_stream(&request, &CancelToken::new(), &mut |chunk| {
            recorder.token(&chunk.content)
        })
        .expect("stream");
    recorder.finish()
}

fn bare_socket() -> Run {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            stream_tokens(&mut stream, false);
        }
    });
    let stream = TcpStream::connect(addr).expect("connect");
    let mut reader = BufReader::new(stream);
    let mut recorder = Recorder::new();
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        if let Some(data) = line.trim().strip_prefix("data: ")
            && let Ok(v) = serde_json::from_str::<Value>(data)
            && let Some(content) = v["choices"][0]["delta"]["content"].as_str()
        {
            recorder.token(content);
        }
        line.clear();
    }
    recorder.finish()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("llm_stream: bench");
        return;
    }
    epoch();
    let bundled = bundled::source("openai").expect("bundled openai adapter");
    // The same adapter without the native parse: every chunk through the Lua transform.
    let scripted = bundled.replace("stream_parser = \"openai\",", "");
    assert_ne!(
        scripted, bundled,
        "the bundled adapter declares stream_parser"
    );
    for round in 1..=2 {
        let baseline = bare_socket();
        let native = client_path(bundled);
        let lua = client_path(&scripted);
        let bare = "bare read + serde_json parse of the same SSE chunk off a loopback socket";
        report(
            &format!("round {round}: per token, HTTP/SSE → native OpenAI parse → sink"),
            &native.samples,
            bare,
            &baseline.samples,
            Some(1.5),
        );
        report(
            &format!("round {round}: per token, HTTP/SSE → Lua adapter thread → sink"),
            &lua.samples,
            bare,
            &baseline.samples,
            None,
        );
        println!(
            "   allocations per token: native {:.1}, lua {:.1}, bare {:.1}",
            native.allocs_per_token, lua.allocs_per_token, baseline.allocs_per_token
        );
    }
}
