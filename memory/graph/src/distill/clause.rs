//! What both distillers share: sentences of a turn, the clause left when its time phrase is
//! taken out, and where a Chinese object ends (an English one: `english_object`).

use hearth_memory::{ResolvedDate, resolve_date};

/// One sentence of a turn, ready for pattern matching.
#[derive(Clone, Debug)]
pub(crate) struct Clause {
    /// The sentence as said (trimmed): what provenance keeps.
    pub sentence: String,
    /// The sentence without its time phrase, apostrophes folded to `'`, whitespace collapsed.
    pub text: String,
    /// `text` with ASCII lower-cased (same byte offsets as `text`).
    pub lower: String,
    /// The time the sentence names, if any.
    pub date: Option<ResolvedDate>,
    /// Whether it opens as a correction ("actually", "其实", "不对").
    pub correction: bool,
}

const CORRECTION_MARKERS: &[&str] = &[
    "actually",
    "in fact",
    "correction",
    "sorry",
    "no,",
    "其实",
    "不对",
    "更正",
    "纠正",
    "说错了",
];

/// Chinese adverbs between 我 and the verb that change nothing the patterns care about.
const ZH_FILLERS: &[&str] = &["已经", "刚刚", "刚", "最近", "终于", "也"];

/// English adverbs between the speaker and the verb ("I actually already have", "I'm really
/// into", "I've been really into") that change nothing the patterns care about. "now" and
/// "no longer" are not among them: they change a fact.
const EN_FILLERS: &[&str] = &[
    "also",
    "already",
    "actually",
    "really",
    "just",
    "recently",
    "still",
    "even",
    "finally",
    "definitely",
    "absolutely",
    "totally",
    "truly",
    "currently",
];

/// Words after which an English filler is dropped: the speaker, and "been" of "I've been".
const EN_FILLER_ANCHORS: &[&str] = &["i", "i'm", "i've", "been"];

/// `text` in the one form the English patterns are written for, its whitespace collapsed:
/// without the fillers that follow the speaker (see [`EN_FILLERS`]), and "I am" and "do not"
/// contracted, so each pattern is written once ("i'm into", "i don't like").
fn english_matching_form(text: &str) -> String {
    let among = |list: &[&str], word: &str| list.iter().any(|w| w.eq_ignore_ascii_case(word));
    let mut kept: Vec<&str> = Vec::new();
    for word in text.split_whitespace() {
        let last = kept.last().copied().unwrap_or_default();
        if among(EN_FILLER_ANCHORS, last) && among(EN_FILLERS, word) {
            continue;
        }
        let contracted = match () {
            _ if last.eq_ignore_ascii_case("i") && word.eq_ignore_ascii_case("am") => "I'm",
            _ if last.eq_ignore_ascii_case("do") && word.eq_ignore_ascii_case("not") => "don't",
            // "I've got a car" is "I have a car" (and "I've got to" is "I have to").
            _ if last.eq_ignore_ascii_case("i've") && word.eq_ignore_ascii_case("got") => {
                if let Some(slot) = kept.last_mut() {
                    *slot = "I";
                }
                kept.push("have");
                continue;
            }
            _ => {
                kept.push(word);
                continue;
            }
        };
        if let Some(slot) = kept.last_mut() {
            *slot = contracted;
        }
    }
    common_verb_forms(&mut kept);
    kept.join(" ")
}

/// The speaker's verbs said in other words, as the one the patterns are written for: "I got to
/// visit Munich" is "I visited Munich"; "I got to take home a workbook" (and "I took home", "I
/// brought home") is "I got a workbook"; "I purchased" is "I bought"; "I picked up" and "I
/// received" are "I got"; "I got back from Lisbon" and "I've been to Lisbon" are "I went to
/// Lisbon".
fn common_verb_forms(words: &mut Vec<&str>) {
    let is = |w: Option<&&str>, what: &str| w.is_some_and(|w| w.eq_ignore_ascii_case(what));
    let mut i = 0;
    while i < words.len() {
        if is(words.get(i), "i've") && is(words.get(i + 1), "been") && is(words.get(i + 2), "to") {
            words.splice(i..=i + 1, ["I", "went"]);
        }
        if !is(words.get(i), "i") {
            i += 1;
            continue;
        }
        let next = |k: usize| words.get(i + k);
        let (take, with): (usize, &[&str]) =
            if is(next(1), "got") && is(next(2), "back") && is(next(3), "from") {
                (3, &["went", "to"])
            } else if is(next(1), "purchased") {
                (1, &["bought"])
            } else if is(next(1), "received") || (is(next(1), "picked") && is(next(2), "up")) {
                (if is(next(1), "picked") { 2 } else { 1 }, &["got"])
            } else if is(next(1), "got") && is(next(2), "to") {
                if is(next(3), "visit") {
                    (3, &["visited"])
                } else if is(next(3), "go") && is(next(4), "to") {
                    (4, &["went", "to"])
                } else if (is(next(3), "take") || is(next(3), "bring")) && is(next(4), "home") {
                    (4, &["got"])
                } else {
                    (0, &[])
                }
            } else if (is(next(1), "took") || is(next(1), "brought")) && is(next(2), "home") {
                (2, &["got"])
            } else {
                (0, &[])
            };
        if take > 0 {
            words.splice(i + 1..=i + take, with.iter().copied());
        }
        i += 1;
    }
}

/// What ends a sentence: `. ! ? ;`, their full-width forms and a line break.
const SENTENCE_ENDS: &[char] = &['.', '!', '?', ';', '\n', '。', '！', '？', '；'];

/// The sentences of `text` (split at [`SENTENCE_ENDS`], but not at a point between digits),
/// each resolved against `said_ms`.
pub(crate) fn clauses(text: &str, said_ms: i64, utc_offset_secs: i64) -> Vec<Clause> {
    let bytes = text.as_bytes();
    // A point between digits ("a 50mm f/1.8 lens", "$4.99") is part of a number, not an end.
    let in_a_number = |at: usize| {
        bytes[at] == b'.'
            && at > 0
            && bytes[at - 1].is_ascii_digit()
            && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)
    };
    let mut sentences = Vec::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if SENTENCE_ENDS.contains(&c) && !in_a_number(at) {
            sentences.push(&text[start..at]);
            start = at + c.len_utf8();
        }
    }
    sentences.push(&text[start..]);
    sentences
        .into_iter()
        .map(str::trim)
        .filter(|s| s.chars().any(char::is_alphanumeric))
        .map(|sentence| clause(sentence, said_ms, utc_offset_secs))
        .collect()
}

fn clause(sentence: &str, said_ms: i64, utc_offset_secs: i64) -> Clause {
    let date = resolve_date(sentence, said_ms, utc_offset_secs);
    let mut text = sentence.replace(['\u{2019}', '\u{2018}'], "'");
    if let Some(d) = &date {
        // Found case-blind: ASCII folding keeps byte offsets.
        if let Some(at) = text
            .to_ascii_lowercase()
            .find(&d.phrase.to_ascii_lowercase())
        {
            let gap = if d.phrase.is_ascii() { " " } else { "" };
            text.replace_range(at..at + d.phrase.len(), gap);
        }
    }
    for filler in ZH_FILLERS {
        text = text.replace(&format!("我{filler}"), "我");
    }
    let text = english_matching_form(&text);
    let lower = text.to_ascii_lowercase();
    let trimmed = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
    let correction = CORRECTION_MARKERS.iter().any(|m| trimmed.starts_with(m));
    Clause {
        sentence: sentence.to_owned(),
        text,
        lower,
        date,
        correction,
    }
}

/// Words after which a first-person statement is a condition or a wish, not a fact: "if I
/// have", "make sure I have".
const EN_HYPOTHETICAL: &[&str] = &["if", "whether", "sure", "ensure", "unless", "hope", "wish"];
/// Words after which a statement in the present is a habit or a condition ("when I have guests
/// over"), while one in the past is still a fact ("when I visited the Art Cube").
const EN_WHEN: &[&str] = &["when", "whenever", "once", "until"];

/// Past forms of the irregular verbs the English patterns use.
const EN_IRREGULAR_PAST: &[&str] = &["went", "bought", "quit", "got", "left", "came"];

/// Whether an English pattern ("i moved to ", "i went to ", "i have a ") is in the past.
fn in_the_past(phrase: &str) -> bool {
    phrase
        .split_whitespace()
        .any(|w| w.ends_with("ed") || EN_IRREGULAR_PAST.contains(&w))
}

/// Whether the clause's text before byte `at`, where the pattern `phrase` starts, makes what
/// follows a condition or a wish.
pub(crate) fn hypothetical_before(clause: &Clause, at: usize, phrase: &str) -> bool {
    clause.lower[..at]
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .rfind(|w| !w.is_empty())
        .is_some_and(|w| {
            EN_HYPOTHETICAL.contains(&w) || (!in_the_past(phrase) && EN_WHEN.contains(&w))
        })
}

/// Characters that end a Chinese object.
const ZH_STOPS: &[char] = &[
    '了', '的', '啦', '呢', '吧', '啊', '呀', '，', ',', '、', '和', '但', '因', '所', '而', ' ',
];
/// Longest Chinese object, in characters.
const ZH_MAX_CHARS: usize = 12;

/// The object starting at byte `at`: up to a particle, comma or `until` (when given), at most
/// twelve characters.
pub(crate) fn chinese_object(clause: &Clause, at: usize, until: Option<&str>) -> Option<String> {
    let mut rest = clause.text.get(at..)?;
    if let Some(end) = until {
        rest = &rest[..rest.find(end)?];
    }
    let object: String = rest
        .chars()
        .take_while(|c| !ZH_STOPS.contains(c))
        .take(ZH_MAX_CHARS + 1)
        .collect();
    let count = object.chars().count();
    (count > 0 && count <= ZH_MAX_CHARS && object.chars().any(char::is_alphanumeric))
        .then_some(object)
}

/// Whether `needle` occurs in `haystack` at `at` with a word boundary before it.
pub(crate) fn at_word_start(haystack: &str, at: usize) -> bool {
    at == 0
        || haystack[..at]
            .chars()
            .next_back()
            .is_some_and(|c| !c.is_alphanumeric() && c != '\'')
}

/// Byte offsets of every occurrence of `needle` in `haystack` at a word start.
pub(crate) fn word_matches<'a>(
    haystack: &'a str,
    needle: &'a str,
) -> impl Iterator<Item = usize> + 'a {
    haystack
        .match_indices(needle)
        .map(|(at, _)| at)
        .filter(move |&at| !needle.is_ascii() || at_word_start(haystack, at))
}
