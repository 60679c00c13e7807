//! Time expressions: "two weeks ago", "last Tuesday", "in March", "上周二", "三月份".
//!
//! One grammar ([`time_phrases`], English matched on lower-cased words, Chinese character by
//! character, no regex and no time-zone database) finds the phrases of a text and what each
//! names ([`TimePhrase`]); two readings turn a phrase into milliseconds:
//!
//! - **widened** ([`question_windows`], `widened.rs`), for a recall *query*: "What did I do two
//!   weeks ago?" names a span, and archived turns said in it are better answers than equally
//!   similar turns said elsewhere. Every window is wider than the literal span on purpose: a
//!   turn's timestamp is when something was *said*, at or after when it happened, and people
//!   are vague about both.
//! - **literal** ([`resolve_date`], `literal.rs`), for a *statement* ("I moved to Lisbon last
//!   week"): the span the phrase names, which a dated fact keeps.
//!
//! The caller passes the user's UTC offset: the phrases are reckoned in their calendar days.

mod calendar;
mod chinese;
mod english;
mod literal;
#[cfg(test)]
mod tests;
mod widened;

use calendar::Calendar;
pub use english::ENGLISH_WEEKDAYS;
pub use literal::{ResolvedDate, resolve_date};

const DAY: i64 = 86_400_000;

/// A span of time a query points at: Unix milliseconds, half-open `[start_ms, end_ms)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeWindow {
    /// First millisecond inside the window.
    pub start_ms: i64,
    /// First millisecond after the window.
    pub end_ms: i64,
}

impl TimeWindow {
    /// Whether `ms` falls inside the window.
    pub fn contains(&self, ms: i64) -> bool {
        self.start_ms <= ms && ms < self.end_ms
    }
}

/// The spans before now a question's time expressions point at, as widened windows relative
/// to `now_ms` in the user's zone (`utc_offset_secs` east of UTC), in order of appearance.
/// Empty when the question names no past time. Cold recall's time prior and the graph's
/// recall both read a query this way.
pub fn question_windows(query: &str, now_ms: i64, utc_offset_secs: i64) -> Vec<TimeWindow> {
    let cal = Calendar::new(now_ms, utc_offset_secs);
    time_phrases(query, &cal)
        .into_iter()
        .filter(|found| found.phrase.names_a_past_span_in_a_question())
        .filter_map(|found| cal.widened(&found.phrase))
        .collect()
}

impl TimePhrase {
    /// Whether a question naming this phrase asks about a span before now. Today's turns are
    /// still in the working window, and a question's "today" or "tonight" marks the present
    /// ("before today", "a film for tonight"); "on Monday" in a question is as often habitual
    /// or ahead ("on Saturday mornings") as past. A statement's reading takes them all.
    fn names_a_past_span_in_a_question(&self) -> bool {
        !matches!(
            self,
            TimePhrase::Days { from: 0, .. } | TimePhrase::OnWeekday(_)
        )
    }
}

/// What a time expression names, before it is read against a calendar: the grammar's output.
/// Years are absolute (the grammar already knows "last year" from the calendar); a month or
/// date without a year is the latest one not after the day it is read on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimePhrase {
    /// Local days `[today + from, today + to)`: "today", "yesterday", "大前天".
    Days {
        from: i64,
        to: i64,
    },
    /// "three days ago", "a few weeks ago", "两个月前".
    Ago {
        count: Count,
        unit: Unit,
    },
    /// "the last 3 days", "past week", "最近一个月".
    Past {
        n: i64,
        unit: Unit,
    },
    /// The most recent Saturday and Sunday before today.
    LastWeekend,
    /// The most recent such weekday (0 = Monday) strictly before today.
    LastWeekday(i64),
    /// "on Monday": tense decides which Monday, and a query rarely says; a statement is read
    /// as the last one, like [`TimePhrase::LastWeekday`].
    OnWeekday(i64),
    /// That weekday (0 = Monday) of the calendar week before this one: "上周二".
    WeekdayLastWeek(i64),
    /// The calendar week before this one.
    LastWeek,
    ThisWeek,
    LastMonth,
    ThisMonth,
    /// A month of the year: "in March", "2021年3月".
    Month {
        month: i64,
        year: Option<i64>,
    },
    /// A day of a month: "March 15th", "3月15号".
    Date {
        month: i64,
        day: i64,
        year: Option<i64>,
    },
    /// A calendar year: "in 2021", "last year", "去年".
    Year(i64),
}

/// A phrase found in a text: its byte range and what it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Found {
    start: usize,
    end: usize,
    phrase: TimePhrase,
}

/// Every time phrase of `text`, English and Chinese, in order of appearance.
fn time_phrases(text: &str, cal: &Calendar) -> Vec<Found> {
    let mut found = Vec::new();
    english::find(text, cal, &mut found);
    chinese::find(text, cal, &mut found);
    found.sort_by_key(|f| f.start);
    found
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
}

/// How many units: exact ("two", "3", "两") or vague ("a few", "几"), whose window grows with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A matched expression: how many words or characters it used, and what it names.
type Match = Option<(usize, TimePhrase)>;
