//! Where the name of a thing ends in English talk: after a verb ("I got my Fender Mustang I V2,
//! and…"), or before it in a relative clause ("the Air Fryer I got yesterday").

use super::clause::Clause;
use super::extractor::EN_KIN;
use super::noun_phrase::{CONVERSATION_NOUNS, NOT_A_START, STAND_INS, thing};

/// A word as the word lists see it: lower case, without the punctuation around it, up to an
/// apostrophe ("who's" ends an object as "who" does, "I'm" is "i", "it," is "it").
fn word_key(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric())
        .split('\'')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Words that end an English object: what follows them is no longer part of the name.
pub(crate) const EN_BOUNDARIES: &[&str] = &[
    "and", "but", "because", "since", "now", "anymore", "any", "in", "on", "at", "with", "for",
    "when", "where", "which", "who", "so", "then", "too", "also", "though", "although", "after",
    "before", "recently", "lately", "already", "again", "as", "from", "until", "while", "very",
    "a", "lot", "much", "these", "nowadays", "instead", "not", "that", "it", "i", "you", "they",
    "we", "he", "she", "to", "if", "whether", "about", "is", "are", "was", "were", "during",
    "except",
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

/// Intensifiers of the adjective after them: "a pretty big family" is a big family (but "very
/// much" is how much, not a thing).
const EN_INTENSIFIERS: &[&str] = &["pretty", "very", "quite", "super"];
/// Words after an intensifier that say how much or how often, not what.
const EN_DEGREES: &[&str] = &["much", "many", "well", "often", "little", "few"];

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
        let lw = word_key(word);
        // "my new heels", "a brand-new bike": the thing is what follows.
        let article = i == 0 && matches!(lw.as_str(), "the" | "a" | "an" | "my");
        // "New York City", "Great Falls": a capital on both words makes one name.
        let in_a_name = word.starts_with(char::is_uppercase)
            && all
                .get(i + 1)
                .is_some_and(|next| next.starts_with(char::is_uppercase));
        let intensifier = EN_INTENSIFIERS.contains(&lw.as_str())
            && all
                .get(i + 1)
                .is_some_and(|next| !EN_DEGREES.contains(&word_key(next).as_str()));
        if words.is_empty()
            && (article
                || intensifier
                || (EN_LEADING_ADJECTIVES.contains(&lw.as_str()) && !in_a_name))
        {
            continue;
        }
        let previous = words.last().map(|w: &&str| word_key(w));
        // "a degree in data science": the field is part of the credential's name.
        let credential_field = lw == "in"
            && previous
                .as_deref()
                .is_some_and(|w| EN_CREDENTIALS.contains(&w));
        // "experimenting with different spices": an activity's thing is part of it, and so is
        // the article after its preposition ("working on a quilt").
        let activity = matches!(words.as_slice(), [first, ..] if gerund(first));
        let activity_part = activity
            && match previous.as_deref() {
                Some(p) if gerund(p) => EN_ACTIVITY_OBJECTS.contains(&lw.as_str()),
                // Not "sleeping in a bit later": "a bit", "a little", "a lot" say how much.
                Some(p) => {
                    EN_ACTIVITY_OBJECTS.contains(&p)
                        && matches!(lw.as_str(), "a" | "an" | "the")
                        && all.get(i + 1).is_none_or(|next| {
                            !matches!(word_key(next).as_str(), "bit" | "little" | "lot")
                        })
                }
                None => false,
            }
            && all
                .get(i + 1)
                .is_some_and(|next| !STAND_INS.contains(&word_key(next).as_str()));
        // "working from home": where one does it is part of the activity.
        let from_home =
            activity && lw == "from" && all.get(i + 1).is_some_and(|next| word_key(next) == "home");
        // "Singapore 3 times": a count of visits ends the name.
        let count = lw.chars().all(|c| c.is_ascii_digit())
            && all
                .get(i + 1)
                .is_some_and(|next| matches!(word_key(next).as_str(), "times" | "time"));
        // "Universal Studios Hollywood - we had fun": a dash between words ends the name.
        let dash = word
            .chars()
            .all(|c| matches!(c, '-' | '\u{2013}' | '\u{2014}'));
        let boundary = (EN_BOUNDARIES.contains(&lw.as_str()) || count || dash)
            && !from_home
            && !words.is_empty()
            && !credential_field
            && !activity_part
            && !roman_one_in_a_name(&words, word, all.get(i + 1).copied());
        if boundary
            || words.len() == EN_MAX_WORDS
            || reduced_relative(&words, &lw, all.get(i + 1).copied())
        {
            after = i;
            break;
        }
        words.push(word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '\''));
    }
    let mut words: Vec<&str> = words.into_iter().filter(|w| !w.is_empty()).collect();
    // "the Science Museum's \"Space Exploration\" exhibition", cut at the quote: the place is
    // the museum.
    if let [_, .., last] = words.as_mut_slice() {
        *last = last.strip_suffix("'s").unwrap_or(last);
    }
    // "the exercises you suggested": the conversation's own, not the speaker's.
    let the_assistants = all.get(after).is_some_and(|w| word_key(w) == "you");
    if the_assistants || about_something_unnamed(&words, &all[after..]) {
        return None;
    }
    let object = thing(&words)?;
    object
        .chars()
        .any(char::is_alphanumeric)
        .then_some((object, anymore))
}

/// A title in double quotes at the start of `rest` ("I picked up \"The Song of Achilles\""):
/// its words whole, articles and all, when it is a title's length ("the \"Run for the Cure\"
/// event" too). Read only for what was got or bought and where one went: a quoted title liked
/// is most often one the conversation proposed.
pub(crate) fn quoted_title(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    let rest = rest.strip_prefix("the ").unwrap_or(rest);
    let inside = rest.strip_prefix('"')?;
    let title = inside[..inside.find('"')?].trim();
    let words = title.split_whitespace().count();
    ((1..=EN_MAX_WORDS).contains(&words) && title.starts_with(char::is_uppercase))
        .then(|| title.to_owned())
}

/// Words after which a liked pair ("gin and honey") has ended: the clause goes on.
const EN_PAIR_ENDS: &[&str] = &[
    "lately",
    "recently",
    "too",
    "especially",
    "so",
    "but",
    "because",
    "since",
    "as",
    "now",
    "though",
    "also",
    "which",
];

/// The things a liking starting at `at` names: its object, and a second thing joined to it by
/// "and" — liked as well ("hiking and jazz": two likings), or, when the first is an activity
/// or a combination, part of the one thing liked ("experimenting with different seasonings
/// and spices", "the combination of gin and honey"). The second must be a name of at most two
/// words after which the clause ends or moves on, not an activity of its own ("trying
/// different beers and enjoying the foliage") nor a clause ("jazz and want to learn"). Also
/// whether the clause says "anymore" after it.
pub(crate) fn english_liked_objects(clause: &Clause, at: usize) -> Option<(Vec<String>, bool)> {
    let (object, anymore) = english_object(clause, at)?;
    let rest = clause.text.get(at..)?;
    let Some(end) = rest.find(object.as_str()).map(|e| e + object.len()) else {
        return Some((vec![object], anymore));
    };
    let second = || -> Option<String> {
        let second_at = at + end + rest[end..].strip_prefix(" and ").map(|_| " and ".len())?;
        let next = clause.text.get(second_at..)?.split_whitespace().next()?;
        let key = word_key(next);
        if gerund(next)
            || matches!(key.as_str(), "the" | "a" | "an" | "my")
            || NOT_A_START.contains(&key.as_str())
            || EN_BOUNDARIES.contains(&key.as_str())
            || EN_AUXILIARIES.contains(&key.as_str())
        {
            return None;
        }
        let (second, _) = english_object(clause, second_at)?;
        let tail = clause.text.get(second_at..)?;
        let after = &tail[tail.find(second.as_str())? + second.len()..];
        let ends = after.trim_start().is_empty()
            || after.starts_with(|c: char| !c.is_alphanumeric() && c != ' ')
            || after
                .split_whitespace()
                .next()
                .is_some_and(|w| EN_PAIR_ENDS.contains(&word_key(w).as_str()));
        (second.split_whitespace().count() <= 2 && ends).then_some(second)
    };
    // "I like the Quinoa and Black Bean Salad idea": what the pair names is the assistant's idea.
    let pair_is_the_conversations = rest[end..].strip_prefix(" and ").is_some_and(|pair| {
        pair.split(|c: char| !c.is_alphanumeric() && c != ' ' && c != '-')
            .next()
            .and_then(|words| words.split_whitespace().last())
            .is_some_and(|last| CONVERSATION_NOUNS.contains(&word_key(last).as_str()))
    });
    if pair_is_the_conversations {
        return None;
    }
    let Some(second) = second() else {
        return Some((vec![object], anymore));
    };
    // An activity with its thing ("experimenting with different seasonings"), not a bare
    // one ("hiking"), and "the combination of gin": named after a facet's "of".
    let activity = object.split_whitespace().count() > 1
        && object.split_whitespace().next().is_some_and(gerund);
    let one_thing = activity
        || rest[..end - object.len()]
            .to_ascii_lowercase()
            .contains(" of ");
    Some(if one_thing {
        (vec![format!("{object} and {second}")], anymore)
    } else {
        (vec![object, second], anymore)
    })
}

/// Whether the object is about something named elsewhere: an activity ("I love listening to
/// it", "I enjoy working on them": the liking is of that thing, which the words do not name,
/// not of listening) or a part or amount of it ("I bought a few packs of it").
fn about_something_unnamed(words: &[&str], rest: &[&str]) -> bool {
    let stand_in = |w: &str| STAND_INS.contains(&word_key(w).as_str());
    let activity = matches!(words, [only] if gerund(only))
        && matches!(rest, [prep, pronoun, ..]
            if EN_ACTIVITY_PREPOSITIONS.contains(&word_key(prep).as_str()) && stand_in(pronoun));
    let part_of = words.last().is_some_and(|w| word_key(w) == "of")
        && rest.first().is_some_and(|w| stand_in(w));
    activity || part_of
}

/// Whether `word` reads as a gerund or participle ("experimenting", "going"), not a short
/// noun ending the same way ("ring", "king").
fn gerund(word: &str) -> bool {
    let word = word_key(word);
    word.len() > 4 && word.ends_with("ing")
}

/// Whether `word` reads as a plural noun ("projects", "binoculars"), not "glass" or "us".
fn plural(word: &str) -> bool {
    let word = word_key(word);
    word.len() > 2 && word.ends_with('s') && !word.ends_with("ss")
}

/// Particles, prepositions and adverbs of time after which a participle is a clause of its
/// own ("projects going on", "campaigns launching soon").
const EN_PARTICLES: &[&str] = &[
    "on", "around", "in", "at", "up", "out", "off", "about", "by", "for", "over", "soon", "now",
    "today", "tomorrow", "later", "next",
];

/// Whether the participle `word` starts a reduced relative clause after the thing ("a lot
/// of projects going on", "materials lying around"): after a plural noun and before a
/// particle or the end, where a modifier ("running shoes", "a fishing rod") is followed by
/// its noun.
fn reduced_relative(words: &[&str], word: &str, next: Option<&str>) -> bool {
    words.last().is_some_and(|w| plural(w))
        && gerund(word)
        && next.is_none_or(|n| EN_PARTICLES.contains(&word_key(n).as_str()))
}

/// Prepositions an activity takes its thing with ("listening to", "working on").
const EN_ACTIVITY_PREPOSITIONS: &[&str] = &["to", "at", "with", "about", "on", "for", "in"];
/// Of those, the ones whose object is what the activity is of ("listening to jazz",
/// "experimenting with spices"), not where or when it happens ("hiking in the mountains").
const EN_ACTIVITY_OBJECTS: &[&str] = &["to", "with", "about", "on", "for"];

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
/// Forms of "be" before a participle that is the verb of a clause ("been using").
const EN_BE_FORMS: &[&str] = &["been", "am", "is", "are", "was", "were", "i'm", "be"];
/// Most words in the name of a thing before its relative clause.
const EN_MAX_WORDS_BEFORE: usize = 5;

/// The thing a relative clause starting at byte `at` of the clause's text is about: "using
/// the Air Fryer [I got yesterday]", "that Chanel bag [I bought]", "20 of the 50 coffee pods [I
/// bought]", "my tripod, which [I bought]" — the words back to a determiner or a number, when
/// they name a thing ([`thing`]) and are not the object of a preposition.
pub(crate) fn english_object_before(clause: &Clause, at: usize) -> Option<String> {
    let said = clause.text.get(..at)?.trim_end();
    let before = said
        .strip_suffix(", that")
        .or_else(|| said.strip_suffix(" that"))
        .or_else(|| said.strip_suffix(", which"))
        .or_else(|| said.strip_suffix(" which"))
        .unwrap_or(said);
    // A relative clause without "that" or "which" belongs to the noun right before it ("with
    // the remote flash triggers I got", "about the cat tree I got"), whatever precedes it.
    let bare = before.len() == said.len();
    if before.ends_with(|c: char| !c.is_alphanumeric()) {
        return None;
    }
    let words: Vec<&str> = before.split_whitespace().collect();
    let mut start = words.len();
    let opened = loop {
        if start == 0 || words.len() - start > EN_MAX_WORDS_BEFORE {
            break None;
        }
        let word = word_key(words[start - 1]);
        let named_so_far = start < words.len();
        // "my power bank, Anker PowerCore 20000, which I bought": a capitalised name after a
        // comma is the thing, named a second time.
        let appositive = named_so_far
            && words[start - 1].ends_with(',')
            && words[start].starts_with(|c: char| c.is_uppercase());
        // "I've been using reusable containers I got": a participle after "been" opens the
        // bare name that follows it.
        let after_verb = named_so_far
            && gerund(&word)
            && start >= 2
            && EN_BE_FORMS.contains(&word_key(words[start - 2]).as_str());
        // A number opens a name ("20 of the 50 coffee pods") unless it ends one ("Anker
        // PowerCore 20000").
        let number = named_so_far && word.chars().all(|c| c.is_ascii_digit());
        if EN_DETERMINERS.contains(&word.as_str()) || number || appositive || after_verb {
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
    // precedes it; so is the noun a bare relative clause follows.
    let own = bare || word_key(words[opened]) == "my";
    if !own && opened > 0 && EN_PLACE_PREPOSITIONS.contains(&word_key(words[opened - 1]).as_str()) {
        return None;
    }
    let name = &words[start..];
    if name.is_empty()
        || name
            .iter()
            .any(|w| EN_BOUNDARIES.contains(&word_key(w).as_str()))
    {
        return None;
    }
    let name: Vec<&str> = name
        .iter()
        .copied()
        .skip_while(|w| EN_LEADING_ADJECTIVES.contains(&word_key(w).as_str()))
        .collect();
    thing(&name)
}

/// What "it" or "them" right after the verb at byte `after` stands for: the speaker's own
/// thing named earlier in the sentence ("wearing my Fitbit Versa 3 non-stop since I got it",
/// "speaking of my new binoculars, I got them three weeks ago"), the nearest one whose number
/// agrees with the pronoun. `verb_at` is where the verb's clause starts.
pub(crate) fn english_antecedent(clause: &Clause, verb_at: usize, after: usize) -> Option<String> {
    let pronoun = clause.lower.get(after..)?.split_whitespace().next()?;
    let wants_plural = match pronoun.trim_end_matches(|c: char| !c.is_alphanumeric()) {
        "it" => false,
        "them" => true,
        _ => return None,
    };
    let before = clause.lower.get(..verb_at)?;
    before
        .rmatch_indices("my ")
        .filter(|&(at, _)| at == 0 || before[..at].ends_with(' '))
        .find_map(|(at, _)| {
            let (object, _) = english_object(clause, at)?;
            let head = word_key(object.split_whitespace().last()?);
            let agrees = plural(&head) == wants_plural;
            (agrees && !EN_KIN.contains(&head.as_str())).then_some(object)
        })
}

/// Modal and auxiliary verbs: an item opening with one is a clause ("and can earn 1%
/// cashback"), not a name.
const EN_AUXILIARIES: &[&str] = &[
    "can", "could", "will", "would", "should", "may", "might", "must", "shall", "do", "does",
    "did", "am", "have", "has", "had", "then", "maybe",
];

/// Most things one list names.
const EN_MAX_LISTED: usize = 6;

/// The things listed after the first one an object starting at `at` names: "a fern[, snake
/// plant, and spider plant]", "a lamp[ and a rug]". Items follow a comma, "and" or "or", and
/// the list must end on one after "and" or "or" ("a car, a silver Honda Civic" is one thing
/// named twice). Each item's name runs to its separator, except the last of three or more,
/// which may say more ("… and spider plant in my living room"); an item that opens with a
/// word no name opens with ("but", "I'm", "they're") ends the list, and so does one that says
/// more after only the first ("a membership there and can earn 1% cashback").
pub(crate) fn listed_after(clause: &Clause, at: usize) -> Vec<String> {
    let Some(rest) = clause.text.get(at..) else {
        return Vec::new();
    };
    // Each item: the byte it starts at (in `rest`), whether "and" / "or" brought it, its words.
    let mut items: Vec<(usize, bool, Vec<&str>)> = vec![(0, false, Vec::new())];
    let mut offset = 0;
    for word in rest.split(' ') {
        let end = offset + word.len() + 1;
        let bare = word.trim_end_matches(',');
        if bare.eq_ignore_ascii_case("and") || bare.eq_ignore_ascii_case("or") {
            items.push((end, true, Vec::new()));
        } else if !bare.is_empty() {
            if let Some(item) = items.last_mut() {
                item.2.push(bare);
            }
            if word.ends_with(',') {
                items.push((end, false, Vec::new()));
            }
        }
        offset = end;
    }
    // The item's words as a boundary check sees them ("I'm" is "i"), past its article and
    // adjectives.
    let named = |words: &[&str]| -> Vec<String> {
        words
            .iter()
            .map(|w| word_key(w))
            .skip_while(|w| matches!(w.as_str(), "the" | "a" | "an" | "my"))
            .skip_while(|w| EN_LEADING_ADJECTIVES.contains(&w.as_str()))
            .collect()
    };
    let whole = |words: &[String]| {
        !words.is_empty()
            && words.len() <= EN_MAX_WORDS
            && words.iter().all(|w| !EN_BOUNDARIES.contains(&w.as_str()))
    };
    let mut items = items.into_iter().filter(|item| !item.2.is_empty());
    if !items.next().is_some_and(|first| whole(&named(&first.2))) {
        return Vec::new();
    }
    let mut listed: Vec<(String, bool)> = Vec::new();
    for (start, conjoined, words) in items.take(EN_MAX_LISTED) {
        let words = named(&words);
        if words.first().is_none_or(|w| {
            EN_BOUNDARIES.contains(&w.as_str())
                || NOT_A_START.contains(&w.as_str())
                || EN_AUXILIARIES.contains(&w.as_str())
        }) {
            break;
        }
        let says_more = !whole(&words);
        if says_more && (!conjoined || listed.is_empty()) {
            break;
        }
        let Some((object, _)) = english_object(clause, at + start) else {
            break;
        };
        listed.push((object, conjoined));
        if says_more {
            break;
        }
    }
    let last_conjoined = listed.iter().rposition(|(_, conjoined)| *conjoined);
    listed.truncate(last_conjoined.map_or(0, |at| at + 1));
    listed.into_iter().map(|(object, _)| object).collect()
}
