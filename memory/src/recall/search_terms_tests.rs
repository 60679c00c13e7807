//! Queries and entries are cut into the same terms (words and CJK bigrams, stop words out), and
//! long text into passages that end at sentences and lose no character.

use proptest::prelude::*;

use super::*;

#[test]
fn search_terms_have_words_and_cjk_bigrams() {
    let terms = search_terms("我的车停在B2层 Parking");
    for want in ["车", "b2", "parking", "停在"] {
        assert!(
            terms.iter().any(|t| t == want),
            "{want} missing from {terms:?}"
        );
    }
    assert!(
        !terms.iter().any(|t| t == "我"),
        "stop word kept: {terms:?}"
    );
    assert_eq!(query_tokens("When did I mention the car? car CAR"), "car");
    assert_eq!(
        query_tokens("我的车停在哪个车位"),
        "车 停 车位 我的 的车 车停 停在 在哪 个车"
    );
    assert_eq!(index_tokens("car Car when"), "car car when");
}

#[test]
fn passages_cut_at_sentence_ends_and_cover_the_text() {
    let text = "One two three. Four five six! Seven eight nine? Ten.";
    let parts = split_passages(text, 20);
    assert_eq!(
        parts,
        [
            "One two three.",
            "Four five six!",
            "Seven eight nine?",
            "Ten."
        ]
    );
    let long = "x".repeat(45);
    let parts = split_passages(&long, 20);
    assert_eq!(
        parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
        [20, 20, 5]
    );
    assert!(split_passages("  ", 10).is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn passages_keep_every_non_space_character(text in "[a-z .!?。\n]{0,200}", max in 1usize..60) {
        let parts = split_passages(&text, max);
        let joined: String = parts.concat().chars().filter(|c| !c.is_whitespace()).collect();
        let original: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        prop_assert_eq!(joined, original);
        for p in &parts {
            prop_assert!(p.chars().count() <= max);
        }
    }
}
