//! The clause extractor against the rules alone, on a small labelled set in both languages:
//! precision and recall of (subject, predicate, object) triples. The extractor must add
//! recall without giving up precision; the numbers are printed for the record.

use std::collections::BTreeSet;

use hearth_graph::{ColdItem, Distiller, RuleDistiller};

/// Sentences and the triples a careful reader takes from them.
type Triple = (&'static str, &'static str, &'static str);

const LABELLED: &[(&str, &[Triple])] = &[
    ("My name is Ana.", &[("user", "name", "Ana")]),
    ("I live in Porto.", &[("user", "lives_in", "Porto")]),
    (
        "I moved to Lisbon last week.",
        &[("user", "lives_in", "Lisbon")],
    ),
    ("I work at Acme.", &[("user", "works_at", "Acme")]),
    (
        "I like hiking and jazz.",
        &[("user", "likes", "hiking"), ("user", "likes", "jazz")],
    ),
    (
        "My sister Ana lives in Braga.",
        &[("user", "sister", "Ana"), ("Ana", "lives_in", "Braga")],
    ),
    (
        "My brother Rui works at Google.",
        &[("user", "brother", "Rui"), ("Rui", "works_at", "Google")],
    ),
    ("I went to Kyoto in March.", &[("user", "visited", "Kyoto")]),
    ("I bought a Tesla yesterday.", &[("user", "owns", "Tesla")]),
    ("I'm from Brazil.", &[("user", "from", "Brazil")]),
    ("Maria is from Chile.", &[("Maria", "from", "Chile")]),
    ("I speak Portuguese.", &[("user", "speaks", "Portuguese")]),
    ("She lives in Faro.", &[]),
    ("The weather is lovely today.", &[]),
    ("I think so.", &[]),
    ("我叫小明。", &[("user", "name", "小明")]),
    ("我住在杭州。", &[("user", "lives_in", "杭州")]),
    ("我喜欢爬山。", &[("user", "likes", "爬山")]),
    (
        "我妹妹小红住在上海。",
        &[("user", "sister", "小红"), ("小红", "lives_in", "上海")],
    ),
    ("小李在华为工作。", &[("小李", "works_at", "华为")]),
    ("我去了北京。", &[("user", "visited", "北京")]),
    ("我买了一辆车。", &[("user", "owns", "车")]),
    ("今天天气很好。", &[]),
];

fn score(distiller: &RuleDistiller) -> (f64, f64, usize) {
    let (mut tp, mut found, mut wanted) = (0usize, 0usize, 0usize);
    for (i, (text, labels)) in LABELLED.iter().enumerate() {
        let item = ColdItem {
            id: i as i64,
            turn_id: String::new(),
            said_ms: 1_700_000_000_000,
            text: (*text).into(),
            utc_offset_secs: 0,
        };
        let got: BTreeSet<(String, String, String)> = distiller
            .statements(&item)
            .into_iter()
            .flat_map(|s| s.facts)
            .map(|f| (f.subject, f.predicate, f.object))
            .collect();
        let want: BTreeSet<(String, String, String)> = labels
            .iter()
            .map(|(s, p, o)| ((*s).into(), (*p).into(), (*o).into()))
            .collect();
        tp += got.intersection(&want).count();
        found += got.len();
        wanted += want.len();
    }
    (
        tp as f64 / found.max(1) as f64,
        tp as f64 / wanted.max(1) as f64,
        tp,
    )
}

#[test]
fn the_extractor_adds_recall_without_losing_precision() {
    let (rules_p, rules_r, _) = score(&RuleDistiller { extractor: false });
    let (all_p, all_r, _) = score(&RuleDistiller { extractor: true });
    println!(
        "rules only: precision {rules_p:.2} recall {rules_r:.2}; rules + extractor: precision {all_p:.2} recall {all_r:.2}"
    );
    assert!(
        all_r > rules_r + 0.2,
        "extractor recall {all_r:.2} vs rules {rules_r:.2}"
    );
    assert!(all_p >= 0.85, "extractor precision {all_p:.2}");
    assert!(rules_p >= 0.85);
}

/// Sentences users said to an assistant (LongMemEval, MIT): the rules must not take the
/// conversation's ideas, hedges and cut-off phrases for facts. Measured when the English
/// noun-phrase rules came in (`hearth bench distill FILE --no-model`): precision .121 → .625
/// on the sentences they were written against, .091 → .267 on the next 70 labelled before
/// they ran (.462 after the general fixes those showed: contractions, a bare quantity, "when"
/// before a past tense), recall not lower on either. A third 70, labelled before the rules ran
/// on them, measured .100 / .067; then .333 / .333 after the general fixes they showed ("I
/// got", adverbs after "I", "a fan of", "into", "my new X", what is got without being owned).
/// A fourth 70, labelled before the rules ran on them, measured .353 / .316 as the rules then
/// stood and .400 / .316 with the next fixes the third showed (objects up to eight words, the
/// "I" of "Mustang I V2", adverbs after the thing, "got X repaired", "listening to it"); then
/// .900 / .474 after the general fixes the fourth showed ("I've got" as "I have", "a degree in
/// X", "got rid of", a relative's thing, "packs of it", "amazing", a kind of place is no place),
/// and .875 / .737 once what was got may come before its verb ("the Air Fryer I got"), a gift
/// is its receiver's and "my car is a Toyota Corolla" is owned. A fifth 70, labelled before the
/// rules ran on them: .364 / .250 with the rules before the fourth set, .545 / .375 with them
/// after it; .800 / .750 after the general fixes it showed ("I have an", "I have HBO Max", a
/// verb ending its clause, "I got her X", "what I love about X", a list of things had). A
/// sixth 70, labelled before the rules ran on them: .286 / .364; 1.000 / 1.000 after the
/// general fixes it showed (a count or a bare name after "I have", "a total of", a participle
/// after the thing, "I got to visit", a gift named before "I got her", an appositive name, an
/// activity with its thing, two things liked, an origin is a name, mishaps and projects). A
/// seventh 70, labelled before the rules ran on them: .444 / .296; .778 / .519 after the
/// general fixes it showed (a verb before a comma, "it" for the speaker's thing named earlier,
/// "my favourite X is Y", "I've been enjoying", "the exercises you suggested", ", that I
/// bought", plural appointments, "20% off", "a good deal", "the energy of live shows"). An
/// eighth 70, labelled before the rules ran on them: .545 / .706; .750 / .882 after the
/// general fixes it showed (a bare relative clause belongs to the noun before it, "my
/// previous visit to X", a participle before "soon", experience, a price and a quote are not
/// had, a liked pair the assistant's idea, a place's possessive cut at a quote). A ninth 70,
/// labelled before the rules ran on them and drawn also by phrasings none of the earlier sets
/// was ("I've been to", "I got back from", "I purchased", "N years old"): .500 / .189; .926 /
/// .676 after the general fixes it showed (other words for buying and going, a journey's
/// destination, a thing kept for a while, a quoted title got, an intensifier, "New York",
/// "years old,", "a good handle on", tickets and files). A tenth 70, the next of the same draw,
/// labelled before the rules ran on them: .636 / .538; .818 / .692 after the general fixes it
/// showed (a day, a ride or a weekend at or to a place, "to attend X", a model named after a
/// comma, "with me" and "since" for a thing kept, a quoted event, a dash and a decimal point),
/// .844 / .692 once food and drink got are not owned.
#[test]
fn real_talk_gives_few_false_facts() {
    use hearth_graph::distill_bench::{LabelledSet, score_rules};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    for (file, precision, recall) in [
        ("conversation_facts_dev.json", 0.65, 0.75),
        ("conversation_facts_held_out.json", 0.7, 0.7),
        ("conversation_facts_held_out_2.json", 0.6, 0.6),
        ("conversation_facts_held_out_3.json", 0.8, 0.7),
        ("conversation_facts_held_out_4.json", 0.9, 0.7),
        ("conversation_facts_held_out_5.json", 0.9, 0.85),
        ("conversation_facts_held_out_6.json", 0.75, 0.6),
        ("conversation_facts_held_out_7.json", 0.7, 0.8),
        ("conversation_facts_held_out_8.json", 0.9, 0.65),
        ("conversation_facts_held_out_9.json", 0.8, 0.65),
    ] {
        let set = LabelledSet::load(std::path::Path::new(&format!("{dir}/{file}"))).expect(file);
        let score = score_rules(&set);
        println!(
            "{file}: precision {:.3} recall {:.3} ({} of {} found)",
            score.precision(),
            score.recall(),
            score.correct,
            score.found
        );
        assert!(score.precision() >= precision, "{file}: {score:?}");
        assert!(score.recall() >= recall, "{file}: {score:?}");
    }
    let shipped = score_rules(&LabelledSet::shipped());
    assert!(
        shipped.precision() >= 0.96 && shipped.recall() >= 0.75,
        "{shipped:?}"
    );
}
