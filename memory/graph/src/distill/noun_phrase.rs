//! What of the words after an English verb names a thing: real talk puts clauses, hedges and
//! the conversation's own objects there ("I like the idea of using an image", "I like that
//! they offer", "I have a lot of movies to add", "I love your insights"), which a fixed window
//! of words turned into facts like `likes "idea of using an"`.

use super::extractor::EN_KIN;
use hearth_memory::ENGLISH_WEEKDAYS;

/// Words that cannot begin the name of a thing: pronouns, wh-words and complementisers
/// ("I like how it…", "I like that they…"), prepositions ("I bought last week at Walmart"),
/// degree and comparison words ("which one I like best"), demonstratives and other people's
/// possessives (the conversation's own "these prompts", the assistant's "your insights").
pub(crate) const NOT_A_START: &[&str] = &[
    "that",
    "how",
    "what",
    "which",
    "who",
    "why",
    "when",
    "where",
    "if",
    "whether",
    "it",
    "it's",
    "its",
    "they",
    "them",
    "he",
    "him",
    "she",
    "we",
    "us",
    "you",
    "your",
    "their",
    "our",
    "i",
    "me",
    "myself",
    "to",
    "at",
    "in",
    "on",
    "from",
    "for",
    "by",
    "with",
    "about",
    "of",
    "into",
    "best",
    "better",
    "most",
    "more",
    "less",
    "least",
    "so",
    "too",
    "very",
    "really",
    "just",
    "also",
    "this",
    "these",
    "those",
    "there",
    "here",
    "being",
    "getting",
    "doing",
    "going",
    "recently",
    "lately",
    "yesterday",
    "today",
    "tomorrow",
    "already",
    "again",
    "back",
    "earlier",
    "as",
    // "20% off my order": a saving, not a thing.
    "off",
    // A choice among the options talked about ("I like the larger 1 TB SSD"), not a thing.
    "larger",
    "smaller",
    "bigger",
    "cheaper",
    "pricier",
    "lighter",
    "heavier",
    "faster",
    "slower",
    "simpler",
    "other",
    "former",
    "latter",
    "nothing",
    "something",
    "anything",
    "everything",
];

/// Words that stand in for a thing named elsewhere ("a few packs of it", "listening to it").
pub(crate) const STAND_INS: &[&str] =
    &["it", "them", "this", "that", "these", "those", "him", "her"];

/// Quantity words before the thing itself ("a bunch of cookbooks" is cookbooks).
const QUANTITIES: &[&[&str]] = &[
    &["lot", "of"],
    &["lots", "of"],
    &["bunch", "of"],
    &["couple", "of"],
    &["pair", "of"],
    &["variety", "of"],
    &["number", "of"],
    &["plenty", "of"],
    &["bit", "of"],
    &["set", "of"],
    &["collection", "of"],
    &["ton", "of"],
    &["tons", "of"],
    &["handful", "of"],
    &["total", "of"],
    &["batch", "of"],
    &["few"],
    &["some"],
    &["several"],
    &["many"],
];

/// Numbers written as words, a count before the thing ("I have two cats").
pub(crate) const EN_NUMBERS: &[&str] = &[
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "dozens", "hundreds",
];

/// Quantities that, as the last word, leave the thing unnamed ("a 50-pound batch").
const UNNAMED_AMOUNTS: &[&str] = &[
    "batch", "bunch", "lot", "lots", "handful", "ton", "tons", "bit", "plenty", "total", "few",
    "couple",
];

/// Facets of a thing: "the flavor of caramelized onions" is caramelized onions, "the weekly
/// issues of The New Yorker" The New Yorker.
const FACETS: &[&str] = &[
    "flavor",
    "flavour",
    "taste",
    "smell",
    "look",
    "feel",
    "texture",
    "combination",
    "mix",
    "issue",
    "issues",
    "energy",
    "atmosphere",
    "vibe",
    "flexibility",
];

/// Nouns of the conversation itself, not of the speaker's life: liking an idea, a suggestion
/// or "the sound of" something the assistant offered is not a standing preference, and "a good
/// idea of how" or "some options" are not possessions.
pub(crate) const CONVERSATION_NOUNS: &[&str] = &[
    "idea",
    "ideas",
    "sound",
    "thought",
    "thoughts",
    "suggestion",
    "suggestions",
    "option",
    "options",
    "tip",
    "tips",
    "advice",
    "template",
    "prompt",
    "prompts",
    "insight",
    "insights",
    "recommendation",
    "recommendations",
    "question",
    "questions",
    "comment",
    "way",
    "things",
    "items",
    "stuff",
    "plan",
    "plans",
    "fact",
    "feedback",
    "point",
    "points",
];

/// Words that cannot end the name of a thing: a cut-off phrase ends in them ("lot of movies
/// to", "idea of the").
const NOT_AN_END: &[&str] = &[
    "the", "a", "an", "of", "to", "that", "which", "who", "and", "or", "my", "your", "our",
    "their", "his", "her", "its", "it", "i", "is", "are", "was", "were", "be", "been", "have",
    "has", "had", "how", "what", "about", "into", "by", "some", "any",
];

/// Adverbs that follow a thing without being part of its name ("I got my stand mixer back",
/// "a membership there"). A word alone is left as it is: "back" alone is no possession, which
/// [`not_a_possession`] decides.
const TRAILING_ADVERBS: &[&str] = &[
    "back",
    "there",
    "here",
    "today",
    "yesterday",
    "again",
    "once",
    "twice",
    "yet",
    "either",
    "anyway",
    "non-stop",
    "nonstop",
];

/// The name of a thing in `words` (the words after the verb, leading article already
/// dropped, cut at a boundary), or `None` when they do not name one.
pub(crate) fn thing(words: &[&str]) -> Option<String> {
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let mut start = 0;
    // "a lot of", "a few", "20": the quantity is not the thing.
    while start < lower.len() {
        let rest = &lower[start..];
        if let Some(q) = QUANTITIES
            .iter()
            .find(|q| rest.len() > q.len() && rest.iter().zip(q.iter()).all(|(w, q)| w == q))
        {
            start += q.len();
        } else if rest.len() > 1
            && (rest[0].chars().all(|c| c.is_ascii_digit() || c == '-')
                || EN_NUMBERS.contains(&rest[0].as_str()))
            && !model_year(&words[start..])
        {
            start += 1;
        } else {
            break;
        }
    }
    let mut end = lower.len();
    while end > start
        && (NOT_AN_END.contains(&lower[end - 1].as_str())
            || (end - start > 1 && TRAILING_ADVERBS.contains(&lower[end - 1].as_str())))
    {
        end -= 1;
    }
    if start == end || NOT_A_START.contains(&lower[start].as_str()) {
        return None;
    }
    // "the 2 that I bought": a number alone counts what is named elsewhere.
    if end - start == 1 && lower[start].chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    // A quantity alone ("I have a few", "a lot on my plate", "a 50-pound batch") names nothing.
    if (end - start == 1 && QUANTITIES.iter().any(|q| q[0] == lower[start]))
        || UNNAMED_AMOUNTS.contains(&lower[end - 1].as_str())
    {
        return None;
    }
    // The head of "the flavor of X" is `flavor`; of "good idea" `idea`.
    let of = lower[start..end].iter().position(|w| w == "of");
    let head = of.map_or(end - 1, |at| start + at - 1);
    // "the one I got", "new ones": a stand-in for a thing named elsewhere.
    if head < start
        || CONVERSATION_NOUNS.contains(&lower[head].as_str())
        || matches!(lower[head].as_str(), "one" | "ones")
    {
        return None;
    }
    if FACETS.contains(&lower[head].as_str()) {
        // A facet alone ("the flavor it adds") names nothing; the article of what it is of
        // goes as the object's own does.
        let of_what = &words[start + of? + 1..end];
        let article = of_what
            .first()
            .is_some_and(|w| matches!(w.to_ascii_lowercase().as_str(), "the" | "a" | "an"));
        return thing(&of_what[usize::from(article)..]);
    }
    Some(words[start..end].join(" "))
}

/// Whether `words` open with a model year ("2018 Honda Civic"): part of the name, not a count.
fn model_year(words: &[&str]) -> bool {
    matches!(words, [year, make, ..]
        if year.len() == 4
            && (year.starts_with("19") || year.starts_with("20"))
            && make.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Things one has that are appointments or habits, not possessions: "I have a meeting at 2
/// PM", "my yoga class at 6", "a 30-minute exercise routine"; and any day ("a busy Monday
/// ahead").
const APPOINTMENTS: &[&str] = &[
    "meeting",
    "meetings",
    "appointment",
    "appointments",
    "commitment",
    "commitments",
    "class",
    "classes",
    "session",
    "sessions",
    "game",
    "games",
    "party",
    "call",
    "calls",
    "exam",
    "test",
    "deadline",
    "interview",
    "lesson",
    "shift",
    "flight",
    "routine",
    "schedule",
    "project",
    "projects",
    "campaign",
    "campaigns",
    "task",
    "tasks",
    "assignment",
    "assignments",
    "homework",
    "weekend",
    "week",
    "day",
    "today",
    "tomorrow",
    "tonight",
    "ahead",
];

/// What one gets or has without owning it: "I got my flu shot", "I got a discount", "I have a
/// chance", "I have a feeling", "a strong foundation in", "I got first place", "I got the
/// results", "I got rid of"; a job is where one works, not a possession.
const NOT_OWNED: &[&str] = &[
    "shot",
    "vaccine",
    "haircut",
    "discount",
    "refund",
    "chance",
    "promotion",
    "raise",
    "job",
    "message",
    "email",
    "reply",
    "response",
    "feeling",
    "sense",
    "foundation",
    "understanding",
    "place",
    "results",
    "result",
    "news",
    "rid",
    "coupon",
    "coupons",
    "deal",
    "deals",
    "experience",
    "price",
    "quote",
    "estimate",
    "voucher",
    "groceries",
    // "I've got a good handle on it", "a few tickets", "a lot of files to edit".
    "handle",
    "ticket",
    "tickets",
    "file",
    "files",
    "followers",
    "subscribers",
    "minutes",
    "hours",
    "days",
    "weeks",
    "months",
    "years",
];

/// Food and drink, as the head of what was got: eaten or drunk, not kept ("the Hendrick's gin
/// I picked up", "a pack of dental chews", "some chicken breast"). Only the last word counts:
/// a coffee table and coffee pods are kept.
const FOOD_HEADS: &[&str] = &[
    "gin",
    "wine",
    "beer",
    "whiskey",
    "whisky",
    "vodka",
    "rum",
    "tequila",
    "coffee",
    "tea",
    "juice",
    "chews",
    "treats",
    "snacks",
    "chicken",
    "breast",
    "gnocchi",
    "tomatoes",
    "bread",
    "cheese",
    "fruit",
    "vegetables",
    "pizza",
    "cake",
    "cookies",
    "chocolate",
];

/// What one gets that befalls one, said whole: "I got a flat tire", "I got a cold".
const MISHAPS: &[&str] = &[
    "flat tire",
    "flat tyre",
    "flat",
    "cold",
    "flu",
    "fever",
    "headache",
    "sunburn",
    "speeding ticket",
    "parking ticket",
];

/// Words that, alone after "got", say what became of the speaker or a thing, not what they
/// own: "I got done", "I got married", "I got back".
const STATES: &[&str] = &[
    "done", "back", "home", "ready", "sick", "lost", "better", "worse",
];

/// Whether `object`, had or got, is not a possession: an appointment or habit, something got
/// without being owned, food or drink, a relative's thing, or a state or participle.
pub(crate) fn not_a_possession(object: &str) -> bool {
    let words: Vec<String> = object
        .split_whitespace()
        .map(str::to_ascii_lowercase)
        .collect();
    // "married", "repaired"; not "bed", "shed" or "speed".
    let participle = |w: &str| w.len() > 4 && w.ends_with("ed") && !w.ends_with("eed");
    let state = match words.as_slice() {
        [only] => STATES.contains(&only.as_str()) || participle(only),
        // "I got my bike repaired": something done to a thing one already had.
        [_, .., last] => participle(last),
        [] => false,
    };
    // "I got my sister's birthday present": a gift is its receiver's.
    let someone_elses = words
        .first()
        .and_then(|w| w.strip_suffix("'s"))
        .is_some_and(|whose| EN_KIN.contains(&whose));
    let food = words
        .last()
        .is_some_and(|w| FOOD_HEADS.contains(&w.as_str()));
    state
        || someone_elses
        || food
        || MISHAPS.contains(&words.join(" ").as_str())
        || words.iter().any(|w| {
            let w = w.as_str();
            APPOINTMENTS.contains(&w) || NOT_OWNED.contains(&w) || ENGLISH_WEEKDAYS.contains(&w)
        })
}

/// Kinds of place rather than places: "I live in the city", "in a small town", "in the
/// downtown area" say where one lives no more than "somewhere" does.
const KINDS_OF_PLACE: &[&str] = &[
    "city",
    "town",
    "area",
    "suburb",
    "suburbs",
    "countryside",
    "neighborhood",
    "neighbourhood",
    "village",
    "region",
    "place",
    "downtown",
    "apartment",
    "house",
    "flat",
    "dorm",
    "building",
];

/// Whether `object`, where someone lives, is a kind of place and no name: no capital letter
/// (a name has one: "Mexico City") and a kind of place as its last word.
pub(crate) fn a_kind_of_place(object: &str) -> bool {
    !object.chars().any(char::is_uppercase)
        && object
            .split_whitespace()
            .last()
            .is_some_and(|w| KINDS_OF_PLACE.contains(&w.to_ascii_lowercase().as_str()))
}

#[cfg(test)]
mod tests {
    use super::thing;

    #[test]
    fn a_kind_of_place_is_no_place() {
        use super::a_kind_of_place;
        for object in ["city", "downtown area", "small town", "suburbs"] {
            assert!(a_kind_of_place(object), "{object}");
        }
        for object in ["Mexico City", "Lisbon", "the Bay Area", "Porto"] {
            assert!(!a_kind_of_place(object), "{object}");
        }
    }

    fn of(text: &str) -> Option<String> {
        thing(&text.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn an_adverb_after_the_thing_is_not_its_name() {
        assert_eq!(of("stand mixer back").as_deref(), Some("stand mixer"));
        assert_eq!(of("membership there").as_deref(), Some("membership"));
    }

    #[test]
    fn a_quantity_goes_and_the_thing_stays() {
        assert_eq!(of("bunch of cookbooks").as_deref(), Some("cookbooks"));
        assert_eq!(of("20 playlists").as_deref(), Some("playlists"));
        assert_eq!(of("2018 Honda Civic").as_deref(), Some("2018 Honda Civic"));
        assert_eq!(of("2018 receipts").as_deref(), Some("receipts"));
        assert_eq!(of("few items"), None);
        assert_eq!(of("few"), None);
        assert_eq!(of("lot"), None);
        assert_eq!(of("lot of movies to").as_deref(), Some("movies"));
    }

    #[test]
    fn clauses_hedges_and_the_conversations_own_things_are_not_things() {
        for words in [
            "that they offer",
            "how it includes detailed",
            "idea of using natural",
            "sound of the Skagen",
            "better idea of how",
            "good idea of how",
            "these reflection prompts",
            "your insights",
            "at Walmart",
            "best",
            "idea of the",
            "recently",
        ] {
            assert_eq!(of(words), None, "{words}");
        }
    }

    #[test]
    fn what_is_got_without_being_owned_is_no_possession() {
        use super::not_a_possession;
        for object in [
            "flu shot",
            "10% discount",
            "married",
            "done",
            "back",
            "yoga class",
            "30-minute exercise routine",
            "feeling",
            "strong foundation",
            "bike repaired",
            "results",
            "rid of the old toaster",
            "sister's birthday present",
        ] {
            assert!(not_a_possession(object), "{object}");
        }
        for object in [
            "bed",
            "emerald earrings",
            "dog bed",
            "stand mixer",
            "speed boat",
            "master's degree",
        ] {
            assert!(!not_a_possession(object), "{object}");
        }
    }

    #[test]
    fn a_facet_names_the_thing_after_it() {
        assert_eq!(
            of("flavor of caramelized onions").as_deref(),
            Some("caramelized onions")
        );
        assert_eq!(of("Bank of America").as_deref(), Some("Bank of America"));
        assert_eq!(
            of("coral-colored necklace").as_deref(),
            Some("coral-colored necklace")
        );
    }
}
