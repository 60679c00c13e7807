//! Per-token overhead of the whole streaming path: an SSE chunk read off a real loopback HTTP
//! connection → the Lua adapter → the provider thread → the event ring → the daemon's Unix
//! socket → a CLI-protocol client, against a bare read of the same chunks off a plain socket in
//! the same run. Each chunk carries its send time; latency = receipt − send.

use hearth_bench::{Samples, report};
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_kernel::ingress::KernelHandle;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::LuaSource;
use hearth_llm::provider::SourceConfig;
use hearth_runtime::config::SocketLimits;
use hearth_runtime::socket::{Answer, Client, Control, ControlError, Request, SocketServer};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const TOKENS: usize = 600;
const PACE: Duration = Duration::from_millis(5);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn stamp() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// Streams `TOKENS` chunks whose content is the send time in ns.
fn stream_tokens(out: &mut TcpStream, sse_head: bool) {
    if sse_head {
        let _ = write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        );
    }
    for _ in 0..TOKENS {
        let spin_until = Instant::now() + PACE;
        while Instant::now() < spin_until {
            std::hint::spin_loop();
        }
        let chunk = json!({"choices": [{"index": 0, "delta": {"content": format!("{} ", stamp())}, "finish_reason": null}]});
        let _ = write!(out, "data: {chunk}\n\n");
        let _ = out.flush();
    }
    let _ = write!(
        out,
        "data: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
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

struct BenchControl(KernelHandle);

impl Control for BenchControl {
    fn kernel(&self) -> &KernelHandle {
        &self.0
    }
    fn status(&self) -> Value {
        Value::Null
    }
    fn sources(&self) -> Value {
        Value::Null
    }
    fn add_source(&self, _: SourceConfig) -> Result<String, ControlError> {
        Err(ControlError::Invalid("not here".into()))
    }
    fn remove_source(&self, _: &str) -> Result<String, ControlError> {
        Err(ControlError::Invalid("not here".into()))
    }
    fn test_source(&self, _: &str) -> Result<String, ControlError> {
        Err(ControlError::Invalid("not here".into()))
    }
    fn plugin(&self, _: &str, _: Option<&str>) -> Result<Value, ControlError> {
        Err(ControlError::Invalid("not here".into()))
    }
}

fn hearth_path() -> Samples {
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
    let adapter = Arc::new(
        Adapter::load("openai.lua", bundled::source("openai").expect("bundled")).expect("loads"),
    );
    let provider = Arc::new(LuaSource::new(cfg, adapter, HttpClient::new()));
    let kernel = graph::build(
        GraphConfig {
            workers: Some(2),
            pin: false,
            ..GraphConfig::default()
        },
        provider,
        Registries::default(),
    )
    .expect("kernel");
    let socket_dir = std::env::temp_dir().join(format!("hearth-bench-{}", std::process::id()));
    std::fs::create_dir_all(&socket_dir).expect("socket dir");
    std::fs::set_permissions(&socket_dir, std::fs::Permissions::from_mode(0o700))
        .expect("private socket dir");
    let socket_path = socket_dir.join("hearth.sock");
    let server = SocketServer::bind(
        &socket_path,
        &socket_dir,
        None,
        SocketLimits::default(),
        Arc::new(BenchControl(kernel.handle())),
    )
    .expect("socket");
    let mut client = Client::connect(&socket_path, None).expect("client");
    let mut samples = Vec::with_capacity(TOKENS);
    let answer = client
        .request(&Request::send("stream"), |delta| {
            let now = stamp();
            if let Answer::Delta { content, .. } = delta
                && let Ok(sent) = content.trim().parse::<u64>()
            {
                samples.push(Duration::from_nanos(now.saturating_sub(sent)));
            }
        })
        .expect("request");
    assert!(matches!(answer, Answer::Response { .. }), "{answer:?}");
    server.finish(Duration::from_secs(1));
    let _ = std::fs::remove_dir_all(&socket_dir);
    kernel.shutdown();
    Samples::new(samples)
}

fn bare_socket() -> Samples {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            stream_tokens(&mut stream, false);
        }
    });
    let stream = TcpStream::connect(addr).expect("connect");
    let mut reader = BufReader::new(stream);
    let mut samples = Vec::with_capacity(TOKENS);
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        let now = stamp();
        if let Some(data) = line.trim().strip_prefix("data: ")
            && let Ok(v) = serde_json::from_str::<Value>(data)
            && let Some(sent) = v["choices"][0]["delta"]["content"]
                .as_str()
                .and_then(|c| c.trim().parse::<u64>().ok())
        {
            samples.push(Duration::from_nanos(now.saturating_sub(sent)));
        }
        line.clear();
    }
    Samples::new(samples)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("token_path: bench");
        return;
    }
    epoch();
    let baseline = bare_socket();
    let hearth = hearth_path();
    report(
        "per token: SSE read → Lua adapter → ring → socket client",
        &hearth,
        "bare read of the same SSE chunk off a loopback socket",
        &baseline,
        None,
    );
}
