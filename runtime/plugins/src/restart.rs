//! When a crashed child is started again: after 1 s, 2 s, 3 s, and not after the 4th crash
//! within 5 minutes. Pure: the caller passes the time of each crash, so the rule is tested
//! without waiting, and [`RestartPolicy::scaled`] runs the real supervisor faster.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The restart rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartPolicy {
    /// The wait before the restart after the 1st, 2nd, 3rd … crash in the window.
    pub delays: Vec<Duration>,
    /// This many crashes within `window` stop the restarts.
    pub max_crashes: usize,
    /// How far back crashes count.
    pub window: Duration,
}

impl Default for RestartPolicy {
    fn default() -> RestartPolicy {
        RestartPolicy {
            delays: vec![
                Duration::from_secs(1),
                Duration::from_secs(2),
                Duration::from_secs(3),
            ],
            max_crashes: 4,
            window: Duration::from_secs(300),
        }
    }
}

impl RestartPolicy {
    /// The same rule with every duration divided by `factor` (a time scale for tests).
    pub fn scaled(factor: u32) -> RestartPolicy {
        let d = RestartPolicy::default();
        RestartPolicy {
            delays: d.delays.iter().map(|x| *x / factor).collect(),
            max_crashes: d.max_crashes,
            window: d.window / factor,
        }
    }
}

/// What to do after a crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartDecision {
    /// Start it again after this wait.
    RestartAfter(Duration),
    /// Stop restarting: `crashes` crashes happened within the window.
    GiveUp {
        /// How many crashes the window holds.
        crashes: usize,
    },
}

/// The crashes of one child that still count.
#[derive(Debug, Clone, Default)]
pub struct CrashHistory {
    crashes: VecDeque<Instant>,
}

impl CrashHistory {
    /// Records a crash at `now` and decides.
    pub fn record(&mut self, now: Instant, policy: &RestartPolicy) -> RestartDecision {
        while self
            .crashes
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= policy.window)
        {
            self.crashes.pop_front();
        }
        self.crashes.push_back(now);
        let n = self.crashes.len();
        if n >= policy.max_crashes {
            return RestartDecision::GiveUp { crashes: n };
        }
        let delay = policy
            .delays
            .get(n - 1)
            .or(policy.delays.last())
            .copied()
            .unwrap_or_default();
        RestartDecision::RestartAfter(delay)
    }

    /// Crashes in the window as of the last record.
    pub fn count(&self) -> usize {
        self.crashes.len()
    }

    /// Forgets every crash (a manual reload or enable).
    pub fn reset(&mut self) {
        self.crashes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn delays_grow_then_the_fourth_crash_in_the_window_gives_up() {
        let p = RestartPolicy::default();
        let t0 = Instant::now();
        let mut h = CrashHistory::default();
        assert_eq!(h.record(t0, &p), RestartDecision::RestartAfter(S));
        assert_eq!(
            h.record(t0 + 10 * S, &p),
            RestartDecision::RestartAfter(2 * S)
        );
        assert_eq!(
            h.record(t0 + 20 * S, &p),
            RestartDecision::RestartAfter(3 * S)
        );
        assert_eq!(
            h.record(t0 + 299 * S, &p),
            RestartDecision::GiveUp { crashes: 4 }
        );
    }

    #[test]
    fn crashes_older_than_the_window_do_not_count() {
        let p = RestartPolicy::default();
        let t0 = Instant::now();
        let mut h = CrashHistory::default();
        for i in 0..3 {
            h.record(t0 + i * S, &p);
        }
        // The first crash is exactly 5 minutes old: out of the window, so this is the 3rd.
        assert_eq!(
            h.record(t0 + 300 * S, &p),
            RestartDecision::RestartAfter(3 * S)
        );
        assert_eq!(h.count(), 3);
    }

    #[test]
    fn reset_starts_the_count_again() {
        let p = RestartPolicy::default();
        let t0 = Instant::now();
        let mut h = CrashHistory::default();
        for i in 0..3 {
            h.record(t0 + i * S, &p);
        }
        h.reset();
        assert_eq!(h.record(t0 + 4 * S, &p), RestartDecision::RestartAfter(S));
    }

    #[test]
    fn scaled_divides_every_duration() {
        let p = RestartPolicy::scaled(100);
        assert_eq!(p.delays[0], Duration::from_millis(10));
        assert_eq!(p.window, Duration::from_secs(3));
        assert_eq!(p.max_crashes, 4);
    }
}
