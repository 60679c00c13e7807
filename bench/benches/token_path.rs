//! Per-token overhead of the whole streaming path: an SSE chunk read off a real loopback HTTP
//! connection → the Lua adapter → the provider thread → the event ring → the daemon's Unix
//! socket → a CLI-protocol client, against a bare read of the same chunks off a plain socket in
//! the same run. Each chunk carries its send time; latency = receipt − send. The two paths take
//! turns, [`ROUNDS`] answers each in alternating order, so a shift in the machine's load lands
//! on both alike.

use hearth_bench::counting_alloc::{Counting, PerToken, PerTokenRounds};
use hearth_bench::sse_feed::{bare_feed, stamp, stub_source};
use hearth_bench::{Samples, report};
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_kernel::ingress::KernelHandle;
use hearth_llm::adapter::{Adapter, bundled};
use hearth_llm::http::HttpClient;
use hearth_llm::provider::LuaSource;
use hearth_llm::provider::SourceConfig;
use hearth_runtime::config::SocketLimits;
use hearth_runtime::socket::{Answer, Client, Control, ControlError, Request, SocketServer};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

/// Tokens per path over the whole run.
const TOKENS: usize = 600;
/// Answers per path; the paths alternate, each round in the other order.
const ROUNDS: usize = 10;
const PACE: Duration = Duration::from_millis(5);

#[global_allocator]
static GLOBAL: Counting = Counting;

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

/// A kernel with its socket server and a connected client, streaming from an SSE stub.
struct HearthPath {
    kernel: hearth_kernel::graph::Kernel,
    server: SocketServer,
    client: Client,
    socket_dir: std::path::PathBuf,
}

impl HearthPath {
    fn start() -> Self {
        let cfg = stub_source(TOKENS / ROUNDS, PACE);
        let adapter = Arc::new(
            Adapter::load("openai.lua", bundled::source("openai").expect("bundled"))
                .expect("loads"),
        );
        let provider = Arc::new(LuaSource::new(cfg, adapter, HttpClient::new()));
        let kernel = graph::build(GraphConfig::unpinned(2), provider, Registries::default())
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
        let client = Client::connect(&socket_path, None).expect("client");
        Self {
            kernel,
            server,
            client,
            socket_dir,
        }
    }

    /// Streamed answer `n` (each asks something else: the kernel skips a repeated input);
    /// each token's latency joins `samples`.
    fn round(&mut self, n: usize, samples: &mut Vec<Duration>) -> PerToken {
        let mut counted = PerToken::default();
        let answer = self
            .client
            .request(&Request::send(format!("stream {n}")), |delta| {
                let now = stamp();
                if let Answer::Delta { content, .. } = delta
                    && let Ok(sent) = content.trim().parse::<u64>()
                {
                    samples.push(Duration::from_nanos(now.saturating_sub(sent)));
                    counted.token();
                }
            })
            .expect("request");
        assert!(matches!(answer, Answer::Response { .. }), "{answer:?}");
        counted
    }

    fn stop(self) {
        drop(self.client);
        self.server.finish(Duration::from_secs(1));
        let _ = std::fs::remove_dir_all(&self.socket_dir);
        self.kernel.shutdown();
    }
}

/// One answer read bare off a plain socket; each token's latency joins `samples`.
fn bare_round(samples: &mut Vec<Duration>) -> PerToken {
    let mut reader = BufReader::new(bare_feed(TOKENS / ROUNDS, PACE));
    let mut counted = PerToken::default();
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
            counted.token();
        }
        line.clear();
    }
    counted
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("token_path: bench");
        return;
    }
    stamp();
    let mut hearth = HearthPath::start();
    let (mut hearth_samples, mut bare_samples) = (Vec::new(), Vec::new());
    let (mut hearth_allocs, mut bare_allocs) =
        (PerTokenRounds::default(), PerTokenRounds::default());
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            bare_allocs.add(&bare_round(&mut bare_samples));
            hearth_allocs.add(&hearth.round(round, &mut hearth_samples));
        } else {
            hearth_allocs.add(&hearth.round(round, &mut hearth_samples));
            bare_allocs.add(&bare_round(&mut bare_samples));
        }
    }
    hearth.stop();
    let (hearth_allocations, bare_allocations) =
        (hearth_allocs.per_token(), bare_allocs.per_token());
    let (hearth, baseline) = (Samples::new(hearth_samples), Samples::new(bare_samples));
    println!(
        "allocations per token: hearth path {hearth_allocations:.1} (adapter, ring, socket and the CLI client's parse); bare read + serde_json::Value parse {bare_allocations:.1}"
    );
    report(
        "per token: SSE read → Lua adapter → ring → socket client",
        &hearth,
        "bare read of the same SSE chunk off a loopback socket",
        &baseline,
        None,
    );
}
