//! `hearthd` start-up to ready (socket accepting), idle RSS and idle CPU over a window, for a
//! daemon with no source (nothing but the kernel) — the footprint DESIGN §5 budgets
//! (≤ 25 MB RSS, ~0 % CPU). Set HEARTH_IDLE_SECS to change the idle window (default 60).

use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hearth_bench::daemon::{cpu_ticks, hearthd_binary, proc_status_kb as proc_field};

/// Starts hearthd with no source and `memory_model` as given; returns it once its socket accepts.
fn start(
    bin: &std::path::Path,
    tag: &str,
    model: bool,
) -> (std::process::Child, std::path::PathBuf, Duration) {
    let dir = hearth_testkit::fresh_dir(&format!("idle-{tag}"));
    let cfg = dir.join("hearth.toml");
    let text = format!(
        "data_dir = \"{}\"\nprobe_loopback = false\nbundled_plugins = false\nmemory_model = {model}\n[embedded]\nenabled = false\n",
        dir.display()
    );
    std::fs::write(&cfg, text).expect("cfg");
    let started = Instant::now();
    let child = Command::new(bin)
        .arg("--config")
        .arg(&cfg)
        .env("HEARTH_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("hearthd");
    while UnixStream::connect(dir.join("hearth.sock")).is_err() {
        std::thread::sleep(Duration::from_micros(200));
    }
    (child, dir, started.elapsed())
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("daemon_idle: bench");
        return;
    }
    let bin = hearthd_binary();
    let mut starts = Vec::new();
    for round in 0..5 {
        let (child, dir, took) = start(&bin, &format!("s{round}"), false);
        starts.push(took);
        stop(child, dir);
    }
    starts.sort();
    println!("== hearthd start to ready (socket accepting), 5 starts, no model");
    println!(
        "   median {:.1} ms (min {:.1} .. max {:.1})",
        starts[2].as_secs_f64() * 1e3,
        starts[0].as_secs_f64() * 1e3,
        starts[4].as_secs_f64() * 1e3
    );
    let idle = Duration::from_secs(
        std::env::var("HEARTH_IDLE_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let (child, dir, _) = start(&bin, "idle", false);
    let pid = child.id();
    std::thread::sleep(Duration::from_secs(2));
    let ticks_before = cpu_ticks(pid);
    std::thread::sleep(idle);
    let ticks = cpu_ticks(pid) - ticks_before;
    let rss_kb = proc_field(pid, "VmRSS:").unwrap_or(0);
    println!("== idle daemon, no source, embedding model not loaded");
    println!("   RSS {:.1} MB — budget ≤ 25 MB", rss_kb as f64 / 1024.0);
    println!(
        "   CPU over {}s idle: {ticks} ticks = {:.3} % of one core",
        idle.as_secs(),
        ticks as f64 / 100.0 / idle.as_secs_f64() * 100.0
    );
    stop(child, dir);
    let (child, dir, _) = start(&bin, "model", true);
    // The model loads on the memory thread after the socket opens.
    std::thread::sleep(Duration::from_secs(8));
    let rss_kb = proc_field(child.id(), "VmRSS:").unwrap_or(0);
    println!("== idle daemon with the embedding model loaded");
    println!("   RSS {:.1} MB", rss_kb as f64 / 1024.0);
    stop(child, dir);
}

fn stop(mut child: std::process::Child, dir: std::path::PathBuf) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(dir);
}
