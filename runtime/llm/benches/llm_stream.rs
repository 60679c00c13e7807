//! Per-token cost of the LLM client alone: an OpenAI chunk streamed at 200 tok/s over a real
//! loopback HTTP connection, read by `LuaSource` into its sink, with the native chunk parse
//! and with every chunk through the Lua adapter, against a bare read of the same chunks off a
//! plain socket in the same run. Latency = receipt in the sink − send time carried in the
//! chunk. Allocations per token are counted by a counting global allocator between the first
//! and the last token (the server writes from a stack buffer and allocates nothing).
//!
//! A bench of this crate rather than of `hearth-bench`, so it builds with this crate's
//! dependencies only; it reads the same feed as `token_path` (`bench/src/sse_feed.rs`).

// Shared with `hearth-bench`, whose benches use all of it; this one takes what it needs.
#[allow(dead_code)]
#[path = "../../../bench/src/counting_alloc.rs"]
mod counting_alloc;
#[path = "../../../bench/src/sse_feed.rs"]
mod sse_feed;

use counting_alloc::{Counting, PerToken};

use hearth_engine::CancelToken;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::{ChatProvider, ChatRequest, LuaSource, Message};
use serde_json::Value;
use sse_feed::{bare_feed, stamp, stub_source};
use std::io::{BufRead, BufReader};
use std::sync::Arc;
use std::time::Duration;

const TOKENS: usize = 600;
const PACE: Duration = Duration::from_millis(5);

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Sorted latencies of one run.
struct Samples(Vec<Duration>);

impl Samples {
    fn new(mut samples: Vec<Duration>) -> Self {
        assert!(!samples.is_empty(), "no token arrived");
        samples.sort_unstable();
        Self(samples)
    }

    fn percentile(&self, p: f64) -> Duration {
        let rank = ((p / 100.0) * self.0.len() as f64).ceil() as usize;
        self.0[rank.clamp(1, self.0.len()) - 1]
    }

    fn line(&self) -> String {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        format!(
            "p50 {:>8.1} µs  p99 {:>8.1} µs  (min {:.1} .. max {:.1}, n={})",
            us(self.percentile(50.0)),
            us(self.percentile(99.0)),
            us(self.0[0]),
            us(self.0[self.0.len() - 1]),
            self.0.len()
        )
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
    allocations: PerToken,
}

impl Recorder {
    fn new() -> Self {
        Self {
            samples: Vec::with_capacity(TOKENS),
            allocations: PerToken::default(),
        }
    }

    fn token(&mut self, content: &str) {
        let now = stamp();
        if let Ok(sent) = content.trim().parse::<u64>() {
            self.samples
                .push(Duration::from_nanos(now.saturating_sub(sent)));
            self.allocations.token();
        }
    }

    fn finish(self) -> Run {
        Run {
            allocs_per_token: self.allocations.per_token(),
            samples: Samples::new(self.samples),
        }
    }
}

fn client_path(adapter_source: &str) -> Run {
    let cfg = stub_source(TOKENS, PACE);
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
    let mut reader = BufReader::new(bare_feed(TOKENS, PACE));
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

const TEXT_CHUNK: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" hello"},"finish_reason":null}]}"#;

/// Median over 9 rounds of the mean time of one call of `f`, in ns.
fn per_call_ns(mut f: impl FnMut()) -> f64 {
    const CALLS: u32 = 20_000;
    let mut rounds: Vec<f64> = (0..9)
        .map(|_| {
            let started = std::time::Instant::now();
            for _ in 0..CALLS {
                f();
            }
            started.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[4]
}

/// The parse alone, per chunk: what a faster JSON parser could at most save per token.
fn parse_costs(lua_adapter: &Adapter) {
    use hearth_llm::provider::{
        NativeChunk, parse_openai_chunk, parse_openai_stream_chunk, parse_unified_chunk,
    };
    use std::hint::black_box;
    let typed = per_call_ns(|| {
        assert!(matches!(
            parse_openai_stream_chunk(black_box(TEXT_CHUNK)),
            NativeChunk::Chunk(_)
        ));
    });
    let value = per_call_ns(|| {
        black_box(parse_openai_chunk(black_box(TEXT_CHUNK)).expect("parses"));
    });
    let lua = per_call_ns(|| {
        let unified = lua_adapter
            .transform_stream_chunk(black_box(TEXT_CHUNK))
            .expect("transforms");
        black_box(parse_unified_chunk(&unified).expect("decodes"));
    });
    println!(
        "== one text chunk parsed: typed borrowing parse {typed:.0} ns, serde_json::Value parse {value:.0} ns, Lua transform + decode {lua:.0} ns"
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("llm_stream: bench");
        return;
    }
    stamp();
    let bundled = bundled::source("openai").expect("bundled openai adapter");
    // The same adapter without the native parse: every chunk through the Lua transform.
    let scripted = bundled.replace("stream_parser = \"openai\",", "");
    assert_ne!(
        scripted, bundled,
        "the bundled adapter declares stream_parser"
    );
    parse_costs(&Adapter::load("openai.lua", &scripted).expect("loads"));
    for round in 1..=2 {
        let baseline = bare_socket();
        let native = client_path(bundled);
        let lua = client_path(&scripted);
        let ratio = |run: &Run| {
            run.samples.percentile(50.0).as_secs_f64()
                / baseline.samples.percentile(50.0).as_secs_f64()
        };
        println!("== round {round}: per token at 200 tok/s, received in the sink");
        println!(
            "   native  {}  ratio p50 {:.2}x (goal ≤ 1.5x)",
            native.samples.line(),
            ratio(&native)
        );
        println!(
            "   lua     {}  ratio p50 {:.2}x",
            lua.samples.line(),
            ratio(&lua)
        );
        println!(
            "   bare    {}  [bare read + serde_json parse off a loopback socket]",
            baseline.samples.line()
        );
        println!(
            "   allocations per token: native {:.1}, lua {:.1}, bare {:.1}",
            native.allocs_per_token, lua.allocs_per_token, baseline.allocs_per_token
        );
    }
}
