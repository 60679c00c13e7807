//! The rule distiller: fixed first-person patterns in Chinese and English (the original's
//! 我叫X / 我住在X / 我喜欢X / 我X岁 / 我的工作是X and their English forms), plus the ones that
//! change a fact rather than state it: "I moved to", "我搬到", "I'm now working at",
//! "I no longer…", "actually…".

use super::clause::{Clause, chinese_object, hypothetical_before, word_matches};
use super::english_object::{english_liked_objects, english_object};
use super::noun_phrase::a_kind_of_place;
use crate::{EventSpec, Fact, FactMode, Statement};
use hearth_memory::ResolvedDate;

/// The name the speaker is stored under.
pub const USER: &str = "user";

/// Whether `name` is how the speaker names themself ("me", "I", "我"…) or the user's own
/// entity, so a tool's "me" and a model's "I" both land on [`USER`].
pub(crate) fn names_the_speaker(name: &str) -> bool {
    matches!(
        name.trim().to_lowercase().as_str(),
        "user" | "the user" | "i" | "me" | "myself" | "我" | "自己"
    )
}

/// One fixed pattern: the words before the object, what it states, and the dated event it
/// also records.
struct Rule {
    prefix: &'static str,
    predicate: &'static str,
    mode: FactMode,
    kind: &'static str,
    /// Verb phrase of the dated event ("moved to"): recorded with the object when present.
    event: Option<&'static str>,
    /// Chinese patterns with the object in the middle (我在X工作) name what closes it.
    until: Option<&'static str>,
}

const fn rule(
    prefix: &'static str,
    predicate: &'static str,
    mode: FactMode,
    kind: &'static str,
) -> Rule {
    Rule {
        prefix,
        predicate,
        mode,
        kind,
        event: None,
        until: None,
    }
}

const fn evented(
    prefix: &'static str,
    predicate: &'static str,
    mode: FactMode,
    kind: &'static str,
    event: &'static str,
) -> Rule {
    Rule {
        prefix,
        predicate,
        mode,
        kind,
        event: Some(event),
        until: None,
    }
}

const fn framed(
    prefix: &'static str,
    until: &'static str,
    mode: FactMode,
    event: Option<&'static str>,
) -> Rule {
    Rule {
        prefix,
        predicate: "works_at",
        mode,
        kind: "organization",
        event,
        until: Some(until),
    }
}

use FactMode::{Began, Ended, Holds};

/// English rules, longest and most specific first: the first match in a clause wins.
const ENGLISH: &[Rule] = &[
    rule("my name is ", "name", Holds, "person"),
    rule("i'm called ", "name", Holds, "person"),
    rule("call me ", "name", Holds, "person"),
    evented(
        "i no longer live in ",
        "lives_in",
        Ended,
        "place",
        "moved out of",
    ),
    evented(
        "i don't live in ",
        "lives_in",
        Ended,
        "place",
        "moved out of",
    ),
    evented("i moved to ", "lives_in", Began, "place", "moved to"),
    evented("i've moved to ", "lives_in", Began, "place", "moved to"),
    evented("i have moved to ", "lives_in", Began, "place", "moved to"),
    evented("i relocated to ", "lives_in", Began, "place", "moved to"),
    evented("i now live in ", "lives_in", Began, "place", "moved to"),
    rule("i live in ", "lives_in", Holds, "place"),
    rule("i'm living in ", "lives_in", Holds, "place"),
    evented(
        "i no longer work at ",
        "works_at",
        Ended,
        "organization",
        "left",
    ),
    evented(
        "i no longer work for ",
        "works_at",
        Ended,
        "organization",
        "left",
    ),
    evented(
        "i don't work at ",
        "works_at",
        Ended,
        "organization",
        "left",
    ),
    evented(
        "i quit my job at ",
        "works_at",
        Ended,
        "organization",
        "quit",
    ),
    evented(
        "i'm now working at ",
        "works_at",
        Began,
        "organization",
        "started working at",
    ),
    evented(
        "i now work at ",
        "works_at",
        Began,
        "organization",
        "started working at",
    ),
    evented(
        "i now work for ",
        "works_at",
        Began,
        "organization",
        "started working at",
    ),
    evented(
        "i started working at ",
        "works_at",
        Began,
        "organization",
        "started working at",
    ),
    evented(
        "i started working for ",
        "works_at",
        Began,
        "organization",
        "started working at",
    ),
    rule("i work at ", "works_at", Holds, "organization"),
    rule("i work for ", "works_at", Holds, "organization"),
    rule("i'm working at ", "works_at", Holds, "organization"),
    rule("my job is ", "job", Holds, "concept"),
    rule("i work as ", "job", Holds, "concept"),
    rule("i no longer like ", "likes", Ended, "concept"),
    rule("i don't like ", "dislikes", Holds, "concept"),
    rule("i dislike ", "dislikes", Holds, "concept"),
    rule("i hate ", "dislikes", Holds, "concept"),
    rule("i'm not a fan of ", "dislikes", Holds, "concept"),
    rule("i'm not a big fan of ", "dislikes", Holds, "concept"),
    rule("i'm not a huge fan of ", "dislikes", Holds, "concept"),
    // "What I love most about Dark Souls 3 is…"
    rule("what i love about ", "likes", Holds, "concept"),
    rule("what i love most about ", "likes", Holds, "concept"),
    rule("what i like about ", "likes", Holds, "concept"),
    rule("what i like most about ", "likes", Holds, "concept"),
    rule("i like ", "likes", Holds, "concept"),
    rule("i love ", "likes", Holds, "concept"),
    rule("i enjoy ", "likes", Holds, "concept"),
    rule("i've been enjoying ", "likes", Holds, "concept"),
    rule("i'm enjoying ", "likes", Holds, "concept"),
    rule("i've been loving ", "likes", Holds, "concept"),
    rule("i'm loving ", "likes", Holds, "concept"),
    rule("i'm into ", "likes", Holds, "concept"),
    rule("i've been into ", "likes", Holds, "concept"),
    rule("i'm a fan of ", "likes", Holds, "concept"),
    rule("i'm a big fan of ", "likes", Holds, "concept"),
    rule("i'm a huge fan of ", "likes", Holds, "concept"),
];

/// Chinese rules, same order.
const CHINESE: &[Rule] = &[
    rule("我的名字是", "name", Holds, "person"),
    rule("我的名字叫", "name", Holds, "person"),
    rule("我叫", "name", Holds, "person"),
    evented("我不再住在", "lives_in", Ended, "place", "搬离"),
    evented("我不住在", "lives_in", Ended, "place", "搬离"),
    evented("我搬到了", "lives_in", Began, "place", "搬到"),
    evented("我搬到", "lives_in", Began, "place", "搬到"),
    evented("我搬去了", "lives_in", Began, "place", "搬到"),
    evented("我搬去", "lives_in", Began, "place", "搬到"),
    evented("我现在住在", "lives_in", Began, "place", "搬到"),
    rule("我住在", "lives_in", Holds, "place"),
    framed("我不在", "工作", Ended, Some("离开")),
    framed("我现在在", "工作", Began, Some("开始在")),
    framed("我在", "工作", Holds, None),
    framed("我在", "上班", Holds, None),
    evented("我加入了", "works_at", Began, "organization", "加入"),
    rule("我的工作是", "job", Holds, "concept"),
    rule("我的职业是", "job", Holds, "concept"),
    rule("我不再喜欢", "likes", Ended, "concept"),
    rule("我不喜欢", "dislikes", Holds, "concept"),
    rule("我讨厌", "dislikes", Holds, "concept"),
    rule("我喜欢", "likes", Holds, "concept"),
];

/// What the fixed rules find in `clause`: the first match of each rule family (one fact and
/// its event; two likings for "I like hiking and jazz").
pub(crate) fn rule_statement(clause: &Clause, said_ms: i64) -> Statement {
    let mut statement = Statement {
        sentence: clause.sentence.clone(),
        ..Statement::default()
    };
    for rules in [ENGLISH, CHINESE] {
        if let Some(found) = first_match(clause, rules) {
            push(&mut statement, clause, said_ms, found);
        }
    }
    if let Some(age) = age(clause) {
        statement
            .facts
            .push(user_fact("age", &age, "quantity", Holds, clause));
    }
    statement
}

struct Found<'r> {
    rule: &'r Rule,
    /// What the rule's verb is said of: one thing, or two liked ("I like hiking and jazz").
    objects: Vec<String>,
    anymore: bool,
}

fn first_match<'r>(clause: &Clause, rules: &'r [Rule]) -> Option<Found<'r>> {
    rules.iter().find_map(|rule| {
        word_matches(&clause.lower, rule.prefix).find_map(|at| {
            let start = at + rule.prefix.len();
            if rule.prefix.is_ascii() {
                if hypothetical_before(clause, at, rule.prefix) {
                    return None;
                }
                let (objects, anymore) = if matches!(rule.predicate, "likes" | "dislikes") {
                    english_liked_objects(clause, start)?
                } else {
                    let (object, anymore) = english_object(clause, start)?;
                    (vec![object], anymore)
                };
                if rule.predicate == "lives_in" && objects.iter().any(|o| a_kind_of_place(o)) {
                    return None;
                }
                Some(Found {
                    rule,
                    objects,
                    anymore,
                })
            } else {
                let object = chinese_object(clause, start, rule.until)?;
                Some(Found {
                    rule,
                    objects: vec![object],
                    anymore: false,
                })
            }
        })
    })
}

fn push(statement: &mut Statement, clause: &Clause, said_ms: i64, found: Found<'_>) {
    let Found {
        rule,
        objects,
        anymore,
    } = found;
    // "I don't like X anymore" ends a liking rather than stating a dislike.
    let (predicate, mode) = match (rule.predicate, anymore) {
        ("dislikes", true) => ("likes", Ended),
        (p, _) => (p, rule.mode),
    };
    let mode = if clause.correction && mode == Holds {
        FactMode::Corrects
    } else {
        mode
    };
    for object in objects {
        statement
            .facts
            .push(user_fact(predicate, &object, rule.kind, mode, clause));
        let Some(verb) = rule.event else {
            continue;
        };
        let what = if verb.is_ascii() {
            format!("{verb} {object}")
        } else {
            format!("{verb}{object}")
        };
        statement.events.push(EventSpec {
            subject: USER.to_owned(),
            what,
            when: clause
                .date
                .clone()
                .unwrap_or_else(|| ResolvedDate::said(said_ms)),
            fact: Some(statement.facts.len() - 1),
        });
    }
}

pub(crate) fn user_fact(
    predicate: &str,
    object: &str,
    kind: &'static str,
    mode: FactMode,
    clause: &Clause,
) -> Fact {
    Fact {
        subject: USER.to_owned(),
        subject_kind: "person",
        predicate: predicate.to_owned(),
        object: object.to_owned(),
        object_kind: kind,
        mode,
        confidence: 0.9,
        valid_from: if mode == Holds {
            None
        } else {
            clause.date.clone()
        },
    }
}

/// "I am 34", "I'm 34 years old", "我34岁", "我今年三十四岁".
fn age(clause: &Clause) -> Option<String> {
    // "I am" reads as "I'm" in a clause's matching form.
    let prefix = "i'm ";
    for at in word_matches(&clause.lower, prefix) {
        let rest = &clause.lower[at + prefix.len()..];
        let mut words = rest.split_whitespace();
        let Some(n) = words.next().and_then(|w| w.parse::<u32>().ok()) else {
            continue;
        };
        // "I'm 32 years old, so…": the comma is not part of the words.
        let tail: Vec<&str> = words
            .take(2)
            .map(|w| w.trim_end_matches(|c: char| !c.is_alphanumeric()))
            .collect();
        let says_age = matches!(tail.as_slice(), ["years", "old"] | ["year", "old"] | [])
            || rest.trim().len() == n.to_string().len();
        if says_age && (1..=130).contains(&n) {
            return Some(n.to_string());
        }
    }
    let chars: Vec<char> = clause.text.chars().collect();
    for (i, _) in chars.iter().enumerate().filter(|&(_, c)| *c == '我') {
        let mut j = i + 1;
        if chars.get(j..j + 2) == Some(&['今', '年']) {
            j += 2;
        }
        let start = j;
        while chars
            .get(j)
            .is_some_and(|c| c.is_ascii_digit() || "一二两三四五六七八九十百".contains(*c))
        {
            j += 1;
        }
        if j > start && chars.get(j) == Some(&'岁') {
            let digits: String = chars[start..j].iter().collect();
            let n = digits
                .parse::<u32>()
                .ok()
                .or_else(|| chinese_number(&chars[start..j]))?;
            return (1..=130).contains(&n).then(|| n.to_string());
        }
    }
    None
}

/// 三十四 → 34, 十八 → 18, 一百零二 is out of scope (ages above 99 are written in digits).
fn chinese_number(chars: &[char]) -> Option<u32> {
    let digit = |c: char| {
        "零一二三四五六七八九"
            .chars()
            .position(|d| d == c)
            .map(|p| p as u32)
            .or((c == '两').then_some(2))
    };
    match chars {
        ['十'] => Some(10),
        [d] => digit(*d),
        ['十', u] => Some(10 + digit(*u)?),
        [t, '十'] => Some(digit(*t)? * 10),
        [t, '十', u] => Some(digit(*t)? * 10 + digit(*u)?),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::clause::clauses;
    use super::*;

    fn facts(text: &str) -> Vec<(String, String, FactMode)> {
        clauses(text, 1_700_000_000_000, 0)
            .iter()
            .flat_map(|c| rule_statement(c, 1_700_000_000_000).facts)
            .map(|f| (f.predicate, f.object, f.mode))
            .collect()
    }

    fn one(text: &str, predicate: &str, object: &str, mode: FactMode) {
        assert_eq!(
            facts(text),
            vec![(predicate.to_owned(), object.to_owned(), mode)],
            "{text}"
        );
    }

    #[test]
    fn a_condition_states_nothing_and_a_past_after_when_is_still_a_fact() {
        assert_eq!(facts("If I like the flat, I will sign"), vec![]);
        assert_eq!(facts("I always cook when I love the recipe"), vec![]);
        one(
            "When I moved to Lisbon I found a job",
            "lives_in",
            "Lisbon",
            Began,
        );
    }

    #[test]
    fn fans_and_what_one_is_into_are_likes_and_adverbs_after_i_change_nothing() {
        one("I'm not a big fan of nuts", "dislikes", "nuts", Holds);
        one("I'm a huge fan of jazz", "likes", "jazz", Holds);
        one(
            "I've been really into folk-rock lately",
            "likes",
            "folk-rock",
            Holds,
        );
        one(
            "I'm loving the weekly issues of The New Yorker",
            "likes",
            "New Yorker",
            Holds,
        );
        one("I actually really love sushi", "likes", "sushi", Holds);
        one("I still live in Porto", "lives_in", "Porto", Holds);
        one("I just moved to Lisbon", "lives_in", "Lisbon", Began);
        // "now" changes the fact: it is no filler.
        one("I now live in Braga", "lives_in", "Braga", Began);
    }

    /// Each pattern is written once, contracted: the long forms read as the short ones.
    #[test]
    fn i_am_and_do_not_read_as_their_contractions() {
        one("I am called Bo", "name", "Bo", Holds);
        one("I am living in Faro", "lives_in", "Faro", Holds);
        one("I do not live in Porto", "lives_in", "Porto", Ended);
        one("I am now working at Acme", "works_at", "Acme", Began);
        one("I do not like jazz", "dislikes", "jazz", Holds);
        one("I am not a big fan of nuts", "dislikes", "nuts", Holds);
        one("I am a fan of jazz", "likes", "jazz", Holds);
        one("I am into folk-rock", "likes", "folk-rock", Holds);
        one("I am 34 years old", "age", "34", Holds);
        one("I AM NOT a fan of olives", "dislikes", "olives", Holds);
    }

    #[test]
    fn a_kind_of_place_or_an_activity_about_it_states_nothing() {
        assert_eq!(facts("I live in the city, and I run"), vec![]);
        assert_eq!(facts("I live in a small town"), vec![]);
        assert_eq!(facts("I love listening to it on my turntable"), vec![]);
        one("I live in Mexico City", "lives_in", "Mexico City", Holds);
        // The activity with what it is of: its place stays out.
        one(
            "I love listening to jazz",
            "likes",
            "listening to jazz",
            Holds,
        );
        one("I like hiking in the mountains", "likes", "hiking", Holds);
        one(
            "I love experimenting with different seasonings and spices",
            "likes",
            "experimenting with different seasonings and spices",
            Holds,
        );
        one(
            "What I love most about Porto is the light",
            "likes",
            "Porto",
            Holds,
        );
    }

    #[test]
    fn two_things_liked_are_two_likings_unless_liked_as_one() {
        assert_eq!(
            facts("I like hiking and jazz"),
            vec![
                ("likes".to_owned(), "hiking".to_owned(), Holds),
                ("likes".to_owned(), "jazz".to_owned(), Holds)
            ]
        );
        one(
            "I love the combination of gin and honey",
            "likes",
            "gin and honey",
            Holds,
        );
        // An activity of its own, a clause, or a choice among options talked about.
        one(
            "I love trying different beers and enjoying the fall foliage",
            "likes",
            "trying different beers",
            Holds,
        );
        one("I like jazz and want to learn it", "likes", "jazz", Holds);
        assert_eq!(facts("I like the larger 1 TB SSD"), vec![]);
        assert_eq!(facts("I like the exercises you suggested"), vec![]);
        assert_eq!(facts("I like the Quinoa and Black Bean Salad idea"), vec![]);
        one(
            "I've been enjoying writing short stories lately",
            "likes",
            "writing short stories",
            Holds,
        );
        one(
            "I love the energy of live shows",
            "likes",
            "live shows",
            Holds,
        );
    }

    #[test]
    fn english_rules() {
        one("My name is Ana Costa.", "name", "Ana Costa", Holds);
        one("I live in Porto and I love it", "lives_in", "Porto", Holds);
        one("I moved to Lisbon last week", "lives_in", "Lisbon", Began);
        one("Last week I moved to Lisbon", "lives_in", "Lisbon", Began);
        one("I no longer live in Porto", "lives_in", "Porto", Ended);
        one(
            "Actually, I live in Braga",
            "lives_in",
            "Braga",
            FactMode::Corrects,
        );
        one(
            "I'm now working at Acme Corp",
            "works_at",
            "Acme Corp",
            Began,
        );
        one("I work at Acme since 2020", "works_at", "Acme", Holds);
        one("I don't like jazz anymore", "likes", "jazz", Ended);
        one("I don't like jazz", "dislikes", "jazz", Holds);
        one("I like hiking in the mountains", "likes", "hiking", Holds);
        one("I'm 34 years old", "age", "34", Holds);
        one("I'm 29 years old, so I stretch", "age", "29", Holds);
        one("By the way, I'm currently 40 years old", "age", "40", Holds);
        one("My job is nurse", "job", "nurse", Holds);
        one("I\u{2019}m called Bo", "name", "Bo", Holds);
        assert!(facts("The weather is nice").is_empty());
        assert!(facts("I'm 34 minutes late").is_empty());
    }

    #[test]
    fn chinese_rules() {
        one("我叫小明", "name", "小明", Holds);
        one("我住在波尔图", "lives_in", "波尔图", Holds);
        one("我上周搬到了里斯本", "lives_in", "里斯本", Began);
        one("我已经不住在波尔图了", "lives_in", "波尔图", Ended);
        one("其实我住在布拉加", "lives_in", "布拉加", FactMode::Corrects);
        one("我在腾讯工作", "works_at", "腾讯", Holds);
        one("我喜欢爬山", "likes", "爬山", Holds);
        one("我不喜欢香菜", "dislikes", "香菜", Holds);
        one("我34岁", "age", "34", Holds);
        one("我今年三十四岁", "age", "34", Holds);
        one("我的工作是护士", "job", "护士", Holds);
        assert!(facts("今天天气很好").is_empty());
    }

    #[test]
    fn a_change_records_a_dated_event() {
        let said = 1_700_000_000_000;
        let clause = &clauses("I moved to Lisbon yesterday", said, 0)[0];
        let st = rule_statement(clause, said);
        assert_eq!(st.events.len(), 1);
        assert_eq!(st.events[0].what, "moved to Lisbon");
        assert_eq!(st.events[0].when.phrase, "yesterday");
        assert_eq!(st.events[0].fact, Some(0));
        assert_eq!(
            st.facts[0].valid_from.as_ref().map(|d| d.start_ms),
            Some(st.events[0].when.start_ms)
        );
    }
}
