//! `json.encode` of a table that expands without bound in JSON (a subtable shared at every
//! level) fails with a clear error inside the adapter's memory limit, and the process's peak
//! RSS stays bounded. Its own test binary, so nothing else moves the peak.

use hearth_llm::adapter::{Adapter, AdapterError, AdapterLimits};
use hearth_testkit::within;
use std::time::Duration;

/// The process's peak resident set (`VmHWM`) in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmHWM value");
    kb * 1024
}

// 2^19 copies of a 1000-byte string: half a gigabyte of JSON from a few kilobytes of table.
const BOMB: &str = r#"
local M = {}
function M.transform_request(raw)
  local t = { string.rep("x", 1000) }
  for i = 1, 19 do t = { t, t } end
  return json.encode(t)
end
return M
"#;

#[test]
fn encoding_a_shared_subtable_bomb_fails_within_the_memory_limit() {
    within(Duration::from_secs(60), || {
        // A roomy clock: an unoptimised build on a busy machine encodes slowly.
        let limits = AdapterLimits {
            memory_bytes: 16 << 20,
            wall: Duration::from_secs(20),
            ..AdapterLimits::default()
        };
        let adapter = Adapter::load_with("bomb.lua", BOMB, limits).expect("loads");
        let before = peak_rss();
        let err = adapter.transform_request("{}").expect_err("over the limit");
        let grew = peak_rss().saturating_sub(before);
        let AdapterError::Script { message, .. } = &err else {
            panic!("expected a script error, got {err:?}")
        };
        assert!(
            message.contains("json.encode") && message.contains("memory limit"),
            "{message}"
        );
        // The state's limit is 16 MiB; the text is capped at what is left of it.
        assert!(grew < 48 << 20, "peak RSS grew by {} MiB", grew >> 20);
    });
}
