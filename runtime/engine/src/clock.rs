//! Wall-clock time as the kernel records it: milliseconds since the Unix epoch, and the one
//! calendar conversion every date parser and printer of the workspace uses.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch; 0 if the system clock is before it. The one reading of
/// the wall clock every crate of the workspace records times by.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A duration in whole milliseconds, as times are recorded (`i64::MAX` past ~292 million years).
pub fn duration_ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Days since 1970-01-01 of the proleptic Gregorian date `year-month-day` (H. Hinnant's
/// `days_from_civil`: no time-zone database needed).
///
/// ```
/// assert_eq!(hearth_engine::days_from_civil(1970, 1, 1), 0);
/// assert_eq!(hearth_engine::days_from_civil(2000, 3, 1), 11_017);
/// assert_eq!(hearth_engine::days_from_civil(1969, 12, 31), -1);
/// ```
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The user's zone: its offset east of UTC, in seconds, at any instant. Fixed (a configured
/// offset, UTC), or following a zone's rules through a function the daemon gives, so a
/// daylight-saving change applies from the instant it happens, without a restart.
#[derive(Clone)]
pub struct LocalZone(ZoneRule);

#[derive(Clone)]
enum ZoneRule {
    Fixed(i64),
    Rules(std::sync::Arc<dyn Fn(i64) -> i64 + Send + Sync>),
}

impl LocalZone {
    /// Always `secs` east of UTC.
    pub const fn fixed(secs: i64) -> Self {
        Self(ZoneRule::Fixed(secs))
    }

    /// The offset `offset_at` gives for an instant in Unix milliseconds (it must be cheap: it
    /// is asked on the turn path).
    pub fn following(offset_at: impl Fn(i64) -> i64 + Send + Sync + 'static) -> Self {
        Self(ZoneRule::Rules(std::sync::Arc::new(offset_at)))
    }

    /// Seconds east of UTC at `ms` (Unix milliseconds).
    ///
    /// ```
    /// use hearth_engine::LocalZone;
    ///
    /// assert_eq!(LocalZone::fixed(3_600).offset_at(0), 3_600);
    /// // A zone an hour ahead from the year 2000 on.
    /// let zone = LocalZone::following(|ms| if ms < 946_684_800_000 { 0 } else { 3_600 });
    /// assert_eq!((zone.offset_at(0), zone.offset_at(946_684_800_000)), (0, 3_600));
    /// ```
    pub fn offset_at(&self, ms: i64) -> i64 {
        match &self.0 {
            ZoneRule::Fixed(secs) => *secs,
            ZoneRule::Rules(offset_at) => offset_at(ms),
        }
    }
}

impl PartialEq for LocalZone {
    /// The same fixed offset, or the same rules (the same function, not one that happens to
    /// answer alike).
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (ZoneRule::Fixed(a), ZoneRule::Fixed(b)) => a == b,
            (ZoneRule::Rules(a), ZoneRule::Rules(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Default for LocalZone {
    /// UTC.
    fn default() -> Self {
        Self::fixed(0)
    }
}

impl std::fmt::Debug for LocalZone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            ZoneRule::Fixed(secs) => write!(f, "LocalZone(fixed {secs:+} s)"),
            // Not asked here: a zone's rules may look at a file, which formatting should not.
            ZoneRule::Rules(_) => write!(f, "LocalZone(rules)"),
        }
    }
}
