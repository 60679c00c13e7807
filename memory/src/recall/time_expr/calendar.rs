//! The user's calendar on the day a phrase is read: what both readings share.

use super::DAY;
use crate::recall::clock::{civil_from_days, days_from_civil, days_in_month, weekday_from_days};

/// Day numbers count local days since 1970-01-01; they stay within ±1.1·10¹¹ for any `i64`
/// clock, so plain arithmetic on them and on their years cannot overflow, while millisecond
/// arithmetic saturates.
pub(super) struct Calendar {
    pub(super) today: i64,
    off_ms: i64,
    pub(super) year: i64,
    pub(super) month: i64,
    day: i64,
}

impl Calendar {
    /// The calendar at `now_ms` in a zone `utc_offset_secs` east of UTC.
    pub(super) fn new(now_ms: i64, utc_offset_secs: i64) -> Self {
        let off_ms = utc_offset_secs.saturating_mul(1000);
        let today = now_ms.saturating_add(off_ms).div_euclid(DAY);
        let (year, month, day) = civil_from_days(today);
        Self {
            today,
            off_ms,
            year,
            month,
            day,
        }
    }

    /// Unix milliseconds of local midnight starting day number `day`.
    pub(super) fn start_of(&self, day: i64) -> i64 {
        day.saturating_mul(DAY).saturating_sub(self.off_ms)
    }

    /// Local days `[from, to)` by day number: `None` when saturated arithmetic at the ends of
    /// time left the span empty.
    pub(super) fn days(&self, from: i64, to: i64) -> Option<(i64, i64)> {
        let (start, end) = (self.start_of(from), self.start_of(to));
        (start < end).then_some((start, end))
    }

    /// The day number of the first day of month `m` of year `y` (month 13 is next January).
    pub(super) fn first_of(y: i64, m: i64) -> i64 {
        days_from_civil(y + (m - 1).div_euclid(12), (m - 1).rem_euclid(12) + 1, 1)
    }

    /// The year of month `m`: `year`, or the latest year in which it is not after this month.
    pub(super) fn year_of_month(&self, m: i64, year: Option<i64>) -> i64 {
        year.unwrap_or(if m <= self.month {
            self.year
        } else {
            self.year - 1
        })
    }

    /// Day number of day `d` of month `m` in `year`, or of the latest such date not after today
    /// (going back to a leap year for 29 February); `None` for a date no calendar has.
    pub(super) fn date(&self, m: i64, d: i64, year: Option<i64>) -> Option<i64> {
        if !(1..=12).contains(&m) || d < 1 {
            return None;
        }
        let y = match year {
            Some(y) => Some(y).filter(|&y| d <= days_in_month(y, m))?,
            None => {
                let latest = if (m, d) <= (self.month, self.day) {
                    self.year
                } else {
                    self.year - 1
                };
                (0..8)
                    .map(|back| latest - back)
                    .find(|&y| d <= days_in_month(y, m))?
            }
        };
        Some(days_from_civil(y, m, d))
    }

    /// Day number of the most recent `weekday` (0 = Monday) strictly before today.
    pub(super) fn last_weekday(&self, weekday: i64) -> i64 {
        let back = match (weekday_from_days(self.today) - weekday).rem_euclid(7) {
            0 => 7,
            back => back,
        };
        self.today - back
    }

    /// Day number of the Monday that starts this week.
    pub(super) fn monday(&self) -> i64 {
        self.today - weekday_from_days(self.today)
    }
}
