use super::*;
use crate::recall::clock::{civil_from_days, days_from_civil, days_in_month, weekday_from_days};
use proptest::prelude::*;

/// Unix ms of `y-m-d h:mi` UTC.
fn utc(y: i64, m: i64, d: i64, h: i64, mi: i64) -> i64 {
    days_from_civil(y, m, d) * DAY + (h * 60 + mi) * 60_000
}

/// The reference clock: 2023-05-05 03:53 UTC, a Friday.
fn friday() -> i64 {
    utc(2023, 5, 5, 3, 53)
}

fn local(ms: i64, off_secs: i64) -> String {
    let l = ms + off_secs * 1000;
    let (y, m, d) = civil_from_days(l.div_euclid(DAY));
    let minutes = l.rem_euclid(DAY) / 60_000;
    if minutes == 0 {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}",
            minutes / 60,
            minutes % 60
        )
    }
}

fn at_offset(query: &str, now: i64, off_secs: i64) -> Vec<String> {
    question_windows(query, now, off_secs)
        .iter()
        .map(|w| {
            format!(
                "{}..{}",
                local(w.start_ms, off_secs),
                local(w.end_ms, off_secs)
            )
        })
        .collect()
}

fn windows_at(query: &str, now: i64) -> Vec<String> {
    at_offset(query, now, 0)
}

fn windows(query: &str) -> Vec<String> {
    windows_at(query, friday())
}

fn one(window: &str) -> Vec<String> {
    vec![window.to_string()]
}

#[test]
fn reference_day_is_a_friday() {
    assert_eq!(weekday_from_days(0), 3, "1970-01-01 was a Thursday");
    assert_eq!(weekday_from_days(days_from_civil(2023, 5, 5)), 4);
    assert_eq!(weekday_from_days(days_from_civil(2023, 5, 7)), 6);
    assert_eq!(days_in_month(2024, 2), 29);
    assert_eq!(days_in_month(1900, 2), 28);
    assert_eq!(days_in_month(2000, 2), 29);
}

#[test]
fn window_is_half_open() {
    let w = TimeWindow {
        start_ms: 10,
        end_ms: 20,
    };
    assert!(w.contains(10) && w.contains(19));
    assert!(!w.contains(9) && !w.contains(20));
}

#[test]
fn english_days_weeks_months_years_ago() {
    assert_eq!(windows("3 days ago"), one("2023-05-01..2023-05-04"));
    assert_eq!(windows("a day ago"), one("2023-05-03..2023-05-06"));
    assert_eq!(
        windows("What gardening-related activity did I do two weeks ago?"),
        one("2023-04-17 12:00..2023-04-25 12:00")
    );
    assert_eq!(
        windows("three months ago"),
        one("2023-01-18 16:19..2023-02-18 16:19")
    );
    assert_eq!(
        windows("a year ago"),
        one("2021-11-03 18:00..2022-11-03 18:00")
    );
}

#[test]
fn english_vague_counts_widen_with_the_count() {
    // centre today − 3 days, half-width 1.8 days.
    let few_days = one("2023-04-30 04:48..2023-05-03 19:12");
    assert_eq!(windows("a few days ago"), few_days);
    assert_eq!(windows("several days ago"), few_days);
    // centre today − 14 days, half-width 8.4 days.
    assert_eq!(
        windows("a couple of weeks ago"),
        one("2023-04-12 14:24..2023-04-29 09:36")
    );
    assert_eq!(
        windows("couple weeks ago"),
        windows("a couple of weeks ago")
    );
}

#[test]
fn english_yesterday_and_the_day_before() {
    assert_eq!(windows("yesterday"), one("2023-05-04..2023-05-05"));
    // One window: the phrase owns its "yesterday".
    assert_eq!(
        windows("What did I eat the day before yesterday?"),
        one("2023-05-03..2023-05-04")
    );
}

#[test]
fn english_last_weekend() {
    assert_eq!(windows("last weekend"), one("2023-04-29..2023-05-01"));
    assert_eq!(windows("the past weekend"), one("2023-04-29..2023-05-01"));
    let sunday = utc(2023, 5, 7, 12, 0);
    assert_eq!(
        windows_at("last weekend", sunday),
        one("2023-05-06..2023-05-08")
    );
    let saturday = utc(2023, 5, 6, 12, 0);
    assert_eq!(
        windows_at("last weekend", saturday),
        one("2023-04-29..2023-05-01")
    );
}

#[test]
fn english_last_weekday() {
    assert_eq!(
        windows("Who did I meet with during the lunch last Tuesday?"),
        one("2023-05-01..2023-05-04")
    );
    // The same weekday as today means a week back.
    assert_eq!(windows("last Friday"), one("2023-04-27..2023-04-30"));
    assert_eq!(windows("last sunday"), one("2023-04-29..2023-05-02"));
}

#[test]
fn english_weeks_and_months() {
    assert_eq!(windows("last week"), one("2023-04-21..2023-05-02"));
    assert_eq!(windows("this week"), one("2023-04-28..2023-05-06"));
    assert_eq!(
        windows("What certification did I complete last month?"),
        one("2023-03-29..2023-05-04")
    );
    assert_eq!(windows("this month"), one("2023-04-30..2023-05-06"));
    let january = utc(2023, 1, 10, 12, 0);
    assert_eq!(
        windows_at("last month", january),
        one("2022-11-28..2023-01-04")
    );
}

#[test]
fn english_month_names() {
    let q = "How many doctor's appointments did I go to in March?";
    assert_eq!(
        windows_at(q, utc(2023, 3, 20, 9, 0)),
        one("2023-02-28..2023-04-04")
    );
    assert_eq!(
        windows_at(q, utc(2023, 2, 10, 9, 0)),
        one("2022-02-28..2022-04-04")
    );
    assert_eq!(windows("I may go there"), Vec::<String>::new());
    assert_eq!(windows("in May"), one("2023-04-30..2023-06-04"));
    assert_eq!(
        windows("during the month of May"),
        one("2023-04-30..2023-06-04")
    );
    assert_eq!(windows("in December"), one("2022-11-30..2023-01-04"));
    assert_eq!(windows("March 2021"), one("2021-02-28..2021-04-04"));
}

#[test]
fn english_dates() {
    for q in ["March 15th", "on March 15", "the 15th of March", "15 March"] {
        assert_eq!(windows(q), one("2023-03-14..2023-03-17"), "{q}");
    }
    assert_eq!(windows("December 25"), one("2022-12-24..2022-12-27"));
    assert_eq!(windows("March 15, 2021"), one("2021-03-14..2021-03-17"));
    // The latest 29 February not after today.
    assert_eq!(windows("February 29th"), one("2020-02-28..2020-03-02"));
}

#[test]
fn english_the_past_n_units() {
    // 1.2 × 3 days + 2 days back, through the end of today.
    assert_eq!(
        windows("in the last 3 days"),
        one("2023-04-29 09:36..2023-05-06")
    );
    // "the last week" is the last seven days, not the calendar week before.
    assert_eq!(
        windows("the last week"),
        one("2023-04-24 14:24..2023-05-06")
    );
    assert_eq!(windows("past week"), one("2023-04-24 14:24..2023-05-06"));
    assert_eq!(
        windows("over the past few weeks"),
        windows("the past three weeks")
    );
    assert_eq!(
        windows("the past two months"),
        one("2023-02-18 22:39..2023-05-06")
    );
}

#[test]
fn chinese_ago() {
    assert_eq!(windows("两周前我做了什么"), windows("two weeks ago"));
    assert_eq!(windows("三天前"), one("2023-05-01..2023-05-04"));
    // 三天前 followed by 天气 contains 前天 but is not the day before yesterday.
    assert_eq!(windows("三天前天气很好"), one("2023-05-01..2023-05-04"));
    assert_eq!(windows("三个月前"), windows("three months ago"));
    assert_eq!(windows("3个星期前"), windows("3 weeks ago"));
    assert_eq!(windows("一年前"), windows("a year ago"));
    assert_eq!(windows("二十天之前"), windows("20 days ago"));
    assert_eq!(windows("几天前"), windows("a few days ago"));
    assert_eq!(windows("前几天"), windows("a few days ago"));
    assert_eq!(windows("我两个月没去了"), Vec::<String>::new());
}

#[test]
fn chinese_yesterday_and_the_day_before() {
    assert_eq!(windows("昨天"), one("2023-05-04..2023-05-05"));
    assert_eq!(windows("前天我去了公园"), one("2023-05-03..2023-05-04"));
    assert_eq!(windows("我之前天天跑步"), Vec::<String>::new());
}

#[test]
fn chinese_weeks_and_weekdays() {
    for q in ["上周末", "上个周末去哪了"] {
        assert_eq!(windows(q), one("2023-04-29..2023-05-01"), "{q}");
    }
    // Tuesday of last week (25 April), not this week's (2 May) as "last Tuesday" would be.
    for q in ["上周二我和谁吃了午饭", "上星期二", "上个星期二", "上礼拜二"] {
        assert_eq!(windows(q), one("2023-04-24..2023-04-27"), "{q}");
    }
    assert_eq!(windows("上周日"), windows("last Sunday"));
    assert_eq!(windows("上星期天"), windows("last Sunday"));
    for q in ["上周", "上个星期", "上星期", "上礼拜"] {
        assert_eq!(windows(q), windows("last week"), "{q}");
    }
    for q in ["这周", "本周", "这个星期"] {
        assert_eq!(windows(q), windows("this week"), "{q}");
    }
}

#[test]
fn chinese_months() {
    for q in ["上个月", "上月"] {
        assert_eq!(windows(q), windows("last month"), "{q}");
    }
    for q in ["这个月", "本月"] {
        assert_eq!(windows(q), windows("this month"), "{q}");
    }
    assert_eq!(windows("三月份我去了几次医院"), windows("in March"));
    assert_eq!(windows("3月"), windows("in March"));
    assert_eq!(windows("十二月"), one("2022-11-30..2023-01-04"));
    assert_eq!(windows("十一月"), windows("in November"));
    assert_eq!(windows("二十五月"), Vec::<String>::new());
    assert_eq!(windows("2021年3月"), windows("March 2021"));
    assert_eq!(windows("去年五月"), one("2022-04-30..2022-06-04"));
}

#[test]
fn chinese_dates() {
    for q in ["3月15日", "三月十五号", "3月15号那天"] {
        assert_eq!(windows(q), one("2023-03-14..2023-03-17"), "{q}");
    }
    assert_eq!(windows("2021年3月15日"), one("2021-03-14..2021-03-17"));
}

#[test]
fn chinese_the_past_n_units() {
    assert_eq!(windows("最近三天"), windows("the last 3 days"));
    assert_eq!(windows("过去两周"), windows("the past two weeks"));
    assert_eq!(windows("这几天"), windows("the past few days"));
    assert_eq!(windows("最近一个月"), windows("the past month"));
    assert_eq!(windows("最近这两天"), windows("the past 2 days"));
}

#[test]
fn today_years_and_on_a_weekday() {
    // The present, or a day that tense would have to pick: no window to search.
    for q in [
        "what did I buy today",
        "今天",
        "a film for tonight",
        "on Saturday mornings",
    ] {
        assert_eq!(windows(q), Vec::<String>::new(), "{q}");
    }
    assert_eq!(windows("last year"), one("2021-12-31..2023-01-04"));
    assert_eq!(windows("去年"), windows("last year"));
    assert_eq!(windows("in 2021"), one("2020-12-31..2022-01-04"));
    assert_eq!(windows("2021年"), windows("in 2021"));
    assert_eq!(windows("2021年前"), Vec::<String>::new());
    // "去年五月" is one phrase, a month of last year, not the year and a month.
    assert_eq!(windows("去年五月"), one("2022-04-30..2022-06-04"));
}

#[test]
fn windows_come_in_order_of_appearance() {
    let mixed = windows("上个月 and yesterday");
    assert_eq!(
        mixed,
        [windows("last month"), windows("yesterday")].concat()
    );
    let mixed = windows("yesterday 和上个月");
    assert_eq!(
        mixed,
        [windows("yesterday"), windows("last month")].concat()
    );
}

#[test]
fn utc_offset_moves_the_local_day() {
    // 03:53 UTC is still the evening of 4 May five hours west.
    let west = -5 * 3600;
    assert_eq!(
        at_offset("yesterday", friday(), west),
        one("2023-05-03..2023-05-04")
    );
    let w = question_windows("yesterday", friday(), west);
    assert_eq!(w[0].start_ms, utc(2023, 5, 3, 5, 0));
    // Eight hours east it is already midday of 5 May, as in UTC.
    let east = 8 * 3600;
    assert_eq!(
        at_offset("昨天", friday(), east),
        one("2023-05-04..2023-05-05")
    );
    assert_eq!(
        question_windows("昨天", friday(), east)[0].start_ms,
        utc(2023, 5, 3, 16, 0)
    );
}

#[test]
fn no_time_no_window() {
    for q in [
        "",
        "What degree did I graduate with?",
        "我喜欢吃面",
        "a few",
        "last",
    ] {
        assert!(question_windows(q, friday(), 0).is_empty(), "{q}");
    }
}

fn vocabulary() -> impl Strategy<Value = String> {
    let words = vec![
        "the",
        "last",
        "past",
        "a",
        "few",
        "couple",
        "of",
        "3",
        "99999999999",
        "0",
        "two",
        "day",
        "days",
        "week",
        "end",
        "weekend",
        "month",
        "year",
        "ago",
        "in",
        "may",
        "march",
        "29th",
        "february",
        "9999",
        "yesterday",
        "before",
        "this",
        "tuesday",
        "前",
        "天",
        "几",
        "上",
        "个",
        "周",
        "月",
        "年",
        "日",
        "号",
        "份",
        "十",
        "百",
        "两",
        "三",
        "二",
        "〇",
        "零",
        "最近",
        "过去",
        "这",
        "去年",
        "大",
        "昨",
        "星期",
        "礼拜",
        "末",
        "之前",
    ];
    (
        prop::collection::vec(prop::sample::select(words), 0..10),
        any::<bool>(),
    )
        .prop_map(|(parts, spaced)| parts.join(if spaced { " " } else { "" }))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A statement's reading never panics on any text, clock or zone, and what it finds is a
    /// non-empty span named by words the text holds.
    #[test]
    fn any_statement_resolves_to_a_span_of_its_own_words(
        sentence in prop_oneof![any::<String>(), vocabulary()],
        said in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), -4_000_000_000_000i64..4_000_000_000_000],
        offset in prop_oneof![any::<i64>(), -50_400i64..=50_400],
    ) {
        if let Some(date) = resolve_date(&sentence, said, offset) {
            prop_assert!(date.start_ms < date.end_ms, "{sentence:?} {date:?}");
            prop_assert!(!date.phrase.is_empty() && sentence.contains(&date.phrase), "{sentence:?} {date:?}");
        }
    }

    #[test]
    fn any_input_yields_only_nonempty_windows(
        query in prop_oneof![any::<String>(), vocabulary()],
        now in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), -4_000_000_000_000i64..4_000_000_000_000],
        offset in prop_oneof![any::<i64>(), -50_400i64..=50_400],
    ) {
        for w in question_windows(&query, now, offset) {
            prop_assert!(w.start_ms < w.end_ms, "{query:?} {w:?}");
        }
    }
}
