//! Bounds on what an adapter script can write to the daemon's log through `log()` and
//! `print()`: each message is cut at [`MAX_LOG_MESSAGE_BYTES`] (with a marker saying how long
//! it was), and messages pass a per-adapter token bucket ([`LOG_BURST`] at once, then
//! [`LOG_PER_SECOND`]); what the bucket drops is counted and reported in one line at most once
//! per [`REPORT_EVERY`].

use mlua::Value;
use std::time::{Duration, Instant};

/// The longest message an adapter may log, in bytes; longer ones are truncated.
pub const MAX_LOG_MESSAGE_BYTES: usize = 8 * 1024;
/// Messages an adapter may log at once before the rate limit applies.
pub const LOG_BURST: u32 = 32;
/// Messages per second an adapter may log once its burst is spent.
pub const LOG_PER_SECOND: u32 = 8;
/// How often the count of dropped messages is reported, at most.
const REPORT_EVERY: Duration = Duration::from_secs(1);

/// One adapter's log budget.
#[derive(Debug)]
pub(crate) struct LogLimiter {
    tokens: f64,
    refilled: Instant,
    dropped: u64,
    reported: Option<Instant>,
}

/// What to do with one message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Log it; first report this many dropped messages, if not zero.
    Log {
        /// Messages dropped since the last report.
        dropped: u64,
    },
    /// Drop it.
    Drop,
}

impl LogLimiter {
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            tokens: f64::from(LOG_BURST),
            refilled: now,
            dropped: 0,
            reported: None,
        }
    }

    pub(crate) fn admit(&mut self, now: Instant) -> Admit {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * f64::from(LOG_PER_SECOND)).min(f64::from(LOG_BURST));
        self.refilled = now;
        if self.tokens < 1.0 {
            self.dropped += 1;
            return Admit::Drop;
        }
        self.tokens -= 1.0;
        let due = self
            .reported
            .is_none_or(|at| now.saturating_duration_since(at) >= REPORT_EVERY);
        if self.dropped > 0 && due {
            self.reported = Some(now);
            return Admit::Log {
                dropped: std::mem::take(&mut self.dropped),
            };
        }
        Admit::Log { dropped: 0 }
    }
}

/// A logged value as text of at most [`MAX_LOG_MESSAGE_BYTES`] (plus the marker). A Lua
/// string is cut before it is copied, so logging a huge one costs no more than a short one.
pub(crate) fn message_text(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let bytes = s.as_bytes();
            truncated(&bytes)
        }
        other => truncated(other.to_string().unwrap_or_default().as_bytes()),
    }
}

/// `bytes` as lossy UTF-8, cut at a character boundary within the limit.
pub(crate) fn truncated(bytes: &[u8]) -> String {
    if bytes.len() <= MAX_LOG_MESSAGE_BYTES {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut cut = MAX_LOG_MESSAGE_BYTES;
    // Back up over UTF-8 continuation bytes so no character is split.
    while cut > 0 && bytes[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    format!(
        "{}… [truncated, {} bytes in all]",
        String::from_utf8_lossy(&bytes[..cut]),
        bytes.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_allows_a_burst_then_the_rate_and_reports_drops_once_per_interval() {
        let start = Instant::now();
        let mut limiter = LogLimiter::new(start);
        for _ in 0..LOG_BURST {
            assert_eq!(limiter.admit(start), Admit::Log { dropped: 0 });
        }
        for _ in 0..100 {
            assert_eq!(limiter.admit(start), Admit::Drop);
        }
        // One token back after 1/8 s; the drops are reported with it.
        let later = start + Duration::from_millis(130);
        assert_eq!(limiter.admit(later), Admit::Log { dropped: 100 });
        assert_eq!(limiter.admit(later), Admit::Drop);
        // Within the report interval further drops wait for the next report.
        let again = later + Duration::from_millis(130);
        assert_eq!(limiter.admit(again), Admit::Log { dropped: 0 });
        let next = later + REPORT_EVERY + Duration::from_millis(10);
        assert_eq!(limiter.admit(next), Admit::Log { dropped: 1 });
    }

    #[test]
    fn long_messages_are_cut_at_a_character_boundary_with_a_marker() {
        assert_eq!(truncated(b"short"), "short");
        let long = "é".repeat(MAX_LOG_MESSAGE_BYTES);
        let cut = truncated(long.as_bytes());
        assert!(cut.len() < MAX_LOG_MESSAGE_BYTES + 64, "{}", cut.len());
        assert!(cut.ends_with(&format!("[truncated, {} bytes in all]", long.len())));
        assert!(!cut.contains('\u{fffd}'));
    }
}
