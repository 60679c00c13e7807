//! Soak: a real `hearthd` with its defaults (the embedding model on) answers N turns in a row
//! from a loopback OpenAI-compatible stub that streams ~60 words per answer, and the daemon's
//! RSS and store size are sampled as it goes. Reported: the same-run baseline (RSS once the
//! socket accepts, and after a warm-up), a sample table, growth per 1,000 turns over the run,
//! and the slope over the last half of the run (least squares, KB per turn) against the goals
//! (RSS ≤ 4 KB per turn, store ≤ 8 KB per turn).
//!
//! HEARTH_SOAK_TURNS (or `--turns N`) sets N (default 1,140); HEARTH_SOAK_EVERY the sampling
//! interval in turns (default 60); HEARTHD names the daemon binary; HEARTH_SOAK_KEEP=1 keeps the
//! data dir for a look at the store afterwards.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use hearth_bench::daemon::{hearthd_binary, proc_status_kb, start_against_stub};
use hearth_testkit::llm_server::{LlmServer, Script};

/// Goal of the RSS slope over the last half, KB per turn (the vectors themselves).
const RSS_GOAL_KB: f64 = 4.0;
/// Goal of the store's growth, KB per turn.
const STORE_GOAL_KB: f64 = 8.0;
/// Turns run before the warm baseline is taken (the model loads on the first turns).
const WARMUP: usize = 10;
/// One turn may take this long before the run is declared broken.
const TURN_LIMIT: Duration = Duration::from_secs(120);

const WORDS: &[&str] = &[
    "garden", "kettle", "window", "river", "lamp", "winter", "bicycle", "market", "letter",
    "harbor", "pepper", "cabinet", "meadow", "violin", "pocket", "candle", "forest", "ladder",
    "thunder", "orange", "blanket", "castle", "mirror", "saddle", "pillow", "rocket", "basket",
    "anchor", "cactus", "feather", "glacier", "hammer", "island", "jacket", "lemon", "marble",
    "needle", "oyster", "parrot", "quartz", "ribbon", "spider", "tunnel", "umbrella", "velvet",
    "walnut", "yogurt", "zipper", "bridge", "cookie", "dragon", "engine", "falcon", "guitar",
];

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// `--turns N` on the command line, else HEARTH_SOAK_TURNS, else 1,140.
fn turns() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--turns")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| env_usize("HEARTH_SOAK_TURNS", 1_140))
}

/// A deterministic sentence of `n` words, different for every `seed`.
fn sentence(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        out.push(WORDS[(x >> 33) as usize % WORDS.len()]);
    }
    out.join(" ")
}

struct Daemon {
    child: Child,
    dir: PathBuf,
}

impl Daemon {
    fn start(bin: &Path, base_url: &str) -> (Self, Duration) {
        let dir = hearth_testkit::fresh_dir("soak");
        let started = Instant::now();
        // Logging at warn: the model loading, or failing to, is on stderr with the figures.
        let child = start_against_stub(bin, &dir, base_url, true, "warn");
        (Self { child, dir }, started.elapsed())
    }

    fn rss_kb(&self) -> u64 {
        proc_status_kb(self.child.id(), "VmRSS:").unwrap_or(0)
    }

    /// The anonymous part of the RSS (heap, arenas): the file-backed rest is mostly the model
    /// weights paged in as they are touched, bounded by their files and reclaimable.
    fn anon_kb(&self) -> u64 {
        proc_status_kb(self.child.id(), "RssAnon:").unwrap_or(0)
    }

    /// The store's content in bytes (its pages in use, WAL included: a read-only connection
    /// sees the last commit whether or not it was checkpointed yet) and the WAL file's size.
    /// The file sizes alone would move in checkpoint-sized steps.
    fn store_bytes(&self) -> (u64, u64) {
        let db = self.dir.join("memory.db");
        let used = rusqlite::Connection::open_with_flags(
            &db,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .and_then(|conn| {
            let pragma =
                |name: &str| conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0));
            Ok((pragma("page_count")? - pragma("freelist_count")?) * pragma("page_size")?)
        })
        .unwrap_or(0);
        let wal = std::fs::metadata(self.dir.join("memory.db-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
        (used.max(0) as u64, wal)
    }

    fn stop(mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        if std::env::var_os("HEARTH_SOAK_KEEP").is_some() {
            println!("   data dir kept: {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One client connection sending turns one after another.
struct Client {
    out: UnixStream,
    input: BufReader<UnixStream>,
}

impl Client {
    fn connect(dir: &Path) -> Self {
        let stream = UnixStream::connect(dir.join("hearth.sock")).expect("connect");
        stream
            .set_read_timeout(Some(TURN_LIMIT))
            .expect("read timeout");
        Self {
            out: stream.try_clone().expect("clone"),
            input: BufReader::new(stream),
        }
    }

    /// Sends `text` and reads until the terminal line; panics on anything but an answer.
    fn turn(&mut self, text: &str) {
        let line = serde_json::json!({"op": "send", "text": text}).to_string();
        self.out
            .write_all(format!("{line}\n").as_bytes())
            .expect("send");
        loop {
            let mut reply = String::new();
            let n = self.input.read_line(&mut reply).expect("hearthd answers");
            assert!(n > 0, "hearthd closed the connection");
            let v: serde_json::Value = serde_json::from_str(&reply).expect("a JSON line");
            match v["type"].as_str() {
                Some("accepted" | "delta" | "lag") => {}
                Some("response") => return,
                _ => panic!("turn not answered: {v}"),
            }
        }
    }
}

/// One sample of the run.
#[derive(Clone, Copy)]
struct Sample {
    turn: usize,
    rss_kb: u64,
    anon_kb: u64,
    db: u64,
    wal: u64,
}

/// Least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    if den == 0.0 { 0.0 } else { num / den }
}

fn verdict(value: f64, goal: f64) -> &'static str {
    if value <= goal {
        "within the goal"
    } else {
        "OVER THE GOAL"
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("soak: bench");
        return;
    }
    let n = turns();
    let every = env_usize("HEARTH_SOAK_EVERY", 60).max(1);
    let bin = hearthd_binary();
    let server = LlmServer::start();
    // Consolidation and other self-inputs may call the model too: spare answers for them.
    for turn in 0..n + n / 2 + WARMUP {
        server.push(Script::text(&sentence(1_000_000 + turn as u64, 60)));
    }
    let (daemon, ready) = Daemon::start(&bin, &server.base_url);
    let rss_start = daemon.rss_kb();
    let mut client = Client::connect(&daemon.dir);
    let run = Instant::now();
    for turn in 0..WARMUP {
        client.turn(&format!("warm-up {turn}: {}", sentence(turn as u64, 25)));
    }
    let rss_warm = daemon.rss_kb();
    let (db_warm, _) = daemon.store_bytes();
    println!("== soak: {n} turns against a loopback stub answering 60 words, embedding model on");
    println!("   daemon {}", bin.display());
    println!(
        "   baseline: RSS {:.1} MB once the socket accepted ({} ms after start), {:.1} MB after {WARMUP} warm-up turns; store {:.1} KB",
        rss_start as f64 / 1024.0,
        ready.as_millis(),
        rss_warm as f64 / 1024.0,
        db_warm as f64 / 1024.0
    );
    println!(
        "   {:>6}  {:>9}  {:>9}  {:>11}  {:>11}",
        "turn", "RSS MB", "anon MB", "store KB", "WAL file KB"
    );
    let mut samples = vec![Sample {
        turn: 0,
        rss_kb: rss_warm,
        anon_kb: daemon.anon_kb(),
        db: db_warm,
        wal: daemon.store_bytes().1,
    }];
    for turn in 1..=n {
        let seed = 10_000 + turn as u64;
        client.turn(&format!("turn {turn}: {}", sentence(seed, 25)));
        if turn % every == 0 || turn == n {
            let (db, wal) = daemon.store_bytes();
            let s = Sample {
                turn,
                rss_kb: daemon.rss_kb(),
                anon_kb: daemon.anon_kb(),
                db,
                wal,
            };
            println!(
                "   {:>6}  {:>9.1}  {:>9.1}  {:>11.1}  {:>11.1}",
                s.turn,
                s.rss_kb as f64 / 1024.0,
                s.anon_kb as f64 / 1024.0,
                s.db as f64 / 1024.0,
                s.wal as f64 / 1024.0
            );
            samples.push(s);
        }
    }
    let took = run.elapsed();
    let last = *samples.last().expect("samples");
    let per_k = |from: u64, to: u64| (to as f64 - from as f64) / n as f64 * 1000.0;
    println!(
        "   {n} turns in {:.1} s ({:.1} ms per turn)",
        took.as_secs_f64(),
        took.as_secs_f64() * 1e3 / n as f64
    );
    println!(
        "   per 1,000 turns over the run: RSS {:+.1} MB, store {:+.1} MB (WAL file {:.1} MB at the end, reused in place)",
        per_k(rss_warm, last.rss_kb) / 1024.0,
        per_k(db_warm, last.db) / 1024.0 / 1024.0,
        last.wal as f64 / 1024.0 / 1024.0
    );
    let half: Vec<&Sample> = samples.iter().filter(|s| s.turn >= n / 2).collect();
    let rss_slope = slope(
        &half
            .iter()
            .map(|s| (s.turn as f64, s.rss_kb as f64))
            .collect::<Vec<_>>(),
    );
    let anon_slope = slope(
        &half
            .iter()
            .map(|s| (s.turn as f64, s.anon_kb as f64))
            .collect::<Vec<_>>(),
    );
    let store_slope = slope(
        &half
            .iter()
            .map(|s| (s.turn as f64, s.db as f64 / 1024.0))
            .collect::<Vec<_>>(),
    );
    println!(
        "   slope over the last half ({} samples, turns {}..{n}): RSS {rss_slope:.2} KB/turn (goal ≤ {RSS_GOAL_KB}: {}), store {store_slope:.2} KB/turn (goal ≤ {STORE_GOAL_KB}: {})",
        half.len(),
        half.first().map_or(0, |s| s.turn),
        verdict(rss_slope, RSS_GOAL_KB),
        verdict(store_slope, STORE_GOAL_KB)
    );
    println!(
        "   of the RSS slope, anonymous memory (heap, arenas): {anon_slope:.2} KB/turn; the rest is model weights paged in"
    );
    let peak = proc_status_kb(daemon.child.id(), "VmHWM:").unwrap_or(0);
    println!("   peak RSS {:.1} MB", peak as f64 / 1024.0);
    daemon.stop();
}
