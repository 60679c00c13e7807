//! What both distillers share: sentences of a turn, the clause left when its time phrase is
//! taken out, and where a named object ends.

use super::noun_phrase::{STAND_INS, thing};
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
    kept.join(" ")
}

/// The sentences of `text` (split at `. ! ? ;` and their full-width forms and at line
/// breaks), each resolved against `said_ms`.
pub(crate) fn clauses(text: &str, said_ms: i64, utc_offset_secs: i64) -> Vec<Clause> {
    text.split(['.', '!', '?', ';', '\n', '。', '！', '？', '；'])
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

/// Words that end an English object: what follows them is no longer part of the name.
const EN_BOUNDARIES: &[&str] = &[
    "and", "but", "because", "since", "now", "anymore", "any", "in", "on", "at", "with", "for",
    "when", "where", "which", "who", "so", "then", "too", "also", "though", "although", "after",
    "before", "recently", "lately", "already", "again", "as", "from", "until", "while", "very",
    "a", "lot", "much", "these", "nowadays", "instead", "not", "that", "it", "i", "you", "they",
    "we", "he", "she", "to", "if", "whether", "about",
];

/// Words before a thing that tell when it was had or how the speaker found it, not what it
/// is: "my new heels" are heels, "an amazing Imagine Dragons concert" a concert.
const EN_LEADING_ADJECTIVES: &[&str] = &[
    "new",
    "brand-new",
    "current",
    "latest",
    "first",
    "amazing",
    "awesome",
    "great",
    "wonderful",
    "fantastic",
    "lovely",
    "beautiful",
    "nice",
    "cool",
    "incredible",
    "gorgeous",
    "stunning",
    "terrible",
    "awful",
];

/// Credentials whose subject follows "in": "a master's degree in data science".
const EN_CREDENTIALS: &[&str] = &[
    "degree",
    "diploma",
    "certificate",
    "certification",
    "major",
    "minor",
    "phd",
    "masters",
];

/// Longest object, in words.
const EN_MAX_WORDS: usize = 8;

/// The object starting at byte `at` of the clause's text: up to the next comma or boundary
/// word, at most eight words, without a leading article, and only when they name a thing
/// ([`thing`]). Also whether the clause says "anymore" after it.
pub(crate) fn english_object(clause: &Clause, at: usize) -> Option<(String, bool)> {
    let rest = clause.text.get(at..)?;
    let rest_lower = clause.lower.get(at..)?;
    let anymore = rest_lower.contains("anymore") || rest_lower.contains("any more");
    let stop = rest.find([',', ':', '(', '"']).unwrap_or(rest.len());
    let all: Vec<&str> = rest[..stop].split_whitespace().collect();
    let mut words = Vec::new();
    let mut after = all.len();
    for (i, &word) in all.iter().enumerate() {
        // "who's" ends an object as "who" does.
        let lw = word
            .split('\'')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        // "my new heels", "a brand-new bike": the thing is what follows.
        let article = i == 0 && matches!(lw.as_str(), "the" | "a" | "an" | "my");
        if words.is_empty() && (article || EN_LEADING_ADJECTIVES.contains(&lw.as_str())) {
            continue;
        }
        // "a degree in data science": the field is part of the credential's name.
        let credential_field = lw == "in"
            && words
                .last()
                .is_some_and(|w: &&str| EN_CREDENTIALS.contains(&w.to_ascii_lowercase().as_str()));
        let boundary = EN_BOUNDARIES.contains(&lw.as_str())
            && !words.is_empty()
            && !credential_field
            && !roman_one_in_a_name(&words, word, all.get(i + 1).copied());
        if boundary || words.len() == EN_MAX_WORDS {
            after = i;
            break;
        }
        words.push(word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '\''));
    }
    let words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
    if about_something_unnamed(&words, &all[after..]) {
        return None;
    }
    let object = thing(&words)?;
    object
        .chars()
        .any(char::is_alphanumeric)
        .then_some((object, anymore))
}

/// Whether the object is about something named elsewhere: an activity ("I love listening to
/// it", "I enjoy working on them": the liking is of that thing, which the words do not name,
/// not of listening) or a part or amount of it ("I bought a few packs of it").
fn about_something_unnamed(words: &[&str], rest: &[&str]) -> bool {
    let lower = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase()
    };
    let stand_in = |w: &str| STAND_INS.contains(&lower(w).as_str());
    let activity = matches!(words, [only] if only.len() > 4 && only.ends_with("ing"))
        && matches!(rest, [prep, pronoun, ..]
            if EN_ACTIVITY_PREPOSITIONS.contains(&lower(prep).as_str()) && stand_in(pronoun));
    let part_of =
        words.last().is_some_and(|w| lower(w) == "of") && rest.first().is_some_and(|w| stand_in(w));
    activity || part_of
}

/// Prepositions an activity takes its thing with ("listening to", "working on").
const EN_ACTIVITY_PREPOSITIONS: &[&str] = &["to", "at", "with", "about", "on", "for", "in"];

/// Whether `word` is the numeral "I" of a model's name ("my Fender Mustang I V2", "a Canon
/// EOS R I"), not the speaker: written as a capital, right after a capitalised word of the
/// name and before a capitalised or numbered one, where the pronoun would be followed by its
/// verb.
fn roman_one_in_a_name(words: &[&str], word: &str, next: Option<&str>) -> bool {
    let capitalised = |w: &str| w.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    word == "I"
        && words.last().is_some_and(|w| capitalised(w))
        && next.is_some_and(|n| {
            (capitalised(n) && n != "I") || n.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
}

/// Words that open the name of a thing a relative clause follows ("the Air Fryer I got").
const EN_DETERMINERS: &[&str] = &[
    "the", "a", "an", "my", "that", "this", "these", "those", "our", "his", "her", "their",
];
/// Prepositions whose object a relative clause after it rarely belongs to ("boots from a
/// designer that I got for $500": what was got is the boots), unless it is the speaker's.
const EN_PLACE_PREPOSITIONS: &[&str] = &[
    "from", "at", "with", "by", "in", "on", "to", "for", "into", "about", "near",
];
/// Most words in the name of a thing before its relative clause.
const EN_MAX_WORDS_BEFORE: usize = 5;

/// The thing a relative clause starting at byte `at` of the clause's text is about: "using
/// the Air Fryer [I got yesterday]", "that Chanel bag [I bought]", "20 of the 50 coffee pods [I
/// bought]", "my tripod, which [I bought]" — the words back to a determiner or a number, when
/// they name a thing ([`thing`]) and are not the object of a preposition.
pub(crate) fn english_object_before(clause: &Clause, at: usize) -> Option<String> {
    let before = clause.text.get(..at)?.trim_end();
    let before = before
        .strip_suffix(" that")
        .or_else(|| before.strip_suffix(", which"))
        .or_else(|| before.strip_suffix(" which"))
        .unwrap_or(before);
    if before.ends_with(|c: char| !c.is_alphanumeric()) {
        return None;
    }
    let words: Vec<&str> = before.split_whitespace().collect();
    let lower = |w: &str| w.to_ascii_lowercase();
    let mut start = words.len();
    let opened = loop {
        if start == 0 || words.len() - start > EN_MAX_WORDS_BEFORE {
            break None;
        }
        let word = lower(words[start - 1]);
        if EN_DETERMINERS.contains(&word.as_str()) {
            break Some(start - 1);
        }
        if word.chars().all(|c| c.is_ascii_digit()) {
            break Some(start - 1);
        }
        if !word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '\'')
        {
            return None;
        }
        start -= 1;
    };
    // The index of the word that opens the name (a determiner or a number); the name follows.
    let opened = opened?;
    // "for my peace lily, which I got": the speaker's own thing is what was got, whatever
    // precedes it.
    let own = lower(words[opened]) == "my";
    if !own && opened > 0 && EN_PLACE_PREPOSITIONS.contains(&lower(words[opened - 1]).as_str()) {
        return None;
    }
    let name = &words[start..];
    if name.is_empty()
        || name
            .iter()
            .any(|w| EN_BOUNDARIES.contains(&lower(w).as_str()))
    {
        return None;
    }
    let name: Vec<&str> = name
        .iter()
        .copied()
        .skip_while(|w| EN_LEADING_ADJECTIVES.contains(&lower(w).as_str()))
        .collect();
    thing(&name)
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
