//! MCP tool call round trip over stdio, beside a bare stdio ping-pong measured in the same run.
//!
//! - hearth: `ToolRegistry::execute` of an MCP tool (the kernel's path): `hearth-mcp` frames a
//!   `tools/call` with a progress token, the scripted Node server (no SDK) parses it and answers
//!   a `CallToolResult`, the client routes and maps it to a tool result.
//! - baseline: the same request line to a Node child that answers every line with the same
//!   response line, unparsed: the cost of the pipes, Node's line reader and the process hops.
//! - also, when `make setup` installed it: the same call to `server-everything`'s `echo` (the
//!   official TypeScript SDK with schema validation), for scale.

use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use hearth_bench::line_pipe::LinePingPong;
use hearth_bench::{Samples, report, timed};
use hearth_mcp::{McpServer, McpServerConfig};
use hearth_stages::{CallContext, ToolRegistry};
use serde_json::{Value, json};

const SETTLE: Duration = Duration::from_millis(30);

fn servers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp")
}

fn script() -> String {
    servers_dir()
        .join("scripted-server.mjs")
        .to_string_lossy()
        .into_owned()
}

fn args() -> Value {
    json!({"text": "The quick brown fox jumps over the lazy dog. ".repeat(4), "n": 42})
}

struct McpSide {
    tools: Arc<ToolRegistry>,
    server: McpServer,
    child: Child,
    tool: String,
    args: Value,
}

impl McpSide {
    fn start(cfg: McpServerConfig, tool: &str, args: Value) -> McpSide {
        let tools = Arc::new(ToolRegistry::new());
        let server = McpServer::new(cfg, Arc::clone(&tools)).expect("a valid entry");
        // Outside the supervisor, as `hearth mcp test` runs it: the bench measures the calls.
        let mut child = server
            .command()
            .expect("stdio")
            .spawn()
            .expect("node starts");
        server.attach(&mut child).expect("connects");
        McpSide {
            tools,
            server,
            child,
            tool: tool.to_owned(),
            args,
        }
    }

    fn run(&self, rounds: u64, samples: &mut Vec<Duration>) -> Duration {
        let call = CallContext::kernel(Duration::from_secs(10));
        timed(rounds, samples, || {
            let got = self.tools.execute(&call, &self.tool, &self.args);
            std::hint::black_box(got.expect("tool call"));
        })
    }

    fn stop(mut self) {
        self.server.disconnect("bench done");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The same request and response lines as the MCP side, with a Node child that answers every
/// line with the response unparsed.
fn pipe_side() -> LinePingPong {
    let request = json!({"jsonrpc": "2.0", "id": 1000, "method": "tools/call",
        "params": {"name": "echo", "arguments": args(), "_meta": {"progressToken": 1000}}});
    let text = serde_json::to_string(&args()).expect("json");
    let reply = json!({"jsonrpc": "2.0", "id": 1000,
        "result": {"content": [{"type": "text", "text": text}]}});
    let child = Command::new("node")
        .args([&script(), "pingpong"])
        .env("REPLY_LINE", reply.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node starts");
    LinePingPong::new(child, &request.to_string())
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench`; `cargo test --benches` wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (batches, rounds) = if full { (10, 1_000) } else { (2, 100) };

    let mcp = McpSide::start(
        McpServerConfig::stdio("sc", "node", &[&script(), "echo"]),
        "sc_echo",
        args(),
    );
    let mut pipe = pipe_side();
    let (mut scratch, mut mcp_samples, mut pipe_samples) = (Vec::new(), Vec::new(), Vec::new());
    mcp.run(rounds / 4, &mut scratch);
    pipe.run(rounds / 4, &mut scratch);
    for _ in 0..batches {
        mcp.run(rounds, &mut mcp_samples);
        std::thread::sleep(SETTLE);
        pipe.run(rounds, &mut pipe_samples);
        std::thread::sleep(SETTLE);
    }
    report(
        "MCP tool call round trip over stdio (registry → hearth-mcp → Node server → tool result)",
        &Samples::new(mcp_samples),
        "bare stdio ping-pong of the same lines with a Node child",
        &Samples::new(pipe_samples),
        // No budget: the baseline does not parse JSON, the server does.
        None,
    );

    let everything =
        servers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if everything.exists() {
        let ev = McpSide::start(
            McpServerConfig::stdio("ev", "node", &[&everything.to_string_lossy(), "stdio"]),
            "ev_echo",
            json!({"message": args()["text"]}),
        );
        let mut samples = Vec::new();
        ev.run(rounds / 4, &mut scratch);
        for _ in 0..batches {
            ev.run(rounds, &mut samples);
        }
        println!(
            "   server-everything echo (TypeScript SDK)  {}",
            Samples::new(samples).line()
        );
        ev.stop();
    } else {
        println!("   server-everything is not installed (make setup); its row is skipped");
    }

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion.bench_function("mcp/tool_call_round_trip", |b| {
        b.iter_custom(|iters| mcp.run(iters, &mut Vec::new()))
    });
    std::thread::sleep(SETTLE);
    criterion.bench_function("mcp/bare_stdio_round_trip", |b| {
        b.iter_custom(|iters| pipe.run(iters, &mut Vec::new()))
    });
    criterion.final_summary();
    mcp.stop();
    pipe.stop();
    ExitCode::SUCCESS
}
