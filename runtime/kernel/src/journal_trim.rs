//! The journal's answered entries past their keep, deleted in idle time.
//!
//! The journal records each input before it is acknowledged and its reply before it is sent;
//! its job ends with the reply (the conversation itself lives in the window and cold context).
//! Kept for ever, every input and reply would be stored twice for the daemon's whole life.

use std::time::Duration;

use hearth_memory::ColdContext;

/// Answered journal entries each channel keeps whatever their age: at least the history a
/// channel shows (the web page asks for its newest 100).
pub const JOURNAL_KEEP_NEWEST: usize = 100;
/// How often the journal is trimmed (and once soon after start).
const EVERY: Duration = Duration::from_secs(3_600);

/// When the journal is trimmed next, and how long it keeps answered entries.
#[derive(Debug)]
pub(crate) struct JournalTrim {
    keep: Option<Duration>,
    /// ms; `i64::MAX` when it is never trimmed.
    next_ms: i64,
}

impl JournalTrim {
    /// Trims entries older than `keep` (`None`: never), the first time at `now_ms`.
    pub(crate) fn new(keep: Option<Duration>, now_ms: i64) -> Self {
        Self {
            keep,
            next_ms: if keep.is_some() { now_ms } else { i64::MAX },
        }
    }

    /// How long until it is due (`None`: never).
    pub(crate) fn wait(&self, now_ms: i64) -> Option<Duration> {
        self.keep?;
        let ms = u64::try_from(self.next_ms.saturating_sub(now_ms)).unwrap_or(0);
        Some(Duration::from_millis(ms))
    }

    /// Deletes answered entries older than the keep, beyond each channel's newest
    /// [`JOURNAL_KEEP_NEWEST`], when it is due; then again in an hour. A failure is logged and
    /// tried at the next time.
    pub(crate) fn run_if_due(&mut self, cold: &mut ColdContext, now_ms: i64) {
        let Some(keep) = self.keep else {
            return;
        };
        if now_ms < self.next_ms {
            return;
        }
        let every = i64::try_from(EVERY.as_millis()).unwrap_or(i64::MAX);
        self.next_ms = now_ms.saturating_add(every);
        let before = now_ms.saturating_sub(i64::try_from(keep.as_millis()).unwrap_or(i64::MAX));
        match cold
            .journal_store()
            .journal_trim(before, JOURNAL_KEEP_NEWEST)
        {
            Ok(0) => tracing::debug!("journal: nothing to trim"),
            Ok(n) => tracing::info!(
                entries = n,
                "journal: answered entries past their keep removed"
            ),
            Err(e) => tracing::warn!("journal not trimmed: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_MS: i64 = 3_600_000;

    #[test]
    fn it_is_due_at_start_then_hourly_and_never_without_a_keep() {
        let never = JournalTrim::new(None, 0);
        assert_eq!(never.wait(0), None);
        let trim = JournalTrim::new(Some(Duration::from_secs(86_400)), 1_000);
        assert_eq!(trim.wait(1_000), Some(Duration::ZERO));
        assert_eq!(trim.wait(5_000), Some(Duration::ZERO), "overdue is due");
        let later = JournalTrim {
            next_ms: 1_000 + HOUR_MS,
            ..trim
        };
        assert_eq!(later.wait(1_000), Some(EVERY));
    }
}
