//! The daemon's footprint for the status page, read from `/proc` of the kernel's pid (the
//! shared segment records it): resident memory, threads, uptime. Nothing is asked of the
//! kernel for it.

use hearth_plugin::{Value, json};

/// Clock ticks per second in `/proc/<pid>/stat` (USER_HZ: 100 in every Linux ABI).
const USER_HZ: u64 = 100;

/// `{rss_kib, threads, uptime_secs}` of process `pid`; `null` fields where `/proc` says nothing.
pub fn of(pid: u32) -> Value {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| -> Option<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    json!({
        "pid": pid,
        "rss_kib": field("VmRSS:"),
        "threads": field("Threads:"),
        "uptime_secs": uptime(pid),
    })
}

fn uptime(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command (which may hold spaces) start at the last ')'; starttime is
    // field 22 overall, the 20th after it.
    let started_ticks: u64 = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let boot_secs: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((boot_secs as u64).saturating_sub(started_ticks / USER_HZ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_threads_and_an_uptime() {
        let f = of(std::process::id());
        assert!(f["rss_kib"].as_u64().unwrap() > 0);
        assert!(f["threads"].as_u64().unwrap() >= 1);
        assert!(f["uptime_secs"].as_u64().unwrap() < 24 * 3600);
    }
}
