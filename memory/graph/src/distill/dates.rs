//! When something happened, from the words that date it ("last week", "yesterday", "in March",
//! "上周", "三月", "3天前") and the time the sentence was said.
//!
//! hearth-memory has a resolver for time phrases in recall *queries*, but it is crate-private
//! and widens every window on purpose (a query is vague about when). A statement's date is
//! the opposite case: the span the phrase literally names, so this is its own small resolver.
//! Calendar arithmetic goes through hearth-memory's public ISO-8601 helpers rather than a
//! second copy of the civil-date algorithm.

use hearth_memory::{format_minute, parse_iso8601};

const DAY: i64 = 86_400_000;

/// A span of world time a statement names: Unix ms, half-open `[start_ms, end_ms)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedDate {
    /// First millisecond of the span.
    pub start_ms: i64,
    /// First millisecond after it.
    pub end_ms: i64,
    /// The words it was resolved from; empty when it is the time the sentence was said.
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

/// The user's calendar on the day a sentence was said.
struct Calendar {
    today: i64,
    off_ms: i64,
    year: i64,
    month: i64,
}

impl Calendar {
    fn new(said_ms: i64, utc_offset_secs: i64) -> Self {
        let off_ms = utc_offset_secs.saturating_mul(1000);
        let today = said_ms.saturating_add(off_ms).div_euclid(DAY);
        let (year, month, _) = civil(today);
        Self {
            today,
            off_ms,
            year,
            month,
        }
    }

    /// Local days `[first, last]` as UTC milliseconds.
    fn days(&self, first: i64, days: i64, phrase: &str) -> ResolvedDate {
        ResolvedDate {
            start_ms: first * DAY - self.off_ms,
            end_ms: (first + days) * DAY - self.off_ms,
            phrase: phrase.to_owned(),
        }
    }

    fn month(&self, year: i64, month: i64, phrase: &str) -> Option<ResolvedDate> {
        let first = day_number(year, month, 1)?;
        let (ny, nm) = if month == 12 {
            (year + 1, 1)
        } else {
            (year, month + 1)
        };
        let next = day_number(ny, nm, 1)?;
        Some(self.days(first, next - first, phrase))
    }

    fn year(&self, year: i64, phrase: &str) -> Option<ResolvedDate> {
        let first = day_number(year, 1, 1)?;
        let next = day_number(year + 1, 1, 1)?;
        Some(self.days(first, next - first, phrase))
    }

    /// The most recent `month` not after the current one: "in March" said in January is
    /// last year's March.
    fn past_month(&self, month: i64, phrase: &str) -> Option<ResolvedDate> {
        let year = if month <= self.month {
            self.year
        } else {
            self.year - 1
        };
        self.month(year, month, phrase)
    }

    fn months_ago(&self, n: i64, phrase: &str) -> Option<ResolvedDate> {
        let index = self.year * 12 + (self.month - 1) - n;
        self.month(index.div_euclid(12), index.rem_euclid(12) + 1, phrase)
    }

    /// Monday of the week `weeks` before this one, for a whole week.
    fn week(&self, weeks: i64, phrase: &str) -> ResolvedDate {
        // 1970-01-01 was a Thursday: day 0 is weekday 3 counting from Monday = 0.
        let monday = self.today - (self.today + 3).rem_euclid(7);
        self.days(monday - 7 * weeks, 7, phrase)
    }

    /// The most recent `weekday` (Monday = 0) before today.
    fn last_weekday(&self, weekday: i64, phrase: &str) -> ResolvedDate {
        let today = (self.today + 3).rem_euclid(7);
        let back = (today - weekday - 1).rem_euclid(7) + 1;
        self.days(self.today - back, 1, phrase)
    }
}

/// Local day number → (year, month, day), through the ISO formatter.
fn civil(day: i64) -> (i64, i64, i64) {
    let text = format_minute(day.saturating_mul(DAY), 0);
    let field = |range: std::ops::Range<usize>| text.get(range).and_then(|s| s.parse().ok());
    match (field(0..4), field(5..7), field(8..10)) {
        (Some(y), Some(m), Some(d)) => (y, m, d),
        _ => (1970, 1, 1),
    }
}

/// (year, month, day) → local day number, through the ISO parser.
fn day_number(year: i64, month: i64, day: i64) -> Option<i64> {
    if !(1..=9999).contains(&year) {
        return None;
    }
    parse_iso8601(&format!("{year:04}-{month:02}-{day:02}")).map(|ms| ms.div_euclid(DAY))
}

const EN_MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const EN_WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];
const EN_NUMBERS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

fn en_number(word: &str) -> Option<i64> {
    match word {
        "a" | "an" => Some(1),
        "couple" => Some(2),
        "few" => Some(3),
        _ => EN_NUMBERS
            .iter()
            .position(|w| *w == word)
            .map(|i| i as i64 + 1)
            .or_else(|| word.parse().ok().filter(|n| (1..=1000).contains(n))),
    }
}

/// The first time phrase in `sentence`, resolved against when it was said.
pub fn resolve_date(sentence: &str, said_ms: i64, utc_offset_secs: i64) -> Option<ResolvedDate> {
    let cal = Calendar::new(said_ms, utc_offset_secs);
    english(sentence, &cal).or_else(|| chinese(sentence, &cal))
}

fn english(sentence: &str, cal: &Calendar) -> Option<ResolvedDate> {
    let lower = sentence.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, &w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or("");
        let phrase = |n: usize| words[i..(i + n).min(words.len())].join(" ");
        let found = match (w, next) {
            ("today" | "tonight", _) => Some(cal.days(cal.today, 1, w)),
            ("yesterday", _) if i >= 3 && words[i - 3..i] == ["the", "day", "before"] => {
                Some(cal.days(cal.today - 2, 1, "the day before yesterday"))
            }
            ("yesterday", _) => Some(cal.days(cal.today - 1, 1, w)),
            ("last", "week") => Some(cal.week(1, &phrase(2))),
            ("last", "month") => cal.months_ago(1, &phrase(2)),
            ("last", "year") => cal.year(cal.year - 1, &phrase(2)),
            ("last", day) if EN_WEEKDAYS.contains(&day) => {
                let wd = EN_WEEKDAYS.iter().position(|d| *d == day).unwrap_or(0) as i64;
                Some(cal.last_weekday(wd, &phrase(2)))
            }
            ("this", "week") => Some(cal.week(0, &phrase(2))),
            ("on", day) if EN_WEEKDAYS.contains(&day) => {
                let wd = EN_WEEKDAYS.iter().position(|d| *d == day).unwrap_or(0) as i64;
                Some(cal.last_weekday(wd, &phrase(2)))
            }
            ("in", m) if EN_MONTHS.contains(&m) && m != "may" => {
                let month = EN_MONTHS.iter().position(|x| *x == m).unwrap_or(0) as i64 + 1;
                match words.get(i + 2).and_then(|y| y.parse::<i64>().ok()) {
                    Some(y) if (1000..=9999).contains(&y) => cal.month(y, month, &phrase(3)),
                    _ => cal.past_month(month, &phrase(2)),
                }
            }
            ("in", y)
                if y.len() == 4 && y.parse::<i64>().is_ok_and(|y| (1000..=9999).contains(&y)) =>
            {
                cal.year(y.parse().ok()?, &phrase(2))
            }
            _ => ago(&words, i, cal),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// "N days/weeks/months/years ago" starting at word `i`.
fn ago(words: &[&str], i: usize, cal: &Calendar) -> Option<ResolvedDate> {
    let n = en_number(words[i])?;
    // "a couple of weeks ago", "a few days ago": skip the article and "of".
    let mut j = i + 1;
    if matches!(words[i], "a" | "an") && matches!(words.get(j), Some(&("couple" | "few"))) {
        return ago(words, j, cal).map(|mut d| {
            d.phrase = words[i..i + d.phrase.split(' ').count() + 1].join(" ");
            d
        });
    }
    if words.get(j) == Some(&"of") {
        j += 1;
    }
    let unit = words.get(j)?.trim_end_matches('s');
    if words.get(j + 1) != Some(&"ago") {
        return None;
    }
    let phrase = words[i..=j + 1].join(" ");
    match unit {
        "day" => Some(cal.days(cal.today - n, 1, &phrase)),
        "week" => Some(cal.days(cal.today - 7 * n, 7, &phrase)),
        "month" => cal.months_ago(n, &phrase),
        "year" => cal.year(cal.year - n, &phrase),
        _ => None,
    }
}

fn zh_digit(c: char) -> Option<i64> {
    match c {
        '一' => Some(1),
        '二' | '两' => Some(2),
        '三' => Some(3),
        '四' => Some(4),
        '五' => Some(5),
        '六' => Some(6),
        '七' => Some(7),
        '八' => Some(8),
        '九' => Some(9),
        _ => c.to_digit(10).map(i64::from),
    }
}

/// A number of up to two places written in Chinese numerals or digits, ending at `chars[end]`
/// (exclusive): (value, first index).
fn zh_number_before(chars: &[char], end: usize) -> Option<(i64, usize)> {
    let mut start = end;
    while start > 0
        && (zh_digit(chars[start - 1]).is_some()
            || chars[start - 1] == '十'
            || chars[start - 1] == '几')
    {
        start -= 1;
    }
    let run = &chars[start..end];
    if run.is_empty() {
        return None;
    }
    if run == ['几'] {
        return Some((3, start));
    }
    if run.iter().all(|c| c.is_ascii_digit()) {
        let n: i64 = run.iter().collect::<String>().parse().ok()?;
        return Some((n, start));
    }
    let value = match run {
        ['十'] => 10,
        ['十', u] => 10 + zh_digit(*u)?,
        [t, '十'] => zh_digit(*t)? * 10,
        [t, '十', u] => zh_digit(*t)? * 10 + zh_digit(*u)?,
        [d] => zh_digit(*d)?,
        _ => return None,
    };
    Some((value, start))
}

fn chinese(sentence: &str, cal: &Calendar) -> Option<ResolvedDate> {
    const FIXED: &[(&str, i64)] = &[("大前天", -3), ("前天", -2), ("昨天", -1), ("今天", 0)];
    const WEEKS: &[&str] = &["上个星期", "上星期", "上个礼拜", "上礼拜", "上周"];
    let chars: Vec<char> = sentence.chars().collect();
    let text: String = chars.iter().collect();
    let mut best: Option<(usize, ResolvedDate)> = None;
    let mut consider = |at: usize, date: Option<ResolvedDate>| {
        if let Some(date) = date
            && best.as_ref().is_none_or(|(b, _)| at < *b)
        {
            best = Some((at, date));
        }
    };
    for &(word, offset) in FIXED {
        if let Some(at) = text.find(word) {
            consider(at, Some(cal.days(cal.today + offset, 1, word)));
        }
    }
    for &word in WEEKS {
        if let Some(at) = text.find(word) {
            consider(at, Some(cal.week(1, word)));
        }
    }
    for (word, back) in [("上个月", 1), ("上月", 1)] {
        if let Some(at) = text.find(word) {
            consider(at, cal.months_ago(back, word));
        }
    }
    for (word, back) in [("前年", 2), ("去年", 1)] {
        if let Some(at) = text.find(word) {
            consider(at, cal.year(cal.year - back, word));
        }
    }
    for (i, &c) in chars.iter().enumerate() {
        let byte = |k: usize| chars[..k].iter().map(|c| c.len_utf8()).sum::<usize>();
        let phrase = |from: usize, to: usize| chars[from..to].iter().collect::<String>();
        match c {
            // N天前, N周前, N个月前, N年前
            '前' => {
                let (unit_end, unit) = match chars.get(i.wrapping_sub(1)) {
                    Some('天') => (i - 1, "day"),
                    Some('周') => (i - 1, "week"),
                    Some('年') => (i - 1, "year"),
                    Some('月') if i >= 2 && chars[i - 2] == '个' => (i - 2, "month"),
                    _ => continue,
                };
                let Some((n, start)) = zh_number_before(&chars, unit_end) else {
                    continue;
                };
                let p = phrase(start, i + 1);
                let date = match unit {
                    "day" => Some(cal.days(cal.today - n, 1, &p)),
                    "week" => Some(cal.days(cal.today - 7 * n, 7, &p)),
                    "month" => cal.months_ago(n, &p),
                    _ => cal.year(cal.year - n, &p),
                };
                consider(byte(start), date);
            }
            // 三月 / 3月 (not 个月, 月前), optionally after YYYY年
            '月' if i > 0 && chars[i - 1] != '个' && chars.get(i + 1) != Some(&'前') => {
                let Some((m, start)) = zh_number_before(&chars, i) else {
                    continue;
                };
                if !(1..=12).contains(&m) {
                    continue;
                }
                let year = (start >= 5 && chars[start - 1] == '年')
                    .then(|| chars[start - 5..start - 1].iter().collect::<String>())
                    .and_then(|y| y.parse::<i64>().ok());
                let date = match year {
                    Some(y) => cal.month(y, m, &phrase(start - 5, i + 1)),
                    None => cal.past_month(m, &phrase(start, i + 1)),
                };
                consider(byte(year.map_or(start, |_| start - 5)), date);
            }
            '年' if i >= 4
                && chars
                    .get(i + 1)
                    .is_none_or(|n| zh_digit(*n).is_none() && *n != '十') =>
            {
                let digits: String = chars[i - 4..i].iter().collect();
                if let Ok(y) = digits.parse::<i64>()
                    && (1000..=9999).contains(&y)
                {
                    consider(byte(i - 4), cal.year(y, &phrase(i - 4, i + 1)));
                }
            }
            _ => {}
        }
    }
    best.map(|(_, d)| d)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "last month",
        );
        check(
            "last year we married",
            "2025-01-01",
            "2026-01-01",
            "last year",
        );
        check("I started in March", "2026-03-01", "2026-04-01", "in march");
        check(
            "I started in November",
            "2025-11-01",
            "2025-12-01",
            "in november",
        );
        check(
            "in June 2021 I graduated",
            "2021-06-01",
            "2021-07-01",
            "in june 2021",
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
    fn the_users_zone_decides_which_day_it_is() {
        // 23:30 UTC on the 17th is already the 18th at UTC+8: "yesterday" is the 17th there.
        let late = parse_iso8601("2026-03-17T23:30:00Z").unwrap();
        let got = resolve_date("yesterday", late, 8 * 3600).unwrap();
        assert_eq!(got.start_ms, day("2026-03-17") - 8 * 3_600_000);
        assert_eq!(got.end_ms - got.start_ms, DAY);
    }
}
