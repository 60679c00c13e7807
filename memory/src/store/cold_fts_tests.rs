//! Keyword search over cold context ranks better matches higher, takes the query literally, and
//! drops the words that say nothing about an entry once the store is large enough to tell.

use proptest::prelude::*;

use super::common_terms::COMMON_TERM_MIN_ENTRIES;
use super::test_support::{TempDir, cold_record, watchdog};
use super::*;

#[test]
fn a_keyword_ranking_is_not_parsed_again_when_its_limit_changes() {
    watchdog(|| {
        let dir = TempDir::new("fts-limit");
        let mut store = Store::open(dir.db()).expect("open");
        for ts in 0..20 {
            store
                .cold_insert(&cold_record(ts, &format!("garden tomato note{ts}")), 1)
                .expect("insert");
        }
        for limit in [3, 5, 8, 13, 3, 5] {
            assert_eq!(store.cold_fts("tomato", limit).expect("fts").len(), limit);
        }
        let stmt = store
            .conn
            .prepare_cached(cold::RANKED_MATCHES)
            .expect("cached");
        // The first run after the prepare may re-plan once; a bound limit read as a planning
        // hint re-prepares on every change (5 more here).
        let again = stmt.get_status(rusqlite::StatementStatus::RePrepare);
        assert!(again <= 1, "re-prepared {again} times over 6 runs");
    });
}

#[test]
fn store_cold_fts_ranks_higher_is_better() {
    watchdog(|| {
        let dir = TempDir::new("fts");
        let mut store = Store::open(dir.db()).expect("open");
        let both = store
            .cold_insert(&cold_record(1, "北京 天气 晴朗 北京"), 1)
            .expect("insert");
        let one = store
            .cold_insert(&cold_record(2, "上海 天气 多云 下雨 很 冷"), 1)
            .expect("insert");
        let other = store
            .cold_insert(&cold_record(3, "rust sqlite fts5"), 1)
            .expect("insert");

        let hits = store.cold_fts("北京 天气", 10).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [both, one]);
        assert!(
            hits[0].1 > hits[1].1,
            "better match scores higher: {hits:?}"
        );
        assert!(hits.iter().all(|h| h.1 > 0.0));
        assert_eq!(store.cold_fts("北京 天气", 1).expect("fts").len(), 1);
        assert_eq!(store.cold_fts("SQLite", 10).expect("fts")[0].0, other);
        // A time bound leaves out later entries and reports each hit's time and source.
        let before = store.cold_fts_before("天气", 10, 2).expect("fts");
        assert_eq!(before.len(), 1, "{before:?}");
        assert_eq!(
            (
                before[0].id,
                before[0].timestamp_ms,
                before[0].source.as_str()
            ),
            (both, 1, "cli")
        );
        assert!(
            store
                .cold_fts_before("天气", 10, 1)
                .expect("fts")
                .is_empty()
        );
        assert!(store.cold_fts("广州", 10).expect("fts").is_empty());
        assert!(store.cold_fts("", 10).expect("fts").is_empty());
        assert!(store.cold_fts("天气", 0).expect("fts").is_empty());
        // FTS5 syntax in the query is literal, not an error.
        assert!(store.cold_fts("\"rust OR NEAR( *", 10).expect("fts").len() == 1);

        assert_eq!(store.cold_remove(&[other, other]).expect("remove"), 1);
        assert!(store.cold_fts("rust", 10).expect("fts").is_empty());
        assert_eq!(store.cold_get(other).expect("get"), None);
    });
}

#[test]
fn store_cold_fts_skips_terms_held_by_most_entries_once_the_store_is_large() {
    watchdog(|| {
        let dir = TempDir::new("fts-common");
        let mut store = Store::open(dir.db()).expect("open");
        let mut ids = Vec::new();
        for n in 0..COMMON_TERM_MIN_ENTRIES as i64 {
            let tokens = format!("turn number n{n}");
            ids.push(
                store
                    .cold_insert(&cold_record(n, &tokens), 1)
                    .expect("insert"),
            );
        }
        let rare = store
            .cold_insert(&cold_record(1_000, "turn lisbon"), 1)
            .expect("insert");
        // "turn" is in every entry: it weighs nothing, so only the entries the other words
        // match come back, in the same order and with the scores they had with it.
        let hits = store.cold_fts("turn n17 lisbon", 50).expect("fts");
        let got: Vec<i64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(got.len(), 2, "{hits:?}");
        assert!(got.contains(&ids[17]) && got.contains(&rare), "{hits:?}");
        let before = store
            .cold_fts_before("TURN n17", 50, i64::MAX)
            .expect("fts");
        assert_eq!(before.iter().map(|h| h.id).collect::<Vec<_>>(), [ids[17]]);
        // Only common words: nothing to rank by, nothing read.
        assert!(store.cold_fts("turn number", 50).expect("fts").is_empty());
        // A rare word is kept whatever its case.
        assert_eq!(store.cold_fts("Lisbon", 50).expect("fts").len(), 1);
        // A read-only reader drops the same terms (its count table is its own temp table).
        let reader = StoreReader::open(dir.db()).expect("reader");
        assert_eq!(reader.cold_fts("turn n17", 50).expect("fts").len(), 1);
    });
}

#[test]
fn store_cold_fts_skips_a_term_held_by_exactly_half_of_the_entries() {
    watchdog(|| {
        let dir = TempDir::new("fts-half");
        let mut store = Store::open(dir.db()).expect("open");
        // The user's every message opens with the same word; the replies never say it.
        let mut said = Vec::new();
        for n in 0..COMMON_TERM_MIN_ENTRIES as i64 {
            let user = cold_record(2 * n, &format!("hey n{n}"));
            said.push(store.cold_insert(&user, 1).expect("insert"));
            let reply = cold_record(2 * n + 1, &format!("reply r{n}"));
            store.cold_insert(&reply, 1).expect("insert");
        }
        let hits = store.cold_fts("hey n17", 50).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [said[17]]);
    });
}

#[test]
fn store_cold_fts_skips_a_nearly_weightless_term_and_keeps_a_weak_one() {
    watchdog(|| {
        let dir = TempDir::new("fts-weak");
        let mut store = Store::open(dir.db()).expect("open");
        // Just under half of the entries say "hey" (idf 0.04): a word said once weighs 150
        // times more. One user entry in ten says "stove" (idf 2.9): it still ranks.
        let mut said = Vec::new();
        for n in 0..COMMON_TERM_MIN_ENTRIES as i64 {
            let stove = if n % 10 == 0 { " stove" } else { "" };
            let user = cold_record(2 * n, &format!("hey n{n}{stove}"));
            said.push(store.cold_insert(&user, 1).expect("insert"));
            let reply = cold_record(2 * n + 1, &format!("reply r{n}"));
            store.cold_insert(&reply, 1).expect("insert");
        }
        for n in 0..10 {
            let extra = cold_record(10_000 + n, &format!("note x{n}"));
            store.cold_insert(&extra, 1).expect("insert");
        }
        let hits = store.cold_fts("hey n17", 50).expect("fts");
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [said[17]]);
        let hits = store.cold_fts("hey n17 stove", 50).expect("fts");
        assert_eq!(
            hits.len(),
            1 + COMMON_TERM_MIN_ENTRIES as usize / 10 + 1,
            "{hits:?}"
        );
        assert_eq!(hits[0].0, said[17]);
        // A word never said is still the query's strongest: "hey" does not stand in for it.
        assert!(store.cold_fts("hey n9999", 50).expect("fts").is_empty());
    });
}

#[test]
fn store_cold_fts_keeps_common_terms_in_a_small_store() {
    watchdog(|| {
        let dir = TempDir::new("fts-small");
        let mut store = Store::open(dir.db()).expect("open");
        for n in 0..10 {
            store
                .cold_insert(&cold_record(n, &format!("turn n{n}")), 1)
                .expect("insert");
        }
        assert_eq!(store.cold_fts("turn", 50).expect("fts").len(), 10);
    });
}

proptest! {
    // Each case opens a real store file.
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The index-first keyword search answers exactly what the join of every match does, with
    /// entries later than the bound mixed in anywhere in the ranking.
    #[test]
    fn keyword_search_before_a_time_equals_the_filtered_join(
        entries in proptest::collection::vec((0i64..40, proptest::collection::vec(0usize..6, 1..5)), 1..40),
        before in 0i64..45,
        limit in 1usize..12,
        query in proptest::collection::vec(0usize..6, 1..3),
    ) {
        const WORDS: [&str; 6] = ["alpha", "beta", "gamma", "delta", "eps", "zeta"];
        let dir = TempDir::new("fts-before-prop");
        let mut store = Store::open(dir.db()).expect("open");
        for (ts, words) in &entries {
            let text: Vec<&str> = words.iter().map(|&w| WORDS[w]).collect();
            store.cold_insert(&cold_record(*ts, &text.join(" ")), 1).expect("insert");
        }
        let query: Vec<&str> = query.iter().map(|&w| WORDS[w]).collect();
        let query = query.join(" ");
        let fast = store.cold_fts_before(&query, limit, before).expect("fast");
        let terms = store.informative_terms(&query).expect("terms");
        let (built, lim) = super::cold::fts_args(&terms, limit).expect("query");
        let joined = store.filtered_matches(&built, lim, before).expect("join");
        prop_assert_eq!(fast, joined);
    }
}
