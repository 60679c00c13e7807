//! The widened reading of a phrase, for a recall query: the window a turn about it was
//! probably said in.

use super::{Calendar, Count, DAY, TimePhrase, TimeWindow, Unit};

/// A month of 30.44 days and a year of 365.25 days, in milliseconds: whole numbers that are
/// also multiples of 5, so the 0.6× and 1.2× widths below stay exact integers.
const MONTH: i64 = 2_630_016_000;
const YEAR: i64 = 31_557_600_000;

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

/// A window, or nothing when saturated arithmetic at the ends of time left it empty.
fn window(start_ms: i64, end_ms: i64) -> Option<TimeWindow> {
    (start_ms < end_ms).then_some(TimeWindow { start_ms, end_ms })
}

impl Calendar {
    /// The window a query's `phrase` points at: a day either side of a named day, a day before
    /// and three after a month or a year, "N units ago" within a tolerance that grows with the
    /// unit (and with a vague count).
    pub(super) fn widened(&self, phrase: &TimePhrase) -> Option<TimeWindow> {
        let within = |from: i64, to: i64| {
            let (start_ms, end_ms) = self.days(from, to)?;
            Some(TimeWindow { start_ms, end_ms })
        };
        match *phrase {
            TimePhrase::Days { from, to } => within(self.today + from, self.today + to),
            TimePhrase::Ago { count, unit } => self.ago(count, unit),
            TimePhrase::Past { n, unit } => self.past(n, unit),
            TimePhrase::LastWeekend => {
                let saturday = self.last_weekday(5);
                within(saturday, saturday + 2)
            }
            TimePhrase::LastWeekday(weekday) | TimePhrase::OnWeekday(weekday) => {
                let day = self.last_weekday(weekday);
                within(day - 1, day + 2)
            }
            TimePhrase::WeekdayLastWeek(weekday) => {
                let day = self.monday() - 7 + weekday;
                within(day - 1, day + 2)
            }
            // "Last week" is loose in speech: the seven days before this week's, give or take.
            TimePhrase::LastWeek => within(self.today - 14, self.today - 3),
            TimePhrase::ThisWeek => within(self.today - 7, self.today + 1),
            TimePhrase::LastMonth => within(
                Calendar::first_of(self.year, self.month - 1) - 3,
                Calendar::first_of(self.year, self.month) + 3,
            ),
            TimePhrase::ThisMonth => within(
                Calendar::first_of(self.year, self.month) - 1,
                self.today + 1,
            ),
            TimePhrase::Month { month, year } => {
                let y = self.year_of_month(month, year);
                within(
                    Calendar::first_of(y, month) - 1,
                    Calendar::first_of(y, month + 1) + 3,
                )
            }
            TimePhrase::Date { month, day, year } => {
                let day = self.date(month, day, year)?;
                within(day - 1, day + 2)
            }
            TimePhrase::Year(y) => within(
                Calendar::first_of(y, 1) - 1,
                Calendar::first_of(y + 1, 1) + 3,
            ),
        }
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
}
