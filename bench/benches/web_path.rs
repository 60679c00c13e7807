//! The web channel against a real `hearthd` with its bundled web plugin, every row beside a
//! same-run baseline: first byte of a streamed answer through the page's wire path (`POST
//! /api/chat`, then its SSE) vs the CLI socket, on the same loopback stub model; per-token
//! latency ring → web SSE client vs ring → CLI socket client (each chunk carries its send
//! time); RSS of the web process idle and with 100 SSE clients on one answer; the bytes of a
//! first page load; and, when `make setup` installed Chromium and playwright-core, first byte
//! measured inside the browser (fetch + EventSource) beside the CLI's.

use hearth_bench::daemon::{child_named, hearthd_binary, proc_status_kb, start_with_plugins};
use hearth_bench::sse_feed::{serve_sse_planned, stamp};
use hearth_bench::web_client::WebClient;
use hearth_bench::{Samples, report};
use hearth_runtime::socket::{Answer, Client, Request};
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "hk-bench-key-0123456789";
const PASSWORD: &str = "a long bench password";
const FIRST_BYTE_ROUNDS: usize = 20;
const TOKENS: usize = 300;
const PACE: Duration = Duration::from_millis(5);
const CLIENTS: usize = 100;
/// The answer the 100 clients follow: long enough that all of them join while it streams.
const HELD_TOKENS: usize = 200;
const HELD_PACE: Duration = Duration::from_millis(25);

/// The send stamps carried by a delta's content (deltas may be coalesced: each stamp counts).
fn stamps(content: &str, now: u64, into: &mut Vec<Duration>) {
    for sent in content
        .split_whitespace()
        .filter_map(|t| t.parse::<u64>().ok())
    {
        into.push(Duration::from_nanos(now.saturating_sub(sent)));
    }
}

/// One answer over the CLI socket: (time to its first delta, per-token latencies).
fn cli_turn(socket: &Path, text: &str) -> (Duration, Vec<Duration>) {
    let mut client = Client::connect(socket, None).expect("CLI client");
    let (mut first, mut lat) = (None, Vec::new());
    let t0 = Instant::now();
    let answer = client
        .request(&Request::send(text), |delta| {
            let now = stamp();
            if let Answer::Delta { content, .. } = delta {
                first.get_or_insert_with(|| t0.elapsed());
                stamps(content, now, &mut lat);
            }
        })
        .expect("request");
    assert!(matches!(answer, Answer::Response { .. }), "{answer:?}");
    (first.expect("a streamed delta"), lat)
}

/// One answer through the page's API: (time to its first SSE delta, per-token latencies).
fn web_turn(web: &WebClient, text: &str) -> (Duration, Vec<Duration>) {
    let t0 = Instant::now();
    let id = web.chat(text);
    let mut events = web.events(&id);
    let (mut first, mut lat) = (None, Vec::new());
    while let Some((kind, data)) = events.next_event() {
        let now = stamp();
        match kind.as_str() {
            "delta" => {
                first.get_or_insert_with(|| t0.elapsed());
                stamps(data["content"].as_str().unwrap_or_default(), now, &mut lat);
            }
            "done" => break,
            _ => {}
        }
    }
    (first.expect("a streamed delta"), lat)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median and range of `v` in ms.
fn median_range(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    format!(
        "median {:.2} ms (min {:.2} .. max {:.2}, n={})",
        v[v.len() / 2],
        v[0],
        v[v.len() - 1],
        v.len()
    )
}

fn rss_mb(pid: u32) -> f64 {
    proc_status_kb(pid, "VmRSS:").expect("the web process runs") as f64 / 1024.0
}

/// The bytes a first load of the page transfers: the page and every asset it links.
fn page_weight(web: &WebClient) -> (usize, Vec<(String, usize)>) {
    let index = web.get_raw("/");
    let html = String::from_utf8_lossy(&index).into_owned();
    let mut parts = vec![("/".to_owned(), index.len())];
    for attr in ["src=\"", "href=\""] {
        for piece in html.split(attr).skip(1) {
            let path = piece.split('"').next().unwrap_or_default();
            if path.starts_with("/assets/") {
                let raw = web.get_raw(path);
                assert!(raw.starts_with(b"HTTP/1.1 200"), "{path} is served");
                parts.push((path.to_owned(), raw.len()));
            }
        }
    }
    (parts.iter().map(|(_, n)| n).sum(), parts)
}

/// First byte inside headless Chromium, when `make setup` installed it and playwright-core.
fn browser_first_byte(port: u16) -> Option<Vec<f64>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/web");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !dir.join("node_modules/playwright-core").exists() || !Path::new(&chromium).exists() {
        println!(
            "   (no headless Chromium here — `make setup` installs it; the HTTP SSE client above \
             is the browser's wire path)"
        );
        return None;
    }
    let out = Command::new("node")
        .arg(dir.join("first_byte.mjs"))
        .arg(format!("http://127.0.0.1:{port}/"))
        .arg(PASSWORD)
        .arg(FIRST_BYTE_ROUNDS.to_string())
        .current_dir(&dir)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "first_byte.mjs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    Some(serde_json::from_value(v["first_byte_ms"].clone()).expect("first_byte_ms"))
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("web_path: bench");
        return;
    }
    let bin = hearthd_binary();
    let web_bin = bin.with_file_name("hearth-web");
    assert!(
        web_bin.exists(),
        "{} missing: build hearth-plugin-web in the same profile (make bench does)",
        web_bin.display()
    );
    let plan = Arc::new(Mutex::new((3usize, Duration::ZERO)));
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base_url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let plan2 = Arc::clone(&plan);
    std::thread::spawn(move || serve_sse_planned(listener, move || *plan2.lock().unwrap()));
    let set_plan = |tokens, pace| *plan.lock().unwrap() = (tokens, pace);

    let dir = hearth_testkit::fresh_dir("bench-web-path");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    {
        let settings = hearth_settings::Settings::open(&dir).expect("settings");
        settings
            .set("plugin.web.bind", json!(format!("127.0.0.1:{port}")))
            .expect("bind");
        settings
            .set("plugin.web.password", json!(PASSWORD))
            .expect("password");
        settings.set("plugin.web.api_key", json!(KEY)).expect("key");
    }
    let mut daemon = start_with_plugins(&bin, &dir, &base_url, false, true, "error");
    let web = WebClient::new(port, KEY);
    web.wait_up(Duration::from_secs(60));
    let socket = dir.join("hearth.sock");
    println!(
        "   hearthd {} (its profile is the bench's: a debug build gives debug numbers)",
        bin.display()
    );

    // First byte: a three-token answer with no pacing, the two paths interleaved.
    set_plan(3, Duration::ZERO);
    cli_turn(&socket, "warm up");
    web_turn(&web, "warm up");
    let (mut cli_first, mut web_first) = (Vec::new(), Vec::new());
    for round in 0..FIRST_BYTE_ROUNDS {
        cli_first.push(cli_turn(&socket, &format!("cli {round}")).0);
        web_first.push(web_turn(&web, &format!("web {round}")).0);
    }
    let cli_first = Samples::new(cli_first);
    report(
        "first byte of a streamed answer: page API (POST /api/chat → its SSE) on a raw HTTP client",
        &Samples::new(web_first),
        "CLI socket: send → first delta",
        &cli_first,
        None,
    );

    // Per token: each chunk's send time at the stub to its receipt by the client.
    set_plan(TOKENS, PACE);
    let (_, cli_lat) = cli_turn(&socket, "stream to the CLI");
    let (_, web_lat) = web_turn(&web, "stream to the page");
    report(
        &format!(
            "per token ({TOKENS} at {} ms): stub → ring → web SSE client",
            PACE.as_millis()
        ),
        &Samples::new(web_lat),
        "stub → ring → CLI socket client",
        &Samples::new(cli_lat),
        None,
    );

    // RSS of the web process: idle, then with 100 SSE clients following one answer.
    let web_pid = child_named(daemon.id(), "hearth-web").expect("the web plugin's process");
    std::thread::sleep(Duration::from_secs(2));
    let idle = rss_mb(web_pid);
    set_plan(HELD_TOKENS, HELD_PACE);
    let id = web.chat("hold the line");
    let mut streams: Vec<_> = (0..CLIENTS).map(|_| web.events(&id)).collect();
    for s in &mut streams {
        while s.next_event().is_some_and(|(kind, _)| kind != "delta") {}
    }
    let held = rss_mb(web_pid);
    let peak = proc_status_kb(web_pid, "VmHWM:").unwrap_or(0) as f64 / 1024.0;
    let mut complete = 0;
    for s in &mut streams {
        let mut tokens = 1;
        while let Some((kind, data)) = s.next_event() {
            if kind == "delta" {
                tokens += data["content"]
                    .as_str()
                    .unwrap_or_default()
                    .split_whitespace()
                    .count();
            }
        }
        complete += usize::from(tokens >= HELD_TOKENS);
    }
    drop(streams);
    println!("== RSS of the web process (hearth-web)");
    println!("   idle                         {idle:.1} MB");
    println!(
        "   {CLIENTS} SSE clients on one answer {held:.1} MB (+{:.1} MB; peak {peak:.1} MB); \
         {complete}/{CLIENTS} got the whole answer",
        held - idle
    );

    let (bytes, parts) = page_weight(&web);
    println!("== page weight, first load (uncompressed, heads included)");
    println!("   {bytes} bytes: {parts:?}");

    set_plan(3, Duration::ZERO);
    if let Some(mut browser) = browser_first_byte(port) {
        let mut cli: Vec<f64> = (0..FIRST_BYTE_ROUNDS)
            .map(|round| ms(cli_turn(&socket, &format!("cli again {round}")).0))
            .collect();
        println!("== first byte in headless Chromium (fetch POST /api/chat → EventSource delta)");
        println!("   chromium  {}", median_range(&mut browser));
        println!(
            "   baseline  {}   [CLI socket, same run]",
            median_range(&mut cli)
        );
    }

    let _ = Command::new("kill")
        .args(["-TERM", &daemon.id().to_string()])
        .status();
    let _ = daemon.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
