//! English time expressions, matched on lower-cased words.

use super::*;

pub(super) fn find(text: &str, cal: &Calendar, found: &mut Vec<Found>) {
    let tokens = english_words(text);
    let words: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
    let mut i = 0;
    while i < words.len() {
        match english_at(&words, i, cal) {
            Some((used, phrase)) => {
                let used = used.max(1);
                found.push(Found {
                    start: tokens[i].start,
                    end: tokens[(i + used).min(tokens.len()) - 1].end,
                    phrase,
                });
                i += used;
            }
            None => i += 1,
        }
    }
}

/// A word of the text, lower-cased, and its byte range there.
struct Token {
    start: usize,
    end: usize,
    word: String,
}

/// Runs of ASCII letters and digits, and separately runs of other alphanumerics (CJK), with
/// their byte ranges: "我yesterday去了" still yields "yesterday", and "3天前" does not yield a
/// bare "3" glued to English words.
fn english_words(text: &str) -> Vec<Token> {
    let class = |c: char| {
        if c.is_ascii_alphanumeric() {
            1
        } else if c.is_alphanumeric() {
            2
        } else {
            0
        }
    };
    let mut words: Vec<Token> = Vec::new();
    let mut last = 0;
    for (at, c) in text.char_indices() {
        let k = class(c);
        if k != 0 {
            match words.last_mut() {
                Some(token) if k == last => token.word.push(c.to_ascii_lowercase()),
                _ => words.push(Token {
                    start: at,
                    end: at,
                    word: c.to_ascii_lowercase().to_string(),
                }),
            }
            if let Some(token) = words.last_mut() {
                token.end = at + c.len_utf8();
            }
        }
        last = k;
    }
    words
}

fn english_at(w: &[&str], i: usize, cal: &Calendar) -> Match {
    let at = |k: usize| w.get(i + k).copied().unwrap_or("");
    let lead = usize::from(at(0) == "the");
    // The longer phrase owns its "yesterday".
    if at(lead) == "day" && at(lead + 1) == "before" && at(lead + 2) == "yesterday" {
        return Some((lead + 3, TimePhrase::Days { from: -2, to: -1 }));
    }
    match at(0) {
        "yesterday" => return Some((1, TimePhrase::Days { from: -1, to: 0 })),
        "today" | "tonight" => return Some((1, TimePhrase::Days { from: 0, to: 1 })),
        _ => {}
    }
    if let Some((count, n)) = english_count(w, i)
        && let Some(unit) = english_unit(at(n))
        && at(n + 1) == "ago"
    {
        return Some((n + 2, TimePhrase::Ago { count, unit }));
    }
    if let found @ Some(_) = english_last(w, i, cal) {
        return found;
    }
    if at(0) == "this" {
        match at(1) {
            "week" => return Some((2, TimePhrase::ThisWeek)),
            "month" => return Some((2, TimePhrase::ThisMonth)),
            _ => {}
        }
    }
    // A preposition belongs to the phrase it introduces: "in March", "during 2021", "on Monday".
    if matches!(at(0), "in" | "during" | "on") {
        if at(0) == "on"
            && let Some(weekday) = weekday_name(at(1))
        {
            return Some((2, TimePhrase::OnWeekday(weekday)));
        }
        if at(0) != "on"
            && let Some(year) = year_number(at(1))
            && month_name(at(2)).is_none()
        {
            return Some((2, TimePhrase::Year(year)));
        }
        return english_calendar(w, i + 1).map(|(used, phrase)| (used + 1, phrase));
    }
    english_calendar(w, i)
}

/// "last/past weekend", "last Tuesday", "[the] last/past [N] days", "last week", "last month",
/// "last year".
fn english_last(w: &[&str], i: usize, cal: &Calendar) -> Match {
    let at = |k: usize| w.get(i + k).copied().unwrap_or("");
    let the = at(0) == "the";
    let lead = usize::from(the);
    let word = at(lead);
    if word != "last" && word != "past" {
        return None;
    }
    let next = at(lead + 1);
    if next == "weekend" {
        return Some((lead + 2, TimePhrase::LastWeekend));
    }
    if next == "week" && at(lead + 2) == "end" {
        return Some((lead + 3, TimePhrase::LastWeekend));
    }
    if word == "last"
        && let Some(weekday) = weekday_name(next)
    {
        return Some((lead + 2, TimePhrase::LastWeekday(weekday)));
    }
    if let Some((count, n)) = english_count(w, i + lead + 1)
        && let Some(unit) = english_unit(at(lead + 1 + n))
    {
        return Some((lead + n + 2, TimePhrase::Past { n: count.n, unit }));
    }
    // "the last week" and "past week" mean the last seven days; a bare "last week" means the
    // calendar week before this one.
    if let Some(unit) = english_unit(next)
        && (the || word == "past")
    {
        return Some((lead + 2, TimePhrase::Past { n: 1, unit }));
    }
    if !the {
        match next {
            "week" => return Some((2, TimePhrase::LastWeek)),
            "month" => return Some((2, TimePhrase::LastMonth)),
            "year" => return Some((2, TimePhrase::Year(cal.year - 1))),
            _ => {}
        }
    }
    None
}

/// Month names and dates: "March", "March 15th", "15th of March", "March 2022".
fn english_calendar(w: &[&str], i: usize) -> Match {
    let at = |k: usize| w.get(i + k).copied().unwrap_or("");
    if let Some(month) = month_name(at(0)) {
        if let Some((day, _)) = day_of_month(at(1)) {
            let year = year_number(at(2));
            let used = 2 + usize::from(year.is_some());
            return Some((used, TimePhrase::Date { month, day, year }));
        }
        if let Some(year) = year_number(at(1)) {
            let year = Some(year);
            return Some((2, TimePhrase::Month { month, year }));
        }
        // "may" is far more often the verb; only a preposition makes it the month.
        let after_preposition = i > 0 && matches!(w[i - 1], "in" | "during" | "of");
        let phrase = TimePhrase::Month { month, year: None };
        return (month != 5 || after_preposition).then_some((1, phrase));
    }
    let (day, ordinal) = day_of_month(at(0))?;
    if at(1) == "of"
        && let Some(month) = month_name(at(2))
    {
        let year = year_number(at(3));
        let used = 3 + usize::from(year.is_some());
        return Some((used, TimePhrase::Date { month, day, year }));
    }
    let month = month_name(at(1)).filter(|&m| ordinal || m != 5)?;
    let year = year_number(at(2));
    let used = 2 + usize::from(year.is_some());
    Some((used, TimePhrase::Date { month, day, year }))
}

/// A count starting at word `i` and how many words it used.
fn english_count(w: &[&str], i: usize) -> Option<(Count, usize)> {
    let at = |k: usize| w.get(i + k).copied().unwrap_or("");
    let of = |k: usize| usize::from(at(k) == "of");
    let word = at(0);
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit()) {
        return word.parse().ok().map(|n| (exact(n), 1));
    }
    const WORDS: [&str; 12] = [
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
        "twelve",
    ];
    if let Some(n) = WORDS.iter().position(|&x| x == word) {
        return Some((exact(n as i64 + 1), 1));
    }
    match word {
        "a" | "an" => Some(match at(1) {
            "few" => (vague(3), 2),
            "couple" => (vague(2), 2 + of(2)),
            _ => (exact(1), 1),
        }),
        "few" | "several" => Some((vague(3), 1)),
        "couple" => Some((vague(2), 1 + of(1))),
        _ => None,
    }
}

fn english_unit(word: &str) -> Option<Unit> {
    match word {
        "day" | "days" => Some(Unit::Day),
        "week" | "weeks" => Some(Unit::Week),
        "month" | "months" => Some(Unit::Month),
        "year" | "years" => Some(Unit::Year),
        _ => None,
    }
}

fn month_name(word: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = [
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
    MONTHS.iter().position(|&m| m == word).map(|m| m as i64 + 1)
}

/// The English names of the days of the week, Monday first, in lower case.
pub const ENGLISH_WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// 0 = Monday … 6 = Sunday.
fn weekday_name(word: &str) -> Option<i64> {
    ENGLISH_WEEKDAYS
        .iter()
        .position(|&d| d == word)
        .map(|d| d as i64)
}

/// "15" or "15th" as a day of the month, and whether it carried an ordinal suffix.
fn day_of_month(word: &str) -> Option<(i64, bool)> {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let (number, suffix) = word.split_at(digits);
    if !(1..=2).contains(&digits) || !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    let d: i64 = number.parse().ok()?;
    (1..=31).contains(&d).then_some((d, !suffix.is_empty()))
}

fn year_number(word: &str) -> Option<i64> {
    if word.len() != 4 || !word.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    word.parse().ok().filter(|y| (1000..=9999).contains(y))
}
