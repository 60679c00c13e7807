//! The literal reading of a phrase, for a statement: "I moved to Lisbon last week" happened in
//! the calendar week before the one it was said in, not "about a week or two ago".

use super::{Calendar, TimePhrase, Unit, time_phrases};

/// A span of world time a statement names: Unix ms, half-open `[start_ms, end_ms)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedDate {
    /// First millisecond of the span.
    pub start_ms: i64,
    /// First millisecond after it.
    pub end_ms: i64,
    /// The words it was resolved from, as written; empty when it is the time the sentence was
    /// said.
    pub phrase: String,
}

impl ResolvedDate {
    /// The moment a sentence was said, for statements that name no time.
    pub fn said(said_ms: i64) -> Self {
        Self {
            start_ms: said_ms,
            end_ms: said_ms.saturating_add(1),
            phrase: String::new(),
        }
    }
}

/// The first time phrase of `sentence` that names a span, read literally against the moment it
/// was said (`said_ms`, in a zone `utc_offset_secs` east of UTC): "last week" is the calendar
/// week before, "in March" the latest March not after it, "3天前" that one day.
pub fn resolve_date(sentence: &str, said_ms: i64, utc_offset_secs: i64) -> Option<ResolvedDate> {
    let cal = Calendar::new(said_ms, utc_offset_secs);
    time_phrases(sentence, &cal).into_iter().find_map(|found| {
        let (start_ms, end_ms) = cal.literal(&found.phrase)?;
        Some(ResolvedDate {
            start_ms,
            end_ms,
            phrase: sentence[found.start..found.end].to_owned(),
        })
    })
}

impl Calendar {
    /// The span `phrase` names, in Unix ms.
    fn literal(&self, phrase: &TimePhrase) -> Option<(i64, i64)> {
        let month =
            |y: i64, m: i64| self.days(Calendar::first_of(y, m), Calendar::first_of(y, m + 1));
        let year = |y: i64| self.days(Calendar::first_of(y, 1), Calendar::first_of(y + 1, 1));
        match *phrase {
            TimePhrase::Days { from, to } => self.days(self.today + from, self.today + to),
            TimePhrase::Ago { count, unit } => {
                let n = plausible(count.n)?;
                match unit {
                    Unit::Day => self.days(self.today - n, self.today - n + 1),
                    Unit::Week => self.days(self.today - 7 * n, self.today - 7 * n + 7),
                    Unit::Month => month(self.year, self.month - n),
                    Unit::Year => year(self.year - n),
                }
            }
            // Through the end of today; a month counts 30 days and a year 365 here.
            TimePhrase::Past { n, unit } => {
                let days = plausible(n)?
                    * match unit {
                        Unit::Day => 1,
                        Unit::Week => 7,
                        Unit::Month => 30,
                        Unit::Year => 365,
                    };
                self.days(self.today - days, self.today + 1)
            }
            TimePhrase::LastWeekend => {
                let saturday = self.last_weekday(5);
                self.days(saturday, saturday + 2)
            }
            TimePhrase::LastWeekday(weekday) | TimePhrase::OnWeekday(weekday) => {
                let day = self.last_weekday(weekday);
                self.days(day, day + 1)
            }
            TimePhrase::WeekdayLastWeek(weekday) => {
                let day = self.monday() - 7 + weekday;
                self.days(day, day + 1)
            }
            TimePhrase::LastWeek => self.days(self.monday() - 7, self.monday()),
            TimePhrase::ThisWeek => self.days(self.monday(), self.monday() + 7),
            TimePhrase::LastMonth => month(self.year, self.month - 1),
            TimePhrase::ThisMonth => month(self.year, self.month),
            TimePhrase::Month { month: m, year: y } => month(self.year_of_month(m, y), m),
            TimePhrase::Date {
                month: m,
                day,
                year: y,
            } => {
                let day = self.date(m, day, y)?;
                self.days(day, day + 1)
            }
            TimePhrase::Year(y) => year(y),
        }
    }
}

/// A count of units a statement can mean ("99999999999 days ago" names no span).
fn plausible(n: i64) -> Option<i64> {
    (0..=10_000).contains(&n).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::clock::parse_iso8601;

    const DAY: i64 = 86_400_000;

    // Wednesday 2026-03-18 10:00 UTC.
    fn said() -> i64 {
        parse_iso8601("2026-03-18T10:00:00Z").unwrap()
    }

    fn day(text: &str) -> i64 {
        parse_iso8601(text).unwrap()
    }

    fn check(sentence: &str, start: &str, end: &str, phrase: &str) {
        let got = resolve_date(sentence, said(), 0).unwrap_or_else(|| panic!("{sentence}: none"));
        assert_eq!(
            (got.start_ms, got.end_ms, got.phrase.as_str()),
            (day(start), day(end), phrase),
            "{sentence}"
        );
    }

    #[test]
    fn english_phrases_resolve_to_the_span_they_name() {
        check(
            "I moved to Lisbon yesterday",
            "2026-03-17",
            "2026-03-18",
            "yesterday",
        );
        check(
            "we met the day before yesterday",
            "2026-03-16",
            "2026-03-17",
            "the day before yesterday",
        );
        check(
            "I moved to Lisbon last week",
            "2026-03-09",
            "2026-03-16",
            "last week",
        );
        check(
            "Last month I quit",
            "2026-02-01",
            "2026-03-01",
            "Last month",
        );
        check(
            "last year we married",
            "2025-01-01",
            "2026-01-01",
            "last year",
        );
        check("I started in March", "2026-03-01", "2026-04-01", "in March");
        check(
            "I started in November",
            "2025-11-01",
            "2025-12-01",
            "in November",
        );
        check(
            "in June 2021 I graduated",
            "2021-06-01",
            "2021-07-01",
            "in June 2021",
        );
        check(
            "I sold it three days ago",
            "2026-03-15",
            "2026-03-16",
            "three days ago",
        );
        check(
            "a couple of weeks ago",
            "2026-03-04",
            "2026-03-11",
            "a couple of weeks ago",
        );
        check(
            "2 months ago I left",
            "2026-01-01",
            "2026-02-01",
            "2 months ago",
        );
        check("last monday", "2026-03-16", "2026-03-17", "last monday");
        check("on wednesday", "2026-03-11", "2026-03-12", "on wednesday");
        assert_eq!(resolve_date("I live in Porto", said(), 0), None);
        assert_eq!(resolve_date("may I ask", said(), 0), None);
    }

    #[test]
    fn chinese_phrases_resolve_to_the_span_they_name() {
        check("我昨天搬到了里斯本", "2026-03-17", "2026-03-18", "昨天");
        check("上周我搬家了", "2026-03-09", "2026-03-16", "上周");
        check("我三月开始工作", "2026-03-01", "2026-04-01", "三月");
        check("十一月去了北京", "2025-11-01", "2025-12-01", "十一月");
        check("2021年6月毕业", "2021-06-01", "2021-07-01", "2021年6月");
        check("3天前", "2026-03-15", "2026-03-16", "3天前");
        check("两个月前辞职了", "2026-01-01", "2026-02-01", "两个月前");
        check("去年结婚", "2025-01-01", "2026-01-01", "去年");
        assert_eq!(resolve_date("我住在波尔图", said(), 0), None);
        assert_eq!(resolve_date("一个月", said(), 0), None);
    }

    #[test]
    fn every_phrase_of_the_grammar_reads_literally() {
        check("I got it today", "2026-03-18", "2026-03-19", "today");
        check("我今天很忙", "2026-03-18", "2026-03-19", "今天");
        check(
            "this week I rested",
            "2026-03-16",
            "2026-03-23",
            "this week",
        );
        check("this month", "2026-03-01", "2026-04-01", "this month");
        check(
            "last year we married",
            "2025-01-01",
            "2026-01-01",
            "last year",
        );
        check("we married in 2019", "2019-01-01", "2020-01-01", "in 2019");
        check("2019年结婚", "2019-01-01", "2020-01-01", "2019年");
        check("前年结婚", "2024-01-01", "2025-01-01", "前年");
        check("去年三月搬家", "2025-03-01", "2025-04-01", "去年三月");
        check("on March 15th", "2026-03-15", "2026-03-16", "on March 15th");
        check("3月15号到的", "2026-03-15", "2026-03-16", "3月15号");
        check("last weekend", "2026-03-14", "2026-03-16", "last weekend");
        check("上周二", "2026-03-10", "2026-03-11", "上周二");
        check(
            "the last 3 days",
            "2026-03-15",
            "2026-03-19",
            "the last 3 days",
        );
        check("最近两周", "2026-03-04", "2026-03-19", "最近两周");
        check("几天前", "2026-03-15", "2026-03-16", "几天前");
        // The first phrase of the sentence is its date.
        check(
            "yesterday, not last week",
            "2026-03-17",
            "2026-03-18",
            "yesterday",
        );
        assert_eq!(resolve_date("99999999999 days ago", said(), 0), None);
        assert_eq!(resolve_date("February 30th", said(), 0), None);
    }

    #[test]
    fn the_users_zone_decides_which_day_it_is() {
        // 23:30 UTC on the 17th is already the 18th at UTC+8: "yesterday" is the 17th there.
        let late = parse_iso8601("2026-03-17T23:30:00Z").unwrap();
        let got = resolve_date("yesterday", late, 8 * 3600).unwrap();
        assert_eq!(got.start_ms, day("2026-03-17") - 8 * 3_600_000);
        assert_eq!(got.end_ms - got.start_ms, DAY);
    }
}
