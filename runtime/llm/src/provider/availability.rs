//! Whether a source may be tried now (SPEC §7.3): a cooldown that doubles with every
//! consecutive failure, or a block with no end once the source has rejected our credentials
//! (retrying a 401 only burns time until somebody fixes the key).

use std::time::{Duration, Instant};

/// Health of one source. Time is passed in, never read here, so cooldowns are testable
/// without sleeping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Availability {
    /// Consecutive failed calls since the last success.
    pub(super) fail_count: u32,
    /// End of the current cooldown; the source is available strictly after it.
    pub(super) until: Option<Instant>,
    /// Rejected credentials: unavailable until re-registered or a call succeeds.
    pub(super) permanent: bool,
    pub(super) last_error: Option<String>,
}

impl Availability {
    pub(super) fn is_available(&self, now: Instant) -> bool {
        !self.permanent && self.until.is_none_or(|until| now > until)
    }

    /// Time left in the cooldown; `None` when the source is not cooling down (a permanent
    /// block has no end, so it is `None` too).
    pub(super) fn remaining(&self, now: Instant) -> Option<Duration> {
        if self.permanent {
            return None;
        }
        self.until
            .map(|until| until.saturating_duration_since(now))
            .filter(|left| !left.is_zero())
    }

    /// One more failure: the cooldown is `base × 2^(fail_count − 1)`, at most `cap`.
    pub(super) fn mark_unavailable(
        &mut self,
        now: Instant,
        base: Duration,
        cap: Duration,
        error: String,
    ) {
        self.fail_count = self.fail_count.saturating_add(1);
        self.until = Some(now + cooldown(self.fail_count, base, cap));
        self.last_error = Some(error);
    }

    pub(super) fn mark_permanent(&mut self, error: String) {
        self.permanent = true;
        self.until = None;
        self.last_error = Some(error);
    }

    pub(super) fn reset(&mut self) {
        *self = Self::default();
    }
}

/// `base × 2^(fail_count − 1)` capped at `cap`; saturates instead of overflowing for a source
/// that has been failing for days.
pub(super) fn cooldown(fail_count: u32, base: Duration, cap: Duration) -> Duration {
    let factor = 1u32
        .checked_shl(fail_count.saturating_sub(1))
        .unwrap_or(u32::MAX);
    base.checked_mul(factor).map_or(cap, |d| d.min(cap))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Duration = Duration::from_secs(30);
    const CAP: Duration = Duration::from_secs(30 * 60);

    #[test]
    fn cooldown_doubles_from_base_and_stops_at_cap() {
        let secs: Vec<u64> = (1..=8).map(|n| cooldown(n, BASE, CAP).as_secs()).collect();
        assert_eq!(secs, [30, 60, 120, 240, 480, 960, 1800, 1800]);
        assert_eq!(cooldown(31, BASE, CAP), CAP);
        assert_eq!(cooldown(u32::MAX, BASE, CAP), CAP);
    }

    #[test]
    fn available_strictly_after_the_cooldown() {
        let t0 = Instant::now();
        let mut a = Availability::default();
        assert!(a.is_available(t0));
        a.mark_unavailable(t0, BASE, CAP, "api error 500: x".into());
        assert_eq!(a.fail_count, 1);
        assert!(!a.is_available(t0 + BASE));
        assert_eq!(a.remaining(t0), Some(BASE));
        assert!(a.is_available(t0 + BASE + Duration::from_millis(1)));
        assert_eq!(a.remaining(t0 + BASE), None);
        a.mark_unavailable(t0, BASE, CAP, "again".into());
        assert_eq!(a.remaining(t0), Some(2 * BASE));
        assert_eq!(a.last_error.as_deref(), Some("again"));
        a.reset();
        assert_eq!(a, Availability::default());
    }

    #[test]
    fn permanent_never_becomes_available() {
        let t0 = Instant::now();
        let mut a = Availability::default();
        a.mark_permanent("api error 401: bad key".into());
        assert!(!a.is_available(t0 + Duration::from_secs(10 * 365 * 24 * 3600)));
        assert_eq!(a.remaining(t0), None);
    }
}
