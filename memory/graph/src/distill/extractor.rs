//! The non-LLM extractor beyond the fixed rules: subject–verb–object clauses over a predicate
//! lexicon, for people other than the speaker ("my sister Ana lives in Braga", "小红在华为工作")
//! and first-person events the rules do not cover ("I went to Kyoto in March", "我买了一辆车").
//!
//! It is deliberately plain: a subject must be the speaker, a named relative ("my sister
//! Ana"), an unnamed one ("my sister") or a capitalised name right before the verb; pronouns
//! are skipped, since nothing here resolves who "she" is. Its precision and recall against a
//! labelled set are measured in the crate's tests, next to the rules alone.

use super::clause::{Clause, chinese_object, hypothetical_before, word_matches};
use super::english_object::{
    EN_BOUNDARIES, english_antecedent, english_object, english_object_before, listed_after,
    quoted_title,
};
use super::noun_phrase::{EN_NUMBERS, NOT_A_START, not_a_possession};
use super::possession::{held_for, model_of_a_possession};
use super::rules::USER;
use super::visit::{past_visit, visited_place};
use crate::{EventSpec, Fact, FactMode, Statement};
use hearth_memory::ResolvedDate;

/// A verb phrase and what it states.
struct Verb {
    phrase: &'static str,
    predicate: &'static str,
    mode: FactMode,
    kind: &'static str,
    /// Whether the clause is also a dated event.
    event: bool,
}

const fn verb(
    phrase: &'static str,
    predicate: &'static str,
    kind: &'static str,
    event: bool,
) -> Verb {
    Verb {
        phrase,
        predicate,
        mode: FactMode::Holds,
        kind,
        event,
    }
}

/// Third-person English verbs: the subject comes before them.
const EN_VERBS: &[Verb] = &[
    verb(" lives in ", "lives_in", "place", false),
    Verb {
        mode: FactMode::Began,
        ..verb(" moved to ", "lives_in", "place", true)
    },
    verb(" works at ", "works_at", "organization", false),
    verb(" works for ", "works_at", "organization", false),
    verb(" works as ", "job", "concept", false),
    verb(" likes ", "likes", "concept", false),
    verb(" loves ", "likes", "concept", false),
    verb(" hates ", "dislikes", "concept", false),
    verb(" is from ", "from", "place", false),
    verb(" comes from ", "from", "place", false),
    verb(" studies at ", "studies_at", "organization", false),
    verb(" is married to ", "married_to", "person", false),
    verb(" speaks ", "speaks", "concept", false),
    verb(" visited ", "visited", "place", true),
    verb(" went to ", "visited", "place", true),
    verb(" bought ", "owns", "concept", true),
    verb(" adopted ", "has", "concept", true),
];

/// First-person English verbs the fixed rules leave out.
const EN_FIRST_PERSON: &[Verb] = &[
    verb("i went to ", "visited", "place", true),
    verb("i visited ", "visited", "place", true),
    verb("i stayed in ", "visited", "place", true),
    verb("i stayed at ", "visited", "place", true),
    verb("i bought ", "owns", "concept", true),
    verb("i got ", "owns", "concept", true),
    verb("i adopted ", "has", "concept", true),
    verb("i'm from ", "from", "place", false),
    verb("i come from ", "from", "place", false),
    verb("i study at ", "studies_at", "organization", false),
    verb("i'm married to ", "married_to", "person", false),
    verb("i speak ", "speaks", "concept", false),
    verb("i have a ", "has", "concept", false),
    verb("i have an ", "has", "concept", false),
];

/// What the speaker has, owns, visited or likes when no verb pattern of theirs names it.
const HAS: Verb = verb("", "has", "concept", false);
const OWNS: Verb = verb("", "owns", "concept", false);
const VISITED: Verb = verb("", "visited", "place", false);
const LIKES: Verb = verb("", "likes", "concept", false);

/// Chinese verbs; the subject is what precedes them.
const ZH_VERBS: &[Verb] = &[
    verb("住在", "lives_in", "place", false),
    Verb {
        mode: FactMode::Began,
        ..verb("搬到了", "lives_in", "place", true)
    },
    verb("喜欢", "likes", "concept", false),
    verb("来自", "from", "place", false),
    verb("去了", "visited", "place", true),
    verb("去过", "visited", "place", false),
    verb("买了", "owns", "concept", true),
    verb("养了", "has", "concept", true),
    verb("会说", "speaks", "concept", false),
];

/// Relatives and others close to the speaker, named by their relation ("my sister Ana").
pub(crate) const EN_KIN: &[&str] = &[
    "sister",
    "brother",
    "mother",
    "mom",
    "father",
    "dad",
    "wife",
    "husband",
    "son",
    "daughter",
    "friend",
    "partner",
    "boss",
    "colleague",
    "cousin",
    "aunt",
    "uncle",
    "grandmother",
    "grandfather",
    "neighbor",
    "neighbour",
    "roommate",
    "girlfriend",
    "boyfriend",
    "coworker",
    "co-worker",
    "niece",
    "nephew",
    "grandma",
    "grandpa",
];
/// Chinese kin words and the predicate they are stored under.
const ZH_KIN: &[(&str, &str)] = &[
    ("妹妹", "sister"),
    ("姐姐", "sister"),
    ("哥哥", "brother"),
    ("弟弟", "brother"),
    ("妈妈", "mother"),
    ("爸爸", "father"),
    ("老婆", "wife"),
    ("妻子", "wife"),
    ("老公", "husband"),
    ("丈夫", "husband"),
    ("儿子", "son"),
    ("女儿", "daughter"),
    ("男朋友", "boyfriend"),
    ("女朋友", "girlfriend"),
    ("朋友", "friend"),
    ("同事", "colleague"),
    ("老板", "boss"),
    ("室友", "roommate"),
];
const ZH_PRONOUNS: &[char] = &['你', '他', '她', '它', '这', '那', '谁'];

/// Who a clause is about, and the kinship fact that names them ("my sister Ana").
struct Subject {
    name: String,
    kin: Option<(&'static str, String)>,
}

/// What the extractor finds in `clause`.
pub(crate) fn extract(clause: &Clause, said_ms: i64) -> Statement {
    let mut statement = Statement {
        sentence: clause.sentence.clone(),
        ..Statement::default()
    };
    // A verb ending its clause ("my lens that I got [a month ago]", the time phrase taken out)
    // or followed by a comma ("the toaster oven I got, it's…") still matches a pattern written
    // with the space that follows it; a comma for a space keeps every byte offset.
    let padded = format!("{} ", clause.lower.replace(',', " "));
    for v in EN_FIRST_PERSON {
        let possession = matches!(v.predicate, "has" | "owns");
        let Some(at) = word_matches(&padded, v.phrase).next() else {
            continue;
        };
        let after = at + v.phrase.len();
        if hypothetical_before(clause, at, v.phrase)
            || (v.predicate == "owns" && for_someone_else(padded.get(after..).unwrap_or_default()))
        {
            continue;
        }
        // What was bought or got comes after the verb (perhaps the first of a list), or
        // before it in a relative clause ("the Air Fryer I got yesterday").
        let object = english_object(clause, after).or_else(|| {
            let title = quoted_title(clause.text.get(after..)?)?;
            (possession || v.predicate == "visited").then_some((title, false))
        });
        let things = match object {
            Some((object, _)) if possession => std::iter::once(object)
                .chain(listed_after(clause, after))
                .collect(),
            Some((object, _)) if v.predicate == "visited" => {
                visited_place(clause, after, object).into_iter().collect()
            }
            Some((object, _)) => vec![object],
            None if v.predicate == "owns" => english_object_before(clause, at)
                .or_else(|| english_antecedent(clause, at, after))
                .into_iter()
                .collect(),
            None => Vec::new(),
        };
        for object in things {
            if !(possession && not_a_possession(&object)) && names_an_origin(v, &object) {
                add(&mut statement, clause, said_ms, v, speaker(), object);
            }
        }
    }
    if let Some(at) = thing_had_without_article(clause) {
        let named = english_object(clause, at).map(|(object, _)| object);
        for object in named.into_iter().chain(listed_after(clause, at)) {
            if !not_a_possession(&object) {
                add(&mut statement, clause, said_ms, &HAS, speaker(), object);
            }
        }
    }
    // The speaker's facts found by what is said of a thing rather than by a verb of theirs.
    let said_of = [
        (&OWNS, model_of_a_possession(clause)),
        (&HAS, held_for(clause).filter(|o| !not_a_possession(o))),
        (&VISITED, past_visit(clause)),
        (&LIKES, favourite(clause)),
    ];
    for (v, object) in said_of {
        if let Some(object) = object {
            add(&mut statement, clause, said_ms, v, speaker(), object);
        }
    }
    for v in EN_VERBS {
        let Some(at) = clause.lower.find(v.phrase) else {
            continue;
        };
        let Some(subject) = english_subject(&clause.text[..at]) else {
            continue;
        };
        let Some((object, _)) = english_object(clause, at + v.phrase.len()) else {
            continue;
        };
        if names_an_origin(v, &object) {
            add(&mut statement, clause, said_ms, v, subject, object);
        }
    }
    // "I have a spare screwdriver that I picked up": one thing, had.
    let had: Vec<(String, String)> = statement
        .facts
        .iter()
        .filter(|f| f.predicate == "has")
        .map(|f| (f.subject.clone(), f.object.clone()))
        .collect();
    statement.facts.retain(|f| {
        f.predicate != "owns" || !had.iter().any(|(s, o)| *s == f.subject && *o == f.object)
    });
    for v in ZH_VERBS {
        let Some(at) = clause.text.find(v.phrase) else {
            continue;
        };
        let Some(subject) = chinese_subject(&clause.text[..at]) else {
            continue;
        };
        // The rules own 我住在 / 我喜欢 / 我搬到: only what they do not cover is extracted.
        if subject.name == USER && matches!(v.predicate, "lives_in" | "likes") {
            continue;
        }
        let Some(object) = chinese_object(clause, at + v.phrase.len(), None) else {
            continue;
        };
        let object = object
            .trim_start_matches(['一', '个', '只', '辆', '台', '条', '本', '套'])
            .to_owned();
        if object.is_empty() {
            continue;
        }
        add(&mut statement, clause, said_ms, v, subject, object);
    }
    // "小红在华为工作": a named person working somewhere.
    if let Some(at) = clause.text.find('在')
        && let Some(subject) = chinese_subject(&clause.text[..at])
        && subject.name != USER
        && let Some(object) = chinese_object(clause, at + '在'.len_utf8(), Some("工作"))
    {
        let works = verb("在", "works_at", "organization", false);
        add(&mut statement, clause, said_ms, &works, subject, object);
    }
    statement
}

fn add(
    statement: &mut Statement,
    clause: &Clause,
    said_ms: i64,
    v: &Verb,
    subject: Subject,
    object: String,
) {
    if let Some((kin, name)) = &subject.kin {
        statement.facts.push(kin_fact(kin, name.clone()));
    }
    let mode = if clause.correction && v.mode == FactMode::Holds {
        FactMode::Corrects
    } else {
        v.mode
    };
    statement.facts.push(Fact {
        subject: subject.name.clone(),
        subject_kind: "person",
        predicate: v.predicate.to_owned(),
        object: object.clone(),
        object_kind: v.kind,
        mode,
        confidence: 0.7,
        valid_from: if mode == FactMode::Holds {
            None
        } else {
            clause.date.clone()
        },
    });
    if v.event {
        let phrase = v.phrase.trim();
        let verb = phrase.strip_prefix("i ").unwrap_or(phrase);
        let what = if verb.is_ascii() {
            format!("{verb} {object}")
        } else {
            format!("{verb}{object}")
        };
        statement.events.push(EventSpec {
            subject: subject.name,
            what,
            when: clause
                .date
                .clone()
                .unwrap_or_else(|| ResolvedDate::said(said_ms)),
            fact: Some(statement.facts.len() - 1),
        });
    }
}

/// The speaker's relation to someone they name ("my sister Ana").
fn kin_fact(kin: &str, name: String) -> Fact {
    Fact {
        subject: USER.to_owned(),
        subject_kind: "person",
        predicate: kin.to_owned(),
        object: name,
        object_kind: "person",
        mode: FactMode::Holds,
        confidence: 0.7,
        valid_from: None,
    }
}

/// Whether `object` can be where someone is from under `v`: an English origin is a name ("I'm
/// from Arcadia"); "I come from a family with 3 sisters" or "from a small town" names none.
fn names_an_origin(v: &Verb, object: &str) -> bool {
    v.predicate != "from" || object.starts_with(|c: char| c.is_uppercase())
}

/// Most words naming the kind of a favourite ("my favorite [thing to do] is").
const EN_FAVOURITE_KIND_WORDS: usize = 3;

/// "Currently, my favourite is Kansas City Masterpiece BBQ sauce", "one of my favorite authors
/// is Dan Harris": what the speaker names as a favourite is liked.
fn favourite(clause: &Clause) -> Option<String> {
    ["my favorite ", "my favourite "].iter().find_map(|phrase| {
        word_matches(&clause.lower, phrase).find_map(|at| {
            let start = at + phrase.len();
            let words: Vec<&str> = clause.lower[start..]
                .split(' ')
                .take(EN_FAVOURITE_KIND_WORDS + 1)
                .collect();
            let is = words.iter().position(|w| matches!(*w, "is" | "are"))?;
            let offset: usize = words[..=is].iter().map(|w| w.len() + 1).sum();
            english_object(clause, start + offset).map(|(object, _)| object)
        })
    })
}

/// Whether what follows "I got" / "I bought" says it was for someone else ("that I got for my
/// sister's birthday", "I bought for her", "I got her some flowers"): a gift is its receiver's.
fn for_someone_else(after: &str) -> bool {
    let words: Vec<&str> = after
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .take(8)
        .collect();
    // "I got her some flowers": given, in the order of a double object; "the album I got
    // her": given, what was given named before.
    // Not "I got them after months of waiting", "I got them exactly…": the word after the
    // pronoun must open a thing given.
    let opens_a_thing =
        |w: &str| !EN_BOUNDARIES.contains(&w) && !NOT_A_START.contains(&w) && !w.ends_with("ly");
    match words.as_slice() {
        [her, next, ..] if matches!(*her, "her" | "him" | "them" | "us") && opens_a_thing(next) => {
            return true;
        }
        [her] if matches!(*her, "her" | "him") => return true,
        _ => {}
    }
    let Some(at) = words.iter().position(|w| *w == "for") else {
        return false;
    };
    match words.get(at + 1..) {
        // A pronoun far from the verb may be a pet's ("a new dog bed for him"): only a
        // receiver right after the thing counts.
        Some([him, ..]) if matches!(*him, "her" | "him" | "them") => at < 4,
        // "for my sister's birthday", "for my best friend's 30th birthday".
        Some(["my", first, rest @ ..]) => std::iter::once(first)
            .chain(rest.first())
            .any(|kin| EN_KIN.contains(&kin.strip_suffix("'s").unwrap_or(kin))),
        _ => false,
    }
}

/// Where "I have HBO Max", "I have Spotify Premium" names a thing had under its own name,
/// or "I have 12 rare figurines", "I have two cats" counts things had, without an article (a
/// capital or a number after "I have"; "I have to", "I have been" and "I have some" are
/// neither): the byte the name or count starts at.
fn thing_had_without_article(clause: &Clause) -> Option<usize> {
    let phrase = "i have ";
    let at = word_matches(&clause.lower, phrase).next()? + phrase.len();
    let next = clause.text.get(at..)?.split_whitespace().next()?;
    let named = next.starts_with(|c: char| c.is_ascii_uppercase())
        && next != "I"
        && !next.starts_with("I'");
    let counted = next.chars().all(|c| c.is_ascii_digit())
        || EN_NUMBERS.contains(&next.to_ascii_lowercase().as_str());
    if !named && !counted {
        return None;
    }
    (!hypothetical_before(clause, at - phrase.len(), phrase)).then_some(at)
}

/// The speaker as a subject.
fn speaker() -> Subject {
    Subject {
        name: USER.to_owned(),
        kin: None,
    }
}

/// "my sister Ana" / "my sister" / "Ana Costa" at the end of `before`.
fn english_subject(before: &str) -> Option<Subject> {
    let words: Vec<&str> = before.split_whitespace().collect();
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    if let Some(my) = lower.iter().rposition(|w| w == "my") {
        let kin = EN_KIN
            .iter()
            .find(|k| lower.get(my + 1).is_some_and(|w| w == *k))?;
        let name: Vec<&str> = words[my + 2..].to_vec();
        if name.is_empty() {
            return Some(Subject {
                name: format!("{USER}'s {kin}"),
                kin: None,
            });
        }
        if name.len() > 3 || !name.iter().all(|w| w.starts_with(char::is_uppercase)) {
            return None;
        }
        let name = name.join(" ");
        return Some(Subject {
            kin: Some((kin, name.clone())),
            name,
        });
    }
    // A capitalised name of one to three words ending the text before the verb.
    let tail: Vec<&str> = words
        .iter()
        .rev()
        .take_while(|w| {
            w.starts_with(char::is_uppercase) && w.chars().all(|c| c.is_alphabetic() || c == '-')
        })
        .take(3)
        .copied()
        .collect();
    let first = *tail.last()?;
    if tail.len() == words.len().min(3) && tail.len() < words.len() {
        return None;
    }
    if matches!(
        first,
        "I" | "He" | "She" | "They" | "It" | "We" | "You" | "This" | "That" | "There"
    ) {
        return None;
    }
    let name: Vec<&str> = tail.into_iter().rev().collect();
    Some(Subject {
        name: name.join(" "),
        kin: None,
    })
}

/// 我 / 我妹妹小红 / 我妹妹 / 小红 at the end of `before`.
fn chinese_subject(before: &str) -> Option<Subject> {
    let mut before = before.trim();
    for adverb in ["也", "都", "还", "现在", "已经"] {
        before = before.strip_suffix(adverb).unwrap_or(before);
    }
    if let Some(rest) = before.rsplit_once('我').map(|(_, r)| r) {
        let rest = rest.strip_prefix('的').unwrap_or(rest);
        if rest.is_empty() {
            return Some(Subject {
                name: USER.to_owned(),
                kin: None,
            });
        }
        let &(word, kin) = ZH_KIN.iter().find(|(w, _)| rest.starts_with(*w))?;
        let name = &rest[word.len()..];
        if name.is_empty() {
            return Some(Subject {
                name: format!("{USER}的{word}"),
                kin: None,
            });
        }
        let count = name.chars().count();
        return (count <= 4 && !name.contains(ZH_PRONOUNS)).then(|| Subject {
            kin: Some((kin, name.to_owned())),
            name: name.to_owned(),
        });
    }
    let name: String = before
        .chars()
        .rev()
        .take_while(|c| hearth_memory::tokens::is_cjk(*c))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let count = name.chars().count();
    if !(2..=4).contains(&count)
        || name.contains(ZH_PRONOUNS)
        || name.chars().count() != before.chars().count()
    {
        return None;
    }
    Some(Subject { name, kin: None })
}

#[cfg(test)]
mod tests {
    use super::super::clause::clauses;
    use super::*;

    fn triples(text: &str) -> Vec<(String, String, String)> {
        clauses(text, 1_700_000_000_000, 0)
            .iter()
            .flat_map(|c| extract(c, 1_700_000_000_000).facts)
            .map(|f| (f.subject, f.predicate, f.object))
            .collect()
    }

    /// Asserts that no text of `texts` is read as owning anything.
    fn owns_nothing(texts: &[&str]) {
        for text in texts {
            let found = triples(text);
            assert!(found.iter().all(|f| f.1 != "owns"), "{text}: {found:?}");
        }
    }

    fn t(s: &str, p: &str, o: &str) -> (String, String, String) {
        (s.to_owned(), p.to_owned(), o.to_owned())
    }

    #[test]
    fn third_person_and_kin() {
        assert_eq!(
            triples("My sister Ana lives in Braga"),
            vec![t("user", "sister", "Ana"), t("Ana", "lives_in", "Braga")]
        );
        assert_eq!(
            triples("My boss works at Acme"),
            vec![t("user's boss", "works_at", "Acme")]
        );
        assert_eq!(
            triples("Maria Silva is from Brazil"),
            vec![t("Maria Silva", "from", "Brazil")]
        );
        assert!(
            triples("She lives in Braga").is_empty(),
            "pronouns are not resolved"
        );
        assert!(triples("the old man lives in Braga").is_empty());
        assert_eq!(
            triples("我妹妹小红住在杭州"),
            vec![t("user", "sister", "小红"), t("小红", "lives_in", "杭州")]
        );
        assert_eq!(
            triples("小红在华为工作"),
            vec![t("小红", "works_at", "华为")]
        );
        assert!(triples("他住在杭州").is_empty());
    }

    #[test]
    fn first_person_events() {
        let said = 1_700_000_000_000;
        let clause = &clauses("I went to Kyoto in March", said, 0)[0];
        let st = extract(clause, said);
        assert_eq!(st.facts.len(), 1);
        assert_eq!(
            (st.facts[0].predicate.as_str(), st.facts[0].object.as_str()),
            ("visited", "Kyoto")
        );
        assert_eq!(st.events[0].what, "went to Kyoto");
        assert_eq!(st.events[0].when.phrase, "in March");
        assert_eq!(triples("我买了一辆车"), vec![t("user", "owns", "车")]);
        // "I am" reads as "I'm": the pattern is written once.
        assert_eq!(triples("I am from Porto"), vec![t("user", "from", "Porto")]);
    }

    /// What one got is owned, the time it was got aside; what one got without owning it is not.
    #[test]
    fn what_i_got_is_owned_unless_it_is_no_thing() {
        assert_eq!(
            triples("I just got my new turntable"),
            vec![t("user", "owns", "turntable")]
        );
        assert_eq!(
            triples("I already have a first edition"),
            vec![t("user", "has", "edition")]
        );
        owns_nothing(&[
            "I got my flu shot yesterday",
            "I got married in June",
            "I got a discount",
            "I got to attend the service",
            "I got it last week",
            "I got first place in the race",
            "I got those bike lights installed and I got done",
            "I got rid of the old toaster",
            "I got my sister's birthday present there",
            "I bought a few packs of it at the market",
            "I bought recently",
            "I got my road bike serviced at Pedal Power",
        ]);
    }

    #[test]
    fn what_was_got_can_come_before_the_verb() {
        for (text, object) in [
            (
                "I'm using the Air Fryer I got yesterday to make fries",
                "Air Fryer",
            ),
            (
                "Like that Chanel bag I bought recently, it lasts",
                "Chanel bag",
            ),
            (
                "I've used 20 of the 50 coffee pods I bought with the machine",
                "coffee pods",
            ),
            (
                "I'm upgrading my tripod, which I bought back in 2018",
                "tripod",
            ),
            ("the lovely vase that I got at the market", "vase"),
            (
                "the best way to care for my peace lily, which I got from the nursery",
                "peace lily",
            ),
            // The time phrase taken out leaves the verb at the clause's end.
            (
                "I'm mastering my 50mm lens that I got a month ago",
                "50mm lens",
            ),
        ] {
            assert_eq!(triples(text), vec![t("user", "owns", object)], "{text}");
        }
        owns_nothing(&[
            // The relative clause follows a preposition's object: what was got is before it.
            "a pair of boots from a high-end designer that I got for $500",
            "I found a similar necklace that I got for my sister's birthday",
            "I bought a scarf for her last week",
            "like the one I got from Amazon for $20",
            "I got her some groceries and flowers",
            // Food and drink are eaten or drunk, not kept.
            "I picked up a bottle of Hendrick's gin",
            "I got some chicken breast for dinner",
            "my subscription to People Magazine, which I got as a gift",
            // Nothing between the number and the verb names a thing.
            "I paid 50 I got nothing",
            "the 2 that I bought",
            "since I got it last week",
            "and then I bought at the market",
        ]);
    }

    #[test]
    fn a_thing_had_under_its_own_name() {
        assert_eq!(
            triples("I have HBO Max to explore"),
            vec![t("user", "has", "HBO Max")]
        );
        assert_eq!(
            triples("I have an antique tea set from my aunt"),
            vec![t("user", "has", "antique tea set")]
        );
        for text in [
            "I have I think two",
            "I have Monday off",
            "if I have Netflix",
        ] {
            assert_eq!(triples(text), vec![], "{text}");
        }
    }

    #[test]
    fn every_thing_of_a_list_is_had() {
        assert_eq!(
            triples("I have a fern, snake plant, and spider plant in my living room"),
            vec![
                t("user", "has", "fern"),
                t("user", "has", "snake plant"),
                t("user", "has", "spider plant")
            ]
        );
        assert_eq!(
            triples("I'm glad I have HBO Max, Hulu, and Amazon Prime Video to explore"),
            vec![
                t("user", "has", "HBO Max"),
                t("user", "has", "Hulu"),
                t("user", "has", "Amazon Prime Video")
            ]
        );
        assert_eq!(
            triples("I bought a lamp and a rug"),
            vec![t("user", "owns", "lamp"), t("user", "owns", "rug")]
        );
        // The list ends where its item's name does, and a clause is no item.
        for text in [
            "I have a dog, and I walk him every day",
            "I bought a new phone, which I love",
            "I have a dog in the garden and a cat",
            "I have a membership there and can earn 1% cashback",
            "I just got my first record, a reissue of Fleetwood Mac's Rumours, and I love it",
            "I have a standard 3-seater couch, and I'm not sure",
            "I got my engagement ring and ask them about resizing",
        ] {
            let found = triples(text);
            assert_eq!(found.len(), 1, "{text}: {found:?}");
        }
    }

    #[test]
    fn a_journey_is_a_visit_to_where_it_went() {
        let places = [
            ("I just got back from a week-long trip to Lisbon", "Lisbon"),
            (
                "I got back from a hiking trip in the Swiss Alps",
                "Swiss Alps",
            ),
            ("I've been to Porto twice", "Porto"),
            ("I've been to Rome 4 times this year", "Rome"),
            ("I stayed in Kyoto for a week", "Kyoto"),
            ("I went to New York City", "New York City"),
            // A journey's word that is not the head names the place itself.
            ("I went to the holiday market in town", "holiday market"),
            ("I got back from a long weekend at Lake Tahoe", "Lake Tahoe"),
            (
                "I got back from a train ride to see my aunt's farm",
                "aunt's farm",
            ),
            (
                "I got back from the \"Taste of Chicago\" fair",
                "Taste of Chicago",
            ),
            ("I went to Central Park - it was packed", "Central Park"),
        ];
        let visits: Vec<_> = places
            .iter()
            .map(|&(text, place)| (text, "visited", place))
            .collect();
        each_states_one_fact(&visits);
        each_states_nothing(&[
            "I went on a hike",
            "I got back from a dinner date",
            "I got back from a long trip",
            "I've been to a few concerts lately",
            "I visited my parents",
            "I stayed at home",
            "I stayed in bed all day",
        ]);
    }

    #[test]
    fn other_words_for_buying_and_getting() {
        each_states_one_fact(&[
            ("I purchased a standing desk", "owns", "standing desk"),
            (
                "I picked up a used kayak at the market",
                "owns",
                "used kayak",
            ),
            ("I received a watch from my wife", "owns", "watch"),
            (
                "I picked up \"Atomic Habits\" at the airport",
                "owns",
                "Atomic Habits",
            ),
        ]);
        // A quoted title liked is most often the conversation's own proposal.
        assert_eq!(triples("I like \"Spring Into Savings\""), vec![]);
        // One thing had and got is had.
        assert_eq!(
            triples("I have a spare charger that I picked up at the airport"),
            vec![t("user", "has", "spare charger")]
        );
    }

    #[test]
    fn a_thing_kept_for_a_while_is_had_under_its_name() {
        each_states_one_fact(&[
            (
                "I've had my Honda Civic for ten years",
                "has",
                "Honda Civic",
            ),
            ("I've had my dog, Max, for 3 years", "has", "dog"),
            // An intensifier is no part of the name.
            (
                "I have a pretty large collection of vinyl",
                "has",
                "large collection of vinyl",
            ),
            ("I got a new Honda", "owns", "Honda"),
            // Only food's own name is eaten: a coffee table is kept.
            ("I bought a coffee table", "owns", "coffee table"),
            // Under the model's name, when an article gives one after a comma.
            (
                "I've had my road bike, a Trek Domane, since college",
                "has",
                "Trek Domane",
            ),
            (
                "I've had my Nikon Z6 with me on every hike",
                "has",
                "Nikon Z6",
            ),
            ("I bought a 2.5 kg kettlebell", "owns", "2.5 kg kettlebell"),
        ]);
        each_states_nothing(&[
            "I've had my doubts",
            "I've had my flu shot for the season",
            "I've got 800 followers on my blog",
        ]);
    }

    #[test]
    fn a_possession_s_model_is_owned() {
        assert_eq!(
            triples("My car is a 2018 Honda Civic"),
            vec![t("user", "owns", "2018 Honda Civic")]
        );
        assert_eq!(
            triples("my phone is an iPhone 13 and it works"),
            vec![t("user", "owns", "iPhone 13")]
        );
        assert_eq!(triples("My car is a mess"), vec![]);
        assert_eq!(triples("My plan is a Costco run"), vec![]);
    }

    #[test]
    fn a_thing_s_name_runs_to_its_end() {
        for (text, predicate, object) in [
            // The numeral of a model's name is no "I".
            (
                "I got my Fender Mustang I V2, and",
                "owns",
                "Fender Mustang I V2",
            ),
            // Up to eight words, an adverb after it dropped.
            (
                "I have a 1TB Western Digital portable external hard drive that I love",
                "has",
                "1TB Western Digital portable external hard drive",
            ),
            (
                "I got my stand mixer back from the shop",
                "owns",
                "stand mixer",
            ),
            // "I've got" is "I have".
            ("I've got a new car, a silver one", "has", "car"),
            // A credential's field is part of its name.
            (
                "I have a master's degree in data science from NYU",
                "has",
                "master's degree in data science",
            ),
            (
                "I went to an amazing Imagine Dragons concert",
                "visited",
                "Imagine Dragons concert",
            ),
        ] {
            assert_eq!(triples(text), vec![t("user", predicate, object)], "{text}");
        }
    }

    /// Asserts that each text states exactly its one fact about the speaker.
    fn each_states_one_fact(cases: &[(&str, &str, &str)]) {
        for (text, predicate, object) in cases {
            assert_eq!(triples(text), vec![t("user", predicate, object)], "{text}");
        }
    }

    /// Asserts that no text states anything.
    fn each_states_nothing(texts: &[&str]) {
        for text in texts {
            assert_eq!(triples(text), vec![], "{text}");
        }
    }

    /// What a sixth batch of real talk showed, each as a rule of English.
    #[test]
    fn counts_bare_names_gifts_and_mishaps() {
        each_states_one_fact(&[
            (
                "Yeah, I have 12 rare figurines in my collection",
                "has",
                "rare figurines",
            ),
            ("I have two cats", "has", "cats"),
            (
                "I have a total of 37 coins in that collection",
                "has",
                "coins",
            ),
            (
                "I have a lot of old magazines lying around",
                "has",
                "old magazines",
            ),
            (
                "I've been using reusable containers I got from my last online order",
                "owns",
                "reusable containers",
            ),
            (
                "I was planning to bring my portable power bank, Anker PowerCore 20000, which I bought from Amazon",
                "owns",
                "Anker PowerCore 20000",
            ),
            (
                "I got to take home a workbook with exercises",
                "owns",
                "workbook",
            ),
            (
                "I'm so glad I got to visit Munich during that trip",
                "visited",
                "Munich",
            ),
            // A pronoun far from the verb may be a pet's: the thing stays the speaker's.
            ("I got a new dog bed for him", "owns", "dog bed"),
        ]);
        each_states_nothing(&[
            "I come from a family with 3 sisters",
            "I got a flat tire on my way to work",
            "I have a lot of projects going on at the same time",
            "she loved the personalized photo album I got her",
            "Last month, I bought a birthday present for my sister",
            "I got a 50-pound batch, and I'm tracking my expenses",
            "I think I have a good starting point now",
            "I have some points accumulated at the store",
            "the 2 that I bought",
        ]);
    }

    /// What a seventh batch of real talk showed, each as a rule of English.
    #[test]
    fn antecedents_favourites_and_the_assistants_things() {
        each_states_one_fact(&[
            (
                "I'm loving the new toaster oven I got, it's so convenient",
                "owns",
                "toaster oven",
            ),
            (
                "I've been wearing my Fitbit Versa 3 non-stop since I got it three weeks ago",
                "owns",
                "Fitbit Versa 3",
            ),
            (
                "Speaking of my new binoculars, I remember that I got them after months of waiting",
                "owns",
                "binoculars",
            ),
            (
                "One of my favorite authors is Dan Harris, who wrote a book",
                "likes",
                "Dan Harris",
            ),
            (
                "Currently, my favourite is Kansas City Masterpiece BBQ sauce",
                "likes",
                "Kansas City Masterpiece BBQ sauce",
            ),
            (
                "I'm using my power bank, Anker PowerCore 20000, that I bought from Amazon",
                "owns",
                "Anker PowerCore 20000",
            ),
        ]);
        each_states_nothing(&[
            // "it" with no thing of the speaker's before it, or one that disagrees in number.
            "I got it from West Elm",
            "I asked my sister and I got them",
            "I have a few commitments already",
            "since I have a lot of meetings and calls scheduled",
            "last week I got 20% off my UberEats order",
            "I got a good deal on my new phone",
        ]);
    }

    /// What an eighth batch of real talk showed, each as a rule of English.
    #[test]
    fn bare_relatives_past_visits_and_things_got_unowned() {
        each_states_one_fact(&[
            (
                "I'm also curious about the cat tree I got for my cat",
                "owns",
                "cat tree",
            ),
            (
                "I've been getting great shots with the remote flash triggers I got from that workshop",
                "owns",
                "remote flash triggers",
            ),
            (
                "During my previous visit to Denver, I had a great time",
                "visited",
                "Denver",
            ),
            (
                "I visited the Science Museum's \"Space Exploration\" exhibition",
                "visited",
                "Science Museum",
            ),
        ]);
        each_states_nothing(&[
            // "that" after a preposition's object still belongs to what came before it.
            "a pair of boots from a high-end designer that I got for $500",
            "similar to the silver necklace I got for my best friend's 30th birthday",
            "I have a few campaigns launching soon",
            "I'm glad I got some experience with the charity 5K",
            "I think I got the price from my friend wrong",
            "I got a quote from AXA Insurance for around $50",
            "I'm planning my upcoming trip to Japan",
        ]);
    }
}
