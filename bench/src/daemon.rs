//! Finding and watching the `hearthd` a whole-daemon bench runs as a child.

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The daemon binary: `HEARTHD` when set (to compare two builds), else the `hearthd` built in
/// the same target profile as the running bench.
pub fn hearthd_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("HEARTHD") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("bench path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let bin = dir.join("hearthd");
    assert!(
        bin.exists(),
        "{} missing: run `cargo build --release -p hearth-runtime --bins` (make bench does)",
        bin.display()
    );
    bin
}

/// `/proc` reports CPU time in USER_HZ ticks, fixed at 100 by the kernel's userspace ABI.
pub const TICKS_PER_SEC: f64 = 100.0;

/// utime + stime of `pid` in clock ticks (0 once the process is gone).
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`), or `None` once the process is gone.
pub fn proc_status_kb(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Starts `bin` on data dir `dir` with one OpenAI-compatible source at `base_url` (no probing,
/// no embedded model; the embedding model as `memory_model` says, logging at `log`) and
/// returns it once its socket accepts.
pub fn start_against_stub(
    bin: &Path,
    dir: &Path,
    base_url: &str,
    memory_model: bool,
    log: &str,
) -> Child {
    start_with_plugins(bin, dir, base_url, memory_model, false, log)
}

/// [`start_against_stub`] with the bundled plugins (the web page among them) as `bundled` says;
/// their settings can be preset in `dir` before the call.
pub fn start_with_plugins(
    bin: &Path,
    dir: &Path,
    base_url: &str,
    memory_model: bool,
    bundled: bool,
    log: &str,
) -> Child {
    let cfg = dir.join("hearth.toml");
    let text = format!(
        "data_dir = \"{}\"\nprobe_loopback = false\nbundled_plugins = {bundled}\nmemory_model = {memory_model}\n\
         [[sources]]\nname = \"stub\"\nbase_url = \"{base_url}\"\nmodel = \"test-model\"\n\
         adapter = \"openai\"\npriority = 0\n[embedded]\nenabled = false\n",
        dir.display()
    );
    std::fs::write(&cfg, text).expect("config");
    let mut child = Command::new(bin)
        .arg("--config")
        .arg(&cfg)
        .env("HEARTH_LOG", log)
        .env_remove("HEARTH_DATA_DIR")
        .env_remove("HEARTH_SOCKET")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("hearthd starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while UnixStream::connect(dir.join("hearth.sock")).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("hearthd exited before it was ready: {status}");
        }
        assert!(Instant::now() < deadline, "hearthd did not open its socket");
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// The pid of `parent`'s child process whose command name is `name` (a plugin the daemon
/// supervises), if it runs.
pub fn child_named(parent: u32, name: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent && comm == name).then_some(pid)
        })
}
