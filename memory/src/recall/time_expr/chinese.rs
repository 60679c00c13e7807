//! Chinese time expressions, matched character by character.

use super::*;

pub(super) fn find(text: &str, cal: &Calendar, found: &mut Vec<Found>) {
    let offsets: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    let cs: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        match chinese_at(&cs, i, cal) {
            Some((used, phrase)) => {
                let used = used.max(1);
                let end = offsets.get(i + used).copied().unwrap_or(text.len());
                found.push(Found {
                    start: offsets[i],
                    end,
                    phrase,
                });
                i += used;
            }
            // A number that starts nothing is skipped whole, so "二十五月" is not read as "五月".
            None => i += numeral_run(&cs, i).max(1),
        }
    }
}

/// Whether the characters from `i` on spell `lit`.
fn spells(cs: &[char], i: usize, lit: &str) -> bool {
    let mut rest = cs.iter().skip(i);
    lit.chars().all(|c| rest.next() == Some(&c))
}

/// The first of `lits` spelled from `i` on, and its length in characters.
fn spells_any(cs: &[char], i: usize, lits: &[&str]) -> Option<usize> {
    lits.iter()
        .find(|lit| spells(cs, i, lit))
        .map(|lit| lit.chars().count())
}

/// Words ending in 前 whose 前 is not the start of 前天 ("之前天天", "提前天数").
const NOT_BEFORE_YESTERDAY: &str = "之以提目眼面事生";

fn chinese_at(cs: &[char], i: usize, cal: &Calendar) -> Match {
    let s = |k: usize, lit: &str| spells(cs, i + k, lit);
    let days = |from: i64, to: i64| TimePhrase::Days { from, to };
    if s(0, "前几天") {
        let (count, unit) = (vague(3), Unit::Day);
        return Some((3, TimePhrase::Ago { count, unit }));
    }
    if s(0, "大前天") {
        return Some((3, days(-3, -2)));
    }
    if s(0, "前天") && !(i > 0 && NOT_BEFORE_YESTERDAY.contains(cs[i - 1])) {
        return Some((2, days(-2, -1)));
    }
    if let Some(n) = spells_any(cs, i, &["昨天", "昨日", "昨晚"]) {
        return Some((n, days(-1, 0)));
    }
    if let Some(n) = spells_any(cs, i, &["今天", "今日", "今晚"]) {
        return Some((n, days(0, 1)));
    }
    if let Some(n) = spells_any(cs, i, &["上个周末", "上周末"]) {
        return Some((n, TimePhrase::LastWeekend));
    }
    if cs[i] == '上'
        && let Some(n) = spells_any(
            cs,
            i + 1,
            &["个星期", "个礼拜", "个周", "星期", "礼拜", "周"],
        )
    {
        return Some(match cs.get(i + 1 + n).copied().and_then(chinese_weekday) {
            Some(weekday) => (n + 2, TimePhrase::WeekdayLastWeek(weekday)),
            None => (n + 1, TimePhrase::LastWeek),
        });
    }
    if let Some(n) = spells_any(cs, i, &["上个月", "上月"]) {
        return Some((n, TimePhrase::LastMonth));
    }
    if let Some(n) = spells_any(cs, i, &["这个月", "本月", "这月"]) {
        return Some((n, TimePhrase::ThisMonth));
    }
    let this_week = [
        "这个星期",
        "这个礼拜",
        "这个周",
        "这星期",
        "这礼拜",
        "本星期",
        "这周",
        "本周",
    ];
    if let Some(n) = spells_any(cs, i, &this_week) {
        return Some((n, TimePhrase::ThisWeek));
    }
    if let found @ Some(_) = chinese_past(cs, i) {
        return found;
    }
    if let found @ Some(_) = chinese_ago(cs, i) {
        return found;
    }
    // "去年" alone is the year; "去年三月" is a month of it, read from the month on.
    if let Some(back) = ["今年", "去年", "前年"].iter().position(|y| s(0, y)) {
        return Some(match chinese_calendar(cs, i + 2, cal) {
            Some((used, phrase)) => (used + 2, phrase),
            None => (2, TimePhrase::Year(cal.year - back as i64)),
        });
    }
    chinese_calendar(cs, i, cal)
}

/// "最近N天", "过去N周", "这N天" (also "最近这几天", "过去的一年").
fn chinese_past(cs: &[char], i: usize) -> Match {
    let mut j = match spells_any(cs, i, &["最近", "过去"]) {
        Some(n) => n + spells_any(cs, i + n, &["的", "这"]).unwrap_or(0),
        None if cs[i] == '这' => 1,
        None => return None,
    };
    let (count, n) = chinese_count(cs, i + j)?;
    j += n;
    let (unit, n, _) = chinese_unit(cs, i + j)?;
    Some((j + n, TimePhrase::Past { n: count.n, unit }))
}

/// "N天前", "两周前", "三个月之前", "几年前".
fn chinese_ago(cs: &[char], i: usize) -> Match {
    let (count, n) = chinese_count(cs, i)?;
    let (unit, u, bare_month) = chinese_unit(cs, i + n)?;
    // "2019年前" is a calendar year, not two thousand years.
    if unit == Unit::Year && count.n >= 1000 {
        return None;
    }
    // "三月之前" is "before March"; only "三月前" is read as months ago.
    let before: &[&str] = if bare_month {
        &["前"]
    } else {
        &["前", "之前", "以前"]
    };
    let b = spells_any(cs, i + n + u, before)?;
    Some((n + u + b, TimePhrase::Ago { count, unit }))
}

/// "三月", "3月份", "十一月", "3月15日", "三月十五号", "2022年3月", "去年三月".
fn chinese_calendar(cs: &[char], i: usize, cal: &Calendar) -> Match {
    let mut j = 0;
    let mut year = None;
    if let Some((y, n)) = chinese_exact(cs, i)
        && cs.get(i + n) == Some(&'年')
        && (1000..=9999).contains(&y)
    {
        year = Some(y);
        j = n + 1;
    } else if i >= 2 {
        year = match (cs[i - 2], cs[i - 1]) {
            ('去', '年') => Some(cal.year - 1),
            ('今', '年') => Some(cal.year),
            ('前', '年') => Some(cal.year - 2),
            _ => None,
        };
    }
    // "2021年" alone is the year ("2019年前", before it, is not).
    let whole_year = match year {
        Some(y) if j > 0 && spells_any(cs, i + j, &["前", "以前", "之前"]).is_none() => {
            Some((j, TimePhrase::Year(y)))
        }
        _ => None,
    };
    // "两月" is two months, never February.
    if cs.get(i + j) == Some(&'两') {
        return whole_year;
    }
    let Some((month, n)) = chinese_exact(cs, i + j) else {
        return whole_year;
    };
    if !(1..=12).contains(&month) || cs.get(i + j + n) != Some(&'月') {
        return whole_year;
    }
    j += n + 1;
    if cs.get(i + j) == Some(&'份') {
        return Some((j + 1, TimePhrase::Month { month, year }));
    }
    if let Some((day, n)) = chinese_exact(cs, i + j)
        && matches!(cs.get(i + j + n), Some('日' | '号'))
    {
        return Some((j + n + 1, TimePhrase::Date { month, day, year }));
    }
    Some((j, TimePhrase::Month { month, year }))
}

fn chinese_unit(cs: &[char], i: usize) -> Option<(Unit, usize, bool)> {
    let weeks = ["个星期", "个礼拜", "个周", "星期", "礼拜", "周"];
    if let Some(n) = spells_any(cs, i, &weeks) {
        return Some((Unit::Week, n, false));
    }
    if spells(cs, i, "个月") {
        return Some((Unit::Month, 2, false));
    }
    match cs.get(i)? {
        '天' | '日' => Some((Unit::Day, 1, false)),
        '月' => Some((Unit::Month, 1, true)),
        '年' => Some((Unit::Year, 1, false)),
        _ => None,
    }
}

/// 一 = Monday … 六 = Saturday, 日/天 = Sunday, as 0–6.
fn chinese_weekday(c: char) -> Option<i64> {
    "一二三四五六日"
        .chars()
        .position(|d| d == c)
        .map(|d| d as i64)
        .or((c == '天').then_some(6))
}

fn chinese_digit(c: char) -> Option<i64> {
    match c {
        '零' | '〇' => Some(0),
        '一' => Some(1),
        '二' | '两' => Some(2),
        '三' => Some(3),
        '四' => Some(4),
        '五' => Some(5),
        '六' => Some(6),
        '七' => Some(7),
        '八' => Some(8),
        '九' => Some(9),
        _ => None,
    }
}

fn is_chinese_numeral(c: char) -> bool {
    chinese_digit(c).is_some() || c == '十' || c == '百'
}

/// Length of the run of ASCII digits, or of Chinese numerals, starting at `i`.
fn numeral_run(cs: &[char], i: usize) -> usize {
    let digit = |c: &char| c.is_ascii_digit();
    let run = |pred: &dyn Fn(&char) -> bool| cs[i..].iter().take_while(|c| pred(c)).count();
    match cs.get(i) {
        Some(c) if c.is_ascii_digit() => run(&digit),
        Some(&c) if is_chinese_numeral(c) => run(&|c: &char| is_chinese_numeral(*c)),
        _ => 0,
    }
}

/// An exact number at `i` (ASCII digits or Chinese numerals) and its length.
fn chinese_exact(cs: &[char], i: usize) -> Option<(i64, usize)> {
    let len = numeral_run(cs, i);
    if len == 0 {
        return None;
    }
    let run = &cs[i..i + len];
    if run[0].is_ascii_digit() {
        return run
            .iter()
            .collect::<String>()
            .parse()
            .ok()
            .map(|n| (n, len));
    }
    let value = if run.iter().any(|&c| c == '十' || c == '百') {
        // 十一, 二十五, 一百零五: digits scaled by the unit character after them.
        let (mut total, mut pending) = (0i64, None::<i64>);
        for &c in run {
            match c {
                '十' | '百' => {
                    let scale = if c == '十' { 10 } else { 100 };
                    total = total.checked_add(pending.take().unwrap_or(1) * scale)?;
                }
                '零' | '〇' => {}
                _ if pending.is_some() => return None,
                _ => pending = chinese_digit(c),
            }
        }
        total.checked_add(pending.unwrap_or(0))?
    } else if len == 1 || len == 4 {
        // One digit, or a year spelled digit by digit (二〇二三).
        run.iter().try_fold(0i64, |acc, &c| {
            acc.checked_mul(10)?.checked_add(chinese_digit(c)?)
        })?
    } else {
        return None;
    };
    Some((value, len))
}

/// A count at `i`: an exact number, "几" (a few), or "两三" style neighbours (vague, the larger).
fn chinese_count(cs: &[char], i: usize) -> Option<(Count, usize)> {
    if cs.get(i) == Some(&'几') {
        return Some((vague(3), 1));
    }
    if let Some((n, len)) = chinese_exact(cs, i) {
        return Some((exact(n), len));
    }
    let first = chinese_digit(*cs.get(i)?)?;
    let second = chinese_digit(*cs.get(i + 1)?)?;
    (numeral_run(cs, i) == 2 && second == first + 1).then_some((vague(second), 2))
}
