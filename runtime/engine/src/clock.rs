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
