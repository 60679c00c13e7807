//! Time expressions in a recall query.
//!
//! "What did I do two weeks ago?" names a span of time, and archived turns said in that span are
//! better answers than equally similar turns said elsewhere. [`time_windows`] finds such
//! expressions in English and Chinese and turns each into a half-open window of Unix
//! milliseconds. Every window is wider than the literal span on purpose: a turn's timestamp is
//! when something was *said*, which is at or after when it happened, and people are vague about
//! both. No regex and no time-zone database: English is matched on lower-cased words, Chinese
//! character by character, and the caller passes the user's UTC offset.

use super::clock::{civil_from_days, days_from_civil, days_in_month, weekday_from_days};

const DAY: i64 = 86_400_000;
/// A month of 30.44 days and a year of 365.25 days, in milliseconds: whole numbers that are
/// also multiples of 5, so the 0.6× and 1.2× widths below stay exact integers.
const MONTH: i64 = 2_630_016_000;
const YEAR: i64 = 31_557_600_000;

/// A span of time a query points at: Unix milliseconds, half-open `[start_ms, end_ms)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimeWindow {
    /// First millisecond inside the window.
    pub start_ms: i64,
    /// First millisecond after the window.
    pub end_ms: i64,
}

impl TimeWindow {
    /// Whether `ms` falls inside the window.
    pub(crate) fn contains(&self, ms: i64) -> bool {
        self.start_ms <= ms && ms < self.end_ms
    }
}

/// Every time expression in `query`, as windows relative to `now_ms` in the user's zone
/// (`utc_offset_secs` east of UTC), in order of appearance. Empty when the query names no time.
pub(crate) fn time_windows(query: &str, now_ms: i64, utc_offset_secs: i64) -> Vec<TimeWindow> {
    let cal = Calendar::new(now_ms, utc_offset_secs);
    let mut found = Vec::new();
    english::find(query, &cal, &mut found);
    chinese::find(query, &cal, &mut found);
    found.sort_by_key(|&(at, _)| at);
    found.into_iter().map(|(_, window)| window).collect()
}

/// A window, or nothing when saturated arithmetic at the ends of time left it empty.
fn window(start_ms: i64, end_ms: i64) -> Option<TimeWindow> {
    (start_ms < end_ms).then_some(TimeWindow { start_ms, end_ms })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    fn ms(self) -> i64 {
        match self {
            Unit::Day => DAY,
            Unit::Week => 7 * DAY,
            Unit::Month => MONTH,
            Unit::Year => YEAR,
        }
    }

    /// How far before and after the centre an exact "N units ago" reaches; one more day after
    /// than before, since things are told after they happen.
    fn tolerance(self) -> (i64, i64) {
        match self {
            Unit::Day => (DAY, 2 * DAY),
            Unit::Week => (3 * DAY + DAY / 2, 4 * DAY + DAY / 2),
            Unit::Month => (15 * DAY, 16 * DAY),
            Unit::Year => (182 * DAY, 183 * DAY),
        }
    }
}

/// How many units: exact ("two", "3", "两") or vague ("a few", "几"), whose window grows with it.
#[derive(Clone, Copy, Debug)]
struct Count {
    n: i64,
    vague: bool,
}

const fn exact(n: i64) -> Count {
    Count { n, vague: false }
}

const fn vague(n: i64) -> Count {
    Count { n, vague: true }
}

/// The user's calendar at the moment of the query. Day numbers count local days since
/// 1970-01-01; they stay within ±1.1·10¹¹ for any `i64` clock, so plain arithmetic on them and
/// on their years cannot overflow, while millisecond arithmetic saturates.
struct Calendar {
    today: i64,
    off_ms: i64,
    year: i64,
    month: i64,
    day: i64,
}

impl Calendar {
    fn new(now_ms: i64, utc_offset_secs: i64) -> Self {
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
    fn start_of(&self, day: i64) -> i64 {
        day.saturating_mul(DAY).saturating_sub(self.off_ms)
    }

    /// Local days `[from, to)` by day number.
    fn days(&self, from: i64, to: i64) -> Option<TimeWindow> {
        window(self.start_of(from), self.start_of(to))
    }

    /// Local days `[today + from, today + to)`.
    fn relative(&self, from: i64, to: i64) -> Option<TimeWindow> {
        self.days(self.today + from, self.today + to)
    }

    /// `before` ms before to `after` ms after the point `back` ms before today's midnight.
    fn around(&self, back: i64, before: i64, after: i64) -> Option<TimeWindow> {
        let centre = self.start_of(self.today).saturating_sub(back);
        window(centre.saturating_sub(before), centre.saturating_add(after))
    }

    fn ago(&self, count: Count, unit: Unit) -> Option<TimeWindow> {
        let back = count.n.saturating_mul(unit.ms());
        let (before, after) = if count.vague {
            let half = count.n.saturating_mul(unit.ms() / 5 * 3);
            (half, half)
        } else {
            unit.tolerance()
        };
        self.around(back, before, after)
    }

    /// "The past N units": 1.2·N units plus two days back, through the end of today.
    fn past(&self, n: i64, unit: Unit) -> Option<TimeWindow> {
        let reach = n.saturating_mul(unit.ms() / 5 * 6).saturating_add(2 * DAY);
        self.around(0, reach, DAY)
    }

    /// The most recent Saturday strictly before today (yesterday on a Sunday) and its Sunday.
    fn last_weekend(&self) -> Option<TimeWindow> {
        let saturday = self.today - days_back(weekday_from_days(self.today), 5);
        self.days(saturday, saturday + 2)
    }

    /// The most recent `weekday` (0 = Monday) strictly before today, a day either side.
    fn last_weekday(&self, weekday: i64) -> Option<TimeWindow> {
        let day = self.today - days_back(weekday_from_days(self.today), weekday);
        self.days(day - 1, day + 2)
    }

    fn last_month(&self) -> Option<TimeWindow> {
        let (y, m) = if self.month == 1 {
            (self.year - 1, 12)
        } else {
            (self.year, self.month - 1)
        };
        self.days(
            days_from_civil(y, m, 1) - 3,
            days_from_civil(self.year, self.month, 1) + 3,
        )
    }

    fn this_month(&self) -> Option<TimeWindow> {
        self.days(
            days_from_civil(self.year, self.month, 1) - 1,
            self.today + 1,
        )
    }

    /// Month `m` of `year`, or of the latest year in which it is not after the current month.
    fn month(&self, m: i64, year: Option<i64>) -> Option<TimeWindow> {
        let y = year.unwrap_or(if m <= self.month {
            self.year
        } else {
            self.year - 1
        });
        let (next_y, next_m) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
        self.days(
            days_from_civil(y, m, 1) - 1,
            days_from_civil(next_y, next_m, 1) + 3,
        )
    }

    /// Day `d` of month `m` in `year`, or the latest such date not after today (going back to
    /// a leap year for 29 February).
    fn date(&self, m: i64, d: i64, year: Option<i64>) -> Option<TimeWindow> {
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
        let day = days_from_civil(y, m, d);
        self.days(day - 1, day + 2)
    }
}

/// Days from `weekday` back to the most recent `target` strictly before it (1–7).
fn days_back(weekday: i64, target: i64) -> i64 {
    match (weekday - target).rem_euclid(7) {
        0 => 7,
        back => back,
    }
}

/// A matched expression: how many words or characters it used, and its window (`None` when the
/// arithmetic left nothing).
pub(super) type Match = Option<(usize, Option<TimeWindow>)>;

mod chinese;
mod english;
#[cfg(test)]
mod tests;
