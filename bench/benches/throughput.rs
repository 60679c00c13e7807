//! Turns per second under concurrency: a real `hearthd` child, the embedding model off, a
//! loopback OpenAI-compatible server that answers at once as its only source, and 1, 10 and 50
//! clients each sending `send` requests over the Unix socket until a fixed total. Beside it, in
//! the same run, the two floors a turn cannot beat: the loopback server's own request rate (bare
//! HTTP clients on kept connections hammering it) and the fsync floor of the data dir's disk (write+fsync on a
//! file, and SQLite WAL `synchronous=FULL` autocommit inserts).
//!
//! HEARTH_TURNS sets the turns per level (default 500), HEARTH_ROUNDS the repeats (default 3);
//! HEARTHD names the daemon binary; every level is bounded at 60 s. Reported: medians over the rounds with (min .. max).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hearth_bench::Samples;
use hearth_bench::daemon::{TICKS_PER_SEC, cpu_ticks, hearthd_binary, start_against_stub};

/// Numbers every send of the run: the kernel skips a text it saw moments ago as a duplicate.
static SEQ: AtomicUsize = AtomicUsize::new(0);

const LEVEL_LIMIT: Duration = Duration::from_secs(60);
const FLOOR_WINDOW: Duration = Duration::from_secs(2);

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

struct Daemon {
    child: Child,
    dir: PathBuf,
}

impl Daemon {
    fn start(bin: &Path, base_url: &str, tag: &str) -> Self {
        let dir = hearth_testkit::fresh_dir(&format!("throughput-{tag}"));
        let child = start_against_stub(bin, &dir, base_url, false, "error");
        Self { child, dir }
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("hearth.sock")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One level's outcome.
struct Level {
    turns: usize,
    per_sec: f64,
    p50_ms: f64,
    p99_ms: f64,
    cpu_ms_per_turn: f64,
}

/// Sends one `send` and reads lines until its single final answer; returns whether it was a
/// `response` (a refusal such as `queue_full` is an `error`).
fn one_turn(writer: &mut UnixStream, reader: &mut BufReader<UnixStream>) -> bool {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let req = serde_json::json!({"op": "send", "text": format!("turn number {n}")});
    writeln!(writer, "{req}").expect("send");
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).expect("read") > 0,
            "hearthd closed the connection"
        );
        let v: serde_json::Value = serde_json::from_str(&line).expect("json line");
        match v["type"].as_str() {
            Some("delta" | "accepted") => continue,
            Some("response") => return true,
            Some("error" | "skipped") => {
                eprintln!("   refused: {}", line.trim_end());
                return false;
            }
            other => panic!("unexpected answer {other:?}: {line}"),
        }
    }
}

fn run_level(daemon: &Daemon, clients: usize, total: usize) -> Level {
    let next = Arc::new(AtomicUsize::new(0));
    let pid = daemon.child.id();
    let ticks_before = cpu_ticks(pid);
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let next = next.clone();
            let socket = daemon.socket();
            std::thread::spawn(move || {
                let mut writer = UnixStream::connect(socket).expect("connect");
                let mut reader = BufReader::new(writer.try_clone().expect("clone"));
                let mut lat = Vec::new();
                let mut refused = 0usize;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total || started.elapsed() > LEVEL_LIMIT {
                        break;
                    }
                    let t = Instant::now();
                    if one_turn(&mut writer, &mut reader) {
                        lat.push(t.elapsed());
                    } else {
                        refused += 1;
                    }
                }
                (lat, refused)
            })
        })
        .collect();
    let mut lat = Vec::new();
    let mut refused = 0;
    for w in workers {
        let (l, r) = w.join().expect("client");
        lat.extend(l);
        refused += r;
    }
    let wall = started.elapsed();
    let ticks = cpu_ticks(pid) - ticks_before;
    assert!(!lat.is_empty(), "no turn answered at {clients} clients");
    if refused > 0 {
        println!("   ({refused} sends refused at {clients} clients)");
    }
    let turns = lat.len();
    let lat = Samples::new(lat);
    Level {
        turns,
        per_sec: turns as f64 / wall.as_secs_f64(),
        p50_ms: lat.p50().as_secs_f64() * 1e3,
        p99_ms: lat.p99().as_secs_f64() * 1e3,
        cpu_ms_per_turn: ticks as f64 / TICKS_PER_SEC * 1e3 / turns as f64,
    }
}

/// The loopback server's own rate: `clients` bare HTTP/1.1 clients, each on one kept-alive
/// connection (as the daemon's client keeps its own), posting a chat request and reading the
/// streamed answer to the end of its chunked body, acknowledging each read at once.
fn stub_rate(addr: &str, clients: usize) -> f64 {
    let body =
        r#"{"model":"test-model","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    let req = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let started = Instant::now();
    let done = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (addr, req, done) = (addr.to_string(), req.clone(), done.clone());
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(&addr).expect("connect stub");
                let mut answer = Vec::new();
                let mut buf = [0u8; 4096];
                while started.elapsed() < FLOOR_WINDOW {
                    s.write_all(req.as_bytes()).expect("request");
                    answer.clear();
                    while !answer.ends_with(b"0\r\n\r\n") {
                        // As the daemon's client does: the stub leaves Nagle's algorithm on,
                        // and a delayed acknowledgement would hold its next write 40 ms.
                        let _ = socket2::SockRef::from(&s).set_tcp_quickack(true);
                        let n = s.read(&mut buf).expect("answer");
                        assert!(n > 0, "the stub closed a kept connection");
                        answer.extend_from_slice(&buf[..n]);
                    }
                    assert!(answer.starts_with(b"HTTP/1.1 200"), "stub answered badly");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("stub client");
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

/// write(64 B) + fdatasync on one file in `dir`, as fast as the disk allows.
fn fsync_rate(dir: &Path) -> f64 {
    let path = dir.join("fsync-floor");
    let mut f = std::fs::File::create(&path).expect("floor file");
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < FLOOR_WINDOW {
        f.write_all(&[b'x'; 64]).expect("write");
        f.sync_data().expect("fsync");
        n += 1;
    }
    let _ = std::fs::remove_file(path);
    n as f64 / started.elapsed().as_secs_f64()
}

/// One autocommit INSERT per op into a WAL database with `synchronous=FULL`.
fn sqlite_rate(dir: &Path) -> f64 {
    let path = dir.join("floor.sqlite");
    let db = rusqlite::Connection::open(&path).expect("sqlite");
    db.pragma_update(None, "journal_mode", "WAL").expect("wal");
    db.pragma_update(None, "synchronous", "FULL").expect("full");
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)", [])
        .expect("table");
    let mut ins = db
        .prepare("INSERT INTO t (body) VALUES (?1)")
        .expect("stmt");
    let started = Instant::now();
    let mut n = 0u64;
    while started.elapsed() < FLOOR_WINDOW {
        ins.execute(["a turn's worth of text"]).expect("insert");
        n += 1;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    drop(ins);
    drop(db);
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
    rate
}

/// Median and range of `xs`, formatted `median (min .. max)`.
fn summary(mut xs: Vec<f64>, decimals: usize) -> String {
    xs.sort_by(f64::total_cmp);
    format!(
        "{:.d$} ({:.d$} .. {:.d$})",
        xs[xs.len() / 2],
        xs[0],
        xs[xs.len() - 1],
        d = decimals
    )
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("throughput: bench");
        return;
    }
    let bin = hearthd_binary();
    let total = env_usize("HEARTH_TURNS", 500);
    let rounds = env_usize("HEARTH_ROUNDS", 3).max(1);
    let levels = [1usize, 10, 50];
    let server = hearth_testkit::llm_server::LlmServer::start();
    let addr = server
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string();

    let mut per_level: Vec<Vec<Level>> = levels.iter().map(|_| Vec::new()).collect();
    let (mut stub1, mut stub50, mut fsyncs, mut sqlite) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        // A fresh daemon per round: each round starts from an empty store.
        let daemon = Daemon::start(&bin, &server.base_url, &format!("r{round}"));
        // Warm-up: the first turn opens the store's statements and the source.
        run_level(&daemon, 1, 5);
        for (i, clients) in levels.iter().enumerate() {
            per_level[i].push(run_level(&daemon, *clients, total));
        }
        stub1.push(stub_rate(&addr, 1));
        stub50.push(stub_rate(&addr, 50));
        fsyncs.push(fsync_rate(&daemon.dir));
        sqlite.push(sqlite_rate(&daemon.dir));
    }

    println!(
        "== hearthd turns under concurrency: {total} sends per level, {rounds} rounds, \
         memory model off, loopback stub answering at once; median (min .. max)"
    );
    println!(
        "   {:>7}  {:>26}  {:>26}  {:>26}  {:>26}",
        "clients", "turns/s", "p50 ms", "p99 ms", "daemon CPU ms/turn"
    );
    for (i, clients) in levels.iter().enumerate() {
        let runs = &per_level[i];
        let col = |f: fn(&Level) -> f64, d| summary(runs.iter().map(f).collect(), d);
        let answered: usize = runs.iter().map(|l| l.turns).sum();
        println!(
            "   {clients:>7}  {:>26}  {:>26}  {:>26}  {:>26}   [{answered} answered]",
            col(|l| l.per_sec, 1),
            col(|l| l.p50_ms, 2),
            col(|l| l.p99_ms, 2),
            col(|l| l.cpu_ms_per_turn, 2),
        );
    }
    println!("== floors measured in the same run (ops/s, median (min .. max))");
    println!("   stub, 1 HTTP client             {}", summary(stub1, 0));
    println!("   stub, 50 HTTP clients           {}", summary(stub50, 0));
    println!("   write+fdatasync, data dir       {}", summary(fsyncs, 0));
    println!("   SQLite WAL synchronous=FULL     {}", summary(sqlite, 0));
}
