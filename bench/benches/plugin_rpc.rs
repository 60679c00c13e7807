//! Plugin tool call round trip over the control plane. Budget (DESIGN §5): p50 ≤ 1.5× a bare
//! pipe ping-pong of the same bytes, measured in the same run.
//!
//! - hearth: a `hearth-rpc` peer calls `tool.invoke` on a child process running a
//!   `hearth-plugin` plugin whose tool returns its arguments (JSON decoded, dispatched,
//!   encoded on both sides).
//! - baseline: the same request line to a child that reads a line from its stdin and writes
//!   back the same response line the plugin would (no JSON, one thread per side).
//! - ablation: the hearth side with both ends' read spin off (`read_spin` 0), so every read
//!   sleeps in the kernel as the baseline's do: what the spin buys, in the same run.
//!
//! Each side's CPU per call is printed too (this process's CPU during its batches plus its
//! child's), since a spinning reader trades CPU for latency.
//!
//! Both children are this bench binary re-executed in a child mode, so no other build step is
//! needed. Batches of the two alternate; percentiles come from per-round-trip samples (and the
//! share of answers the calling thread read itself is printed), then
//! criterion times the same batches for its own statistics.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsFd;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

use criterion::Criterion;
use hearth_bench::daemon::{TICKS_PER_SEC, cpu_ticks};
use hearth_bench::line_pipe::LinePingPong;
use hearth_bench::{Samples, report, timed};
use hearth_plugin::{Plugin, Registrar, ToolDef, ToolError, Value, json};
use hearth_rpc::{
    ConnectionConfig, HandlerError, HandshakeParams, Incoming, Message, PROTOCOL_VERSION, Peer,
    Request, Response, Service, connect, methods,
};

const CHILD_MODE: &str = "HEARTH_BENCH_PLUGIN_RPC_CHILD";
const REPLY_LINE: &str = "HEARTH_BENCH_PLUGIN_RPC_REPLY";
const TIMEOUT: Duration = Duration::from_secs(10);
const SETTLE: Duration = Duration::from_millis(30);

struct BenchEcho;

impl Plugin for BenchEcho {
    fn name(&self) -> &str {
        "bench-echo"
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        reg.tool(ToolDef::new("echo", "Returns its arguments."), |_, args| {
            Ok(args)
        })
    }
}

/// The bare child: one line in, the fixed reply line out.
fn pipe_echo() -> ExitCode {
    let reply = std::env::var(REPLY_LINE).expect("reply line in the environment") + "\n";
    let stdin = std::io::stdin();
    let mut input = BufReader::new(stdin.lock());
    let mut out = std::io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
        if out
            .write_all(reply.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::SUCCESS;
        }
    }
}

fn tool_params() -> Value {
    json!({
        "name": "echo",
        "args": {"text": "The quick brown fox jumps over the lazy dog. ".repeat(4), "n": 42},
        "ctx": {"task_id": "task-000001", "caller": "bench", "trust": "kernel", "timeout_ms": 10000},
    })
}

fn line(message: &Message) -> String {
    let mut out = Vec::new();
    message.encode_into(&mut out).expect("encodes");
    String::from_utf8(out).expect("utf-8")
}

fn spawn(mode: &str, reply: &str) -> Child {
    Command::new(std::env::current_exe().expect("bench binary"))
        .env(CHILD_MODE, mode)
        .env(REPLY_LINE, reply)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn bench child")
}

struct NoReverseCalls;

impl Service for NoReverseCalls {
    fn call(&self, request: Incoming) -> Result<Value, HandlerError> {
        // Registrations during start; the bench's tool makes no other call.
        match request.method.as_str() {
            methods::TOOL_REGISTER => Ok(json!({})),
            other => Err(HandlerError::method_not_found(other)),
        }
    }
}

struct RpcSide {
    child: Child,
    peer: Peer,
    params: Value,
}

impl RpcSide {
    /// A plugin child and a peer on it, both reading with `spin` (the default, or none).
    fn start(spin: bool) -> RpcSide {
        let mut child = spawn(if spin { "plugin" } else { "plugin-nospin" }, "");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let config = ConnectionConfig {
            read_spin: if spin {
                hearth_rpc::default_read_spin()
            } else {
                Duration::ZERO
            },
            ..ConnectionConfig::default()
        };
        let peer = connect(stdout, stdin, NoReverseCalls, config);
        let offer = HandshakeParams {
            protocol_versions: vec![PROTOCOL_VERSION],
            kernel_version: "bench".into(),
            plugin_name: "bench-echo".into(),
            data_plane: None,
        };
        hearth_rpc::handshake(&peer, &offer, TIMEOUT).expect("handshake");
        peer.call(methods::PLUGIN_INIT, json!({"name": "bench-echo"}), TIMEOUT)
            .expect("init");
        peer.call(methods::PLUGIN_START, json!({}), TIMEOUT)
            .expect("start");
        RpcSide {
            child,
            peer,
            params: tool_params(),
        }
    }

    fn run(&self, rounds: u64, samples: &mut Vec<Duration>) -> Duration {
        timed(rounds, samples, || {
            let got = self
                .peer
                .call(methods::TOOL_INVOKE, self.params.clone(), TIMEOUT);
            std::hint::black_box(got.expect("tool call"));
        })
    }

    fn stop(mut self) {
        let _ = self.peer.call(methods::PLUGIN_STOP, json!({}), TIMEOUT);
        let _ = self.child.wait();
    }
}

/// The same bytes as the RPC side: its request line out, its response line back.
fn pipe_side() -> LinePingPong {
    let params = tool_params();
    let request = line(&Message::Request(Request {
        id: 1_000,
        method: methods::TOOL_INVOKE.into(),
        params: params.clone(),
    }));
    let reply = line(&Message::Response(Response {
        id: Some(1_000),
        outcome: Ok(json!({"result": params["args"]})),
    }));
    LinePingPong::new(spawn("pipe", &reply), &request)
}

/// This process's CPU time so far (all threads), to the nanosecond.
fn own_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU spent on one side's calls: this process's during its batches, its child's in total
/// (the child only works while its batches run).
#[derive(Default)]
struct Cpu {
    own: Duration,
    calls: u64,
}

impl Cpu {
    /// Runs one batch, adding this process's CPU during it.
    fn batch(&mut self, rounds: u64, run: impl FnOnce()) {
        let before = own_cpu();
        run();
        self.own += own_cpu().saturating_sub(before);
        self.calls += rounds;
    }

    fn per_call_us(&self, child_ticks: u64) -> f64 {
        let child = child_ticks as f64 / TICKS_PER_SEC;
        (self.own.as_secs_f64() + child) * 1e6 / self.calls.max(1) as f64
    }
}

fn serve_without_spin() -> ExitCode {
    let stdin = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .expect("stdin");
    let config = hearth_plugin::ServeConfig {
        read_spin: Duration::ZERO,
        ..hearth_plugin::ServeConfig::default()
    };
    match hearth_plugin::serve(BenchEcho, stdin, std::io::stdout(), config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    match std::env::var(CHILD_MODE).as_deref() {
        Ok("plugin") => return hearth_plugin::run(BenchEcho),
        Ok("plugin-nospin") => return serve_without_spin(),
        Ok("pipe") => return pipe_echo(),
        _ => {}
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` wants a quick smoke run.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (batches, rounds) = if full { (10, 2_000) } else { (2, 200) };

    let rpc = RpcSide::start(true);
    let still = RpcSide::start(false);
    let mut pipe = pipe_side();
    let (mut scratch, mut rpc_samples, mut pipe_samples) = (Vec::new(), Vec::new(), Vec::new());
    let mut still_samples = Vec::new();
    rpc.run(rounds / 4, &mut scratch);
    still.run(rounds / 4, &mut scratch);
    pipe.run(rounds / 4, &mut scratch);
    let children = [rpc.child.id(), still.child.id(), pipe.child_id()];
    let ticks_before = children.map(cpu_ticks);
    let mut cpu: [Cpu; 3] = Default::default();
    for _ in 0..batches {
        cpu[0].batch(rounds, || {
            rpc.run(rounds, &mut rpc_samples);
        });
        std::thread::sleep(SETTLE);
        cpu[1].batch(rounds, || {
            still.run(rounds, &mut still_samples);
        });
        std::thread::sleep(SETTLE);
        cpu[2].batch(rounds, || {
            pipe.run(rounds, &mut pipe_samples);
        });
        std::thread::sleep(SETTLE);
    }
    let ticks: Vec<u64> = children
        .iter()
        .zip(ticks_before)
        .map(|(&pid, before)| cpu_ticks(pid).saturating_sub(before))
        .collect();
    println!(
        "   request {} B, response {} B",
        pipe.request_len(),
        line(&Message::Response(Response {
            id: Some(1_000),
            outcome: Ok(json!({"result": tool_params()["args"]})),
        }))
        .len()
            + 1
    );
    let stats = rpc.peer.stats();
    println!(
        "   answers read by their own caller: {} of {} frames in",
        stats.own_answers, stats.frames_in
    );
    report(
        "plugin tool call round trip over stdio pipes (kernel → plugin → kernel)",
        &Samples::new(rpc_samples),
        "bare pipe ping-pong of the same request and response lines",
        &Samples::new(pipe_samples.clone()),
        Some(1.5),
    );
    report(
        "same, both ends' read spin off (every read sleeps, as the baseline's do)",
        &Samples::new(still_samples),
        "bare pipe ping-pong, same runs",
        &Samples::new(pipe_samples),
        None,
    );
    println!(
        "   CPU per call, both processes: hearth {:.1} µs, spin off {:.1} µs, bare pipe {:.1} µs",
        cpu[0].per_call_us(ticks[0]),
        cpu[1].per_call_us(ticks[1]),
        cpu[2].per_call_us(ticks[2]),
    );

    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion.bench_function("plugin_rpc/tool_call_round_trip", |b| {
        b.iter_custom(|iters| rpc.run(iters, &mut Vec::new()))
    });
    std::thread::sleep(SETTLE);
    criterion.bench_function("plugin_rpc/bare_pipe_round_trip", |b| {
        b.iter_custom(|iters| pipe.run(iters, &mut Vec::new()))
    });
    criterion.final_summary();
    rpc.stop();
    still.stop();
    pipe.stop();
    ExitCode::SUCCESS
}
