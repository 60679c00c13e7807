//! Cold context tests. Most run on a small deterministic embedder (a bag of concepts) so the
//! expected rankings can be worked out by hand; the Chinese/English recall tests run the real
//! installed model and fail with "run `make setup`" without it instead of passing vacuously.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use proptest::prelude::*;

use super::*;
use crate::test_support::watchdog;
use crate::{
    ColdRecord, ColdVector, ContextEvent, ContextWindow, DenseVector, EmbedError, Embedder,
    Fingerprint, OnnxEmbedder, Pooling, Store, ToolOutput,
};

const HOUR_MS: i64 = 60 * 60 * 1000;
/// When the tests that do not care about time ask: just after their entries, the same day.
pub(super) const ASKED: i64 = 20_000;

pub(super) struct TempDir(pub(super) PathBuf);

impl TempDir {
    pub(super) fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("hearth-recall-{name}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create test dir");
        Self(dir)
    }

    pub(super) fn store(&self) -> Store {
        Store::open(self.0.join("memory.db")).expect("open store")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Concepts of the test embedder: a text's vector counts the words of each concept it uses.
const CONCEPTS: &[&[&str]] = &[
    &["cat", "kitten", "pet", "猫"],
    &["trip", "travel", "flight", "旅行"],
    &["pizza", "dinner", "food", "吃"],
    &["job", "office", "work", "工作"],
    &["piano", "music", "song", "钢琴"],
    &["rain", "weather", "sunny", "天气"],
    &["car", "parking", "garage", "车"],
    &["book", "novel", "read", "书"],
];

/// A deterministic "dense model": one dimension per concept, plus a constant dimension so no
/// text maps to the zero vector.
pub(super) struct ConceptEmbedder {
    fingerprint: Fingerprint,
}

impl ConceptEmbedder {
    pub(super) fn new(sha: &str) -> Self {
        Self {
            fingerprint: Fingerprint::new("concepts", sha, CONCEPTS.len() + 1, Pooling::Mean)
                .expect("valid fingerprint"),
        }
    }

    pub(super) fn vector(text: &str) -> Vec<f32> {
        let lower = text.to_lowercase();
        let mut v: Vec<f32> = CONCEPTS
            .iter()
            .map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32)
            .collect();
        v.push(0.1);
        crate::l2_normalize(&mut v);
        v
    }
}

impl Embedder for ConceptEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        CONCEPTS.len() + 1
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| Self::vector(t)).collect())
    }
}

/// A model that embeds as [`ConceptEmbedder`] does, and can be switched off and on.
pub(super) struct Flaky {
    pub(super) fingerprint: Fingerprint,
    up: Arc<std::sync::atomic::AtomicBool>,
}

impl Flaky {
    /// Up while `up` holds true.
    pub(super) fn new(up: &Arc<std::sync::atomic::AtomicBool>) -> Self {
        Self {
            fingerprint: Fingerprint::new(
                "flaky",
                "00ff00ff00ff",
                CONCEPTS.len() + 1,
                Pooling::Mean,
            )
            .expect("valid fingerprint"),
            up: up.clone(),
        }
    }
}

impl Embedder for Flaky {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        CONCEPTS.len() + 1
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.up.load(Ordering::SeqCst) {
            Ok(texts.iter().map(|t| ConceptEmbedder::vector(t)).collect())
        } else {
            Err(EmbedError::Output {
                message: "switched off".into(),
            })
        }
    }
}

pub(super) fn concept_embedder() -> Arc<dyn Embedder> {
    Arc::new(ConceptEmbedder::new("0123456789ab"))
}

pub(super) fn user(ts: i64, text: &str) -> ContextEvent {
    ContextEvent::new(ts, "cli", text)
}

// ---------------------------------------------------------------------------------------------
// text_for_vector

struct Rules;

impl VectorTextRules for Rules {
    fn clean_channel<'t>(&self, source: &str, text: Cow<'t, str>) -> Cow<'t, str> {
        if source == "web" {
            Cow::Owned(text.replace("<b>", "").replace("</b>", ""))
        } else {
            text
        }
    }

    fn channel_no_memory(&self, source: &str) -> bool {
        source == "secret"
    }

    fn clean_tool<'t>(&self, tool: &str, output: &'t str) -> Cow<'t, str> {
        if tool == "search" {
            Cow::Owned(output.to_uppercase())
        } else {
            Cow::Borrowed(output)
        }
    }

    fn tool_no_memory(&self, tool: &str) -> bool {
        tool == "clock"
    }
}

#[test]
fn text_for_vector_chooses_the_spec_base_text() {
    let agent = ContextEvent::new(1, AGENT_SOURCE, "ask").with_response("the answer");
    assert_eq!(text_for_vector(&agent, &PlainText), "the answer");
    let agent_silent = ContextEvent::new(1, AGENT_SOURCE, "ask");
    assert_eq!(text_for_vector(&agent_silent, &PlainText), "ask");
    let cold = ContextEvent::new(1, COLD_STORAGE_SOURCE, "old q").with_response("old a");
    assert_eq!(text_for_vector(&cold, &PlainText), "old q old a");
    let other = ContextEvent::new(1, "cli", "question").with_response("reply");
    assert_eq!(text_for_vector(&other, &PlainText), "question");
}

#[test]
fn text_for_vector_applies_cleaners_no_memory_and_tools() {
    let mut web = ContextEvent::new(1, "web", "  <b>hello</b>\n\n world ");
    web.tool_results = vec![
        ToolOutput {
            name: "search".into(),
            output: "found it".into(),
        },
        ToolOutput {
            name: "clock".into(),
            output: "12:00".into(),
        },
        ToolOutput {
            name: "calc".into(),
            output: "4\t2".into(),
        },
    ];
    assert_eq!(text_for_vector(&web, &Rules), "hello world FOUND IT 4 2");
    let mut secret = ContextEvent::new(1, "secret", "pin 1234");
    secret.tool_results = web.tool_results.clone();
    assert_eq!(text_for_vector(&secret, &Rules), "");
}

#[test]
fn clean_text_collapses_whitespace_and_drops_controls() {
    assert_eq!(
        clean_text("  a \t b\r\n\u{7}c\u{3000}d\u{7}e  "),
        "a b c de"
    );
    assert_eq!(clean_text(" \n "), "");
}

// ---------------------------------------------------------------------------------------------
// terms and passages

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

// ---------------------------------------------------------------------------------------------
// archive, prune, recall

pub(super) fn seed_events() -> Vec<ContextEvent> {
    vec![
        user(1_000, "my kitten likes to sleep on the sofa"),
        user(2_000, "booked a flight for the trip to Lisbon"),
        user(3_000, "pizza for dinner tonight"),
        user(4_000, "the office moved to the fifth floor"),
        user(5_000, "my car is in the parking garage level two"),
    ]
}

fn seeded(dir: &TempDir, embedder: Option<Arc<dyn Embedder>>) -> (ColdContext, Vec<i64>) {
    let mut cold = ColdContext::new(dir.store(), embedder);
    let ids = cold
        .archive_events(seed_events(), "import", 10_000)
        .expect("archive");
    (cold, ids)
}

#[test]
fn archive_keeps_original_timestamps_text_and_vectors() {
    watchdog(30, || {
        let dir = TempDir::new("archive");
        let (cold, ids) = seeded(&dir, Some(concept_embedder()));
        assert_eq!(ids.len(), 5);
        let store = cold.store();
        assert_eq!(store.cold_count().expect("count"), 5);
        assert!(store.events_window().expect("window").is_empty());
        let entry = store.cold_get(ids[4]).expect("get").expect("present");
        assert_eq!(entry.event.timestamp_ms, 5_000);
        assert_eq!(entry.text, "my car is in the parking garage level two");
        assert!(entry.tokens.split(' ').any(|t| t == "garage"));
        let dense = entry.dense.expect("dense vector");
        assert_eq!(dense.fingerprint, "concepts:0123456789ab:9:mean");
        // Cold context keeps the vector quantized: exactly the model's vector's stored form.
        assert_eq!(
            dense.values,
            stored_form(&ConceptEmbedder::vector(&entry.text))
        );
        assert_eq!(entry.archived_from, "import");
    });
}

#[test]
fn prune_moves_the_least_relevant_to_cold_and_never_drops() {
    watchdog(30, || {
        let dir = TempDir::new("prune");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        let texts = [
            "my kitten is asleep",
            "flight to Lisbon",
            "pizza dinner",
            "office work",
            "piano song",
            "rain today",
            "a novel to read",
            "latest: the car is at the garage",
        ];
        let events: Vec<ContextEvent> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| user(i as i64 * 1000, t))
            .collect();
        cold.append(events).expect("append");
        // Keep 4: the last 2 protected, plus the 2 candidates most about pets and food.
        let outcome = cold
            .prune("my cat wants food", 4, 2, 50_000)
            .expect("prune");
        assert_eq!(outcome.kept, 4);
        assert_eq!(outcome.archived.len(), 4);
        let window: Vec<String> = cold
            .store()
            .events_window()
            .expect("window")
            .into_iter()
            .map(|e| e.record.event.input)
            .collect();
        assert_eq!(
            window,
            [
                "my kitten is asleep",
                "pizza dinner",
                "a novel to read",
                "latest: the car is at the garage"
            ]
        );
        let mut archived: Vec<(i64, String)> = outcome
            .archived
            .iter()
            .map(|&id| {
                let e = cold.store().cold_get(id).expect("get").expect("present");
                (e.event.timestamp_ms, e.event.input)
            })
            .collect();
        archived.sort();
        assert_eq!(
            archived,
            [
                (1000, "flight to Lisbon".to_owned()),
                (3000, "office work".to_owned()),
                (4000, "piano song".to_owned()),
                (5000, "rain today".to_owned()),
            ]
        );
    });
}

#[test]
fn prune_with_an_empty_query_keeps_the_newest() {
    watchdog(30, || {
        let dir = TempDir::new("prune-empty");
        let mut cold = ColdContext::new(dir.store(), None);
        let events: Vec<ContextEvent> = (0..6)
            .map(|i| user(i * 1000, &format!("event number {i}")))
            .collect();
        cold.append(events).expect("append");
        let outcome = cold.prune("", 3, 1, 10_000).expect("prune");
        assert_eq!(outcome.archived.len(), 3);
        let window: Vec<i64> = cold
            .store()
            .events_window()
            .expect("window")
            .iter()
            .map(|e| e.record.event.timestamp_ms)
            .collect();
        assert_eq!(window, [3000, 4000, 5000]);
    });
}

#[test]
fn recall_fuses_dense_and_keyword_rankings_by_rrf() {
    watchdog(30, || {
        let dir = TempDir::new("fuse");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        cold.set_config(RecallConfig {
            fusion: FusionMethod::Rank,
            rrf_k: 60.0,
            // Exact fused scores: no weighing by age, every dense candidate kept.
            recency_half_life_days: 0.0,
            dense_relative_floor: 0.0,
            ..RecallConfig::default()
        });
        // "kitten" is a keyword of entry 0 only; the concept "pet" is entry 0's dense concept.
        // Dense ranking: entry 0 first, then every other (cosine equal: 0.1 · 0.1 terms), by id.
        // Keyword ranking: entry 0 only. So entry 0 scores 1/61 + 1/61.
        let hits = cold.peek("kitten", 3, ASKED).expect("peek");
        assert_eq!(hits[0].id, ids[0]);
        assert!(
            (hits[0].score - 2.0 / 61.0).abs() < 1e-9,
            "{}",
            hits[0].score
        );
        assert!(hits[0].keyword_score.is_some());
        assert!(hits[0].dense_cosine.expect("cosine") > 0.9);
        // The rest come from the dense list only, in its order: ranks 2 and 3.
        assert!((hits[1].score - 1.0 / 62.0).abs() < 1e-9);
        assert!((hits[2].score - 1.0 / 63.0).abs() < 1e-9);
        assert!(hits[1].keyword_score.is_none());
        // With the default floor the weak dense matches (cosine ~0.01 against ~0.99) are no
        // candidates at all: only the real match is left.
        cold.set_config(RecallConfig {
            fusion: FusionMethod::Rank,
            ..RecallConfig::default()
        });
        let hits = cold.peek("kitten", 3, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);
    });
}

#[test]
fn recall_by_default_counts_a_dense_match_by_how_far_it_stands_out_of_the_store() {
    watchdog(30, || {
        let dir = TempDir::new("above-chance");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        cold.set_config(RecallConfig {
            recency_half_life_days: 0.0,
            dense_relative_floor: 0.0,
            ..RecallConfig::default()
        });
        assert_eq!(cold.config().fusion, FusionMethod::AboveChance);
        let hits = cold.peek("kitten", 5, ASKED).expect("peek");
        assert_eq!(hits.len(), 5, "every candidate keeps a place");
        // The dense list's standard score is taken against all five entries' cosines, less a
        // quarter of what chance gives the best of five; the keyword list has entry 0 alone
        // (weight 1); a first place in each list adds a third of a deviation.
        let cosines: Vec<f64> = hits
            .iter()
            .map(|h| f64::from(h.dense_cosine.expect("cosine")))
            .collect();
        let mean = cosines.iter().sum::<f64>() / 5.0;
        let dev = (cosines.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / 5.0).sqrt();
        let z = (cosines[0] - mean) / dev - 0.25 * expected_best_of(5);
        let share = RANK_SHARE * 61.0;
        let want = z + 1.0 + share * 2.0 / 61.0;
        assert_eq!(hits[0].id, ids[0]);
        assert!(
            (hits[0].score - want).abs() < 1e-6,
            "{} vs {want}",
            hits[0].score
        );
        // The others stand below the store's mean: only their ranks count, in the dense
        // list's order.
        assert!(cosines[1..].windows(2).all(|w| w[0] >= w[1]), "{cosines:?}");
        for (rank, h) in hits[1..].iter().enumerate() {
            let tie = share / (60.0 + 2.0 + rank as f64);
            assert!((h.score - tie).abs() < 1e-12, "{} vs {tie}", h.score);
        }
    });
}

#[test]
fn a_query_naming_a_speaker_favours_their_own_words() {
    watchdog(30, || {
        for embedder in [None, Some(concept_embedder())] {
            let dir = TempDir::new("named-speaker");
            let mut cold = ColdContext::new(dir.store(), embedder);
            let said = |ts, who: &str| {
                ContextEvent::new(ts, who, "the spare keys are in the blue drawer by the door")
            };
            let ids = cold
                .archive_events(
                    vec![
                        said(1_000, "Ben"),
                        said(2_000, "Ana"),
                        said(3_000, "Ana Lima"),
                    ],
                    "import",
                    10_000,
                )
                .expect("archive");
            let first =
                |cold: &mut ColdContext, q: &str| cold.peek(q, 3, ASKED).expect("peek")[0].id;
            // The same words from three people: the one the query names comes first.
            assert_eq!(
                first(&mut cold, "where did ana say the spare keys are"),
                ids[1]
            );
            assert_eq!(first(&mut cold, "where did BEN put the spare keys"), ids[0]);
            assert_eq!(first(&mut cold, "Ana Lima and the spare keys"), ids[2]);
            // Named by nobody, they keep the fused order; and the prior is a weighing, not a
            // filter: the others are still recalled.
            let hits = cold.peek("spare keys drawer", 3, ASKED).expect("peek");
            assert_eq!(hits.len(), 3);
            let hits = cold
                .peek("where did Ben put the spare keys", 3, ASKED)
                .expect("peek");
            assert_eq!(hits.len(), 3);
            // Equal words: the unnamed count about half (their ranks differ a little).
            let ratio = hits[1].score / hits[0].score;
            assert!((0.45..0.55).contains(&ratio), "{ratio}");
            // A speaker archived after the first recall is known at once.
            let more = cold
                .archive_events(vec![said(4_000, "Carla")], "import", 10_000)
                .expect("archive");
            assert_eq!(
                first(&mut cold, "did carla mention the spare keys"),
                more[0]
            );
        }
    });
}

#[test]
fn recall_is_non_destructive_and_counts_accesses() {
    watchdog(30, || {
        let dir = TempDir::new("touch");
        let (mut cold, ids) = seeded(&dir, Some(concept_embedder()));
        let before = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("present");
        assert_eq!(before.access_count, 0);
        let hits = cold.recall("pizza", 1, 20_000).expect("recall");
        assert_eq!(hits[0].id, ids[2]);
        cold.recall("pizza dinner", 1, 30_000).expect("recall");
        let after = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("present");
        assert_eq!(after.access_count, 2);
        assert_eq!(after.last_access_ms, 30_000);
        assert_eq!(cold.store().cold_count().expect("count"), 5);
        // Peeking counts nothing.
        cold.peek("pizza", 1, ASKED).expect("peek");
        let peeked = cold
            .store()
            .cold_get(ids[2])
            .expect("get")
            .expect("present");
        assert_eq!(peeked.access_count, 2);
    });
}

#[test]
fn recall_into_copies_at_the_original_time_once() {
    watchdog(30, || {
        let dir = TempDir::new("into");
        let (mut cold, _) = seeded(&dir, Some(concept_embedder()));
        let mut window = ContextWindow::new();
        window.append(user(500, "hello"));
        window.append(user(2_500, "what about dinner?"));
        window.append(user(9_000, "newest"));
        let n = cold
            .recall_into(&mut window, "pizza food", 1, 20_000)
            .expect("recall");
        assert_eq!(n, 1);
        let order: Vec<&str> = window.events().iter().map(|e| e.input.as_str()).collect();
        assert_eq!(
            order,
            [
                "hello",
                "what about dinner?",
                "pizza for dinner tonight",
                "newest"
            ]
        );
        let again = cold
            .recall_into(&mut window, "pizza food", 1, 21_000)
            .expect("recall");
        assert_eq!(again, 0);
        assert_eq!(window.len(), 4);
        assert_eq!(cold.store().cold_count().expect("count"), 5);
    });
}

#[test]
fn vectors_of_another_fingerprint_are_never_scored() {
    watchdog(30, || {
        let dir = TempDir::new("fingerprint");
        let (mut cold, _) = seeded(&dir, Some(concept_embedder()));
        // An entry whose vector is exactly the query's, but from another model, and whose text
        // shares no word with the query.
        let foreign = Fingerprint::new("concepts", "ffffffffffff", 9, Pooling::Mean)
            .expect("fingerprint")
            .to_string();
        // Every dense candidate counts, however weak: the test is about which are scored.
        cold.set_config(RecallConfig {
            dense_relative_floor: 0.0,
            ..RecallConfig::default()
        });
        let query = "piano song";
        let alien = cold
            .store_mut()
            .cold_insert(
                &ColdRecord {
                    event: user(6_000, "zzz qqq"),
                    text: "zzz qqq".into(),
                    tokens: "zzz qqq".into(),
                    dense: Some(DenseVector::new(foreign, ConceptEmbedder::vector(query))),
                    archived_from: "import".into(),
                },
                10_000,
            )
            .expect("insert");
        let hits = cold.peek(query, 10, ASKED).expect("peek");
        assert_eq!(hits.len(), 5, "only the current space's entries are ranked");
        assert!(hits.iter().all(|h| h.id != alien));
        // The same entry with a vector of the current space is found first.
        let own = cold
            .store_mut()
            .cold_insert(
                &ColdRecord {
                    event: user(7_000, "yyy"),
                    text: "yyy".into(),
                    tokens: "yyy".into(),
                    dense: Some(DenseVector::new(
                        "concepts:0123456789ab:9:mean",
                        ConceptEmbedder::vector(query),
                    )),
                    archived_from: "import".into(),
                },
                10_000,
            )
            .expect("insert");
        let hits = cold.peek(query, 1, ASKED).expect("peek");
        assert_eq!(hits[0].id, own);
    });
}

#[test]
fn find_cold_is_72h_idle_and_at_most_two_accesses() {
    watchdog(30, || {
        let dir = TempDir::new("find-cold");
        let (mut cold, ids) = seeded(&dir, None);
        let archived_at = 10_000;
        assert!(
            cold.find_cold(archived_at + 72 * HOUR_MS)
                .expect("find")
                .is_empty()
        );
        let all = cold
            .find_cold(archived_at + 72 * HOUR_MS + 1)
            .expect("find");
        assert_eq!(all.len(), 5);
        // Three recalls of the pizza entry: no longer a distillation candidate.
        for t in 1..=3 {
            cold.recall("pizza", 1, archived_at + t).expect("recall");
        }
        let left = cold.find_cold(archived_at + 80 * HOUR_MS).expect("find");
        assert_eq!(left.len(), 4);
        assert!(!left.contains(&ids[2]));
    });
}

#[test]
fn auto_inject_is_budgeted_time_ordered_stable_and_floored() {
    watchdog(30, || {
        let dir = TempDir::new("inject");
        let (mut cold, _) = seeded(&dir, Some(concept_embedder()));
        let block = cold
            .auto_inject("my pet cat and the car", 10_000, 20_000)
            .expect("inject");
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines[0], INJECT_HEADER);
        assert_eq!(
            &lines[1..],
            [
                "[1970-01-01 00:00] cli: my kitten likes to sleep on the sofa",
                "[1970-01-01 00:00] cli: my car is in the parking garage level two",
            ]
        );
        // Same members, same text: the prompt prefix does not change.
        let again = cold
            .auto_inject("the car and my pet cat", 10_000, 21_000)
            .expect("inject");
        assert_eq!(again, block);
        // A budget for the header and one line keeps the best entry only.
        let one = cold
            .auto_inject(
                "my pet cat and the car",
                crate::estimate_tokens(&block) - 10,
                22_000,
            )
            .expect("inject");
        assert_eq!(one.lines().count(), 2);
        // Nothing related: nothing injected.
        assert_eq!(
            cold.auto_inject("quantum chromodynamics", 10_000, 23_000)
                .expect("inject"),
            ""
        );
        assert_eq!(cold.auto_inject("pizza", 0, 24_000).expect("inject"), "");
    });
}

/// 2023-05-05 12:00 UTC, a Friday.
const FRIDAY_NOON: i64 = 1_683_288_000_000;
const DAY_MS: i64 = 24 * HOUR_MS;

fn agent(ts: i64, text: &str) -> ContextEvent {
    ContextEvent::new(ts, AGENT_SOURCE, "").with_response(text)
}

pub(super) fn ids_of(hits: &[Recalled]) -> Vec<i64> {
    hits.iter().map(|h| h.id).collect()
}

#[test]
fn recall_asked_as_of_a_day_never_returns_what_was_said_after_it() {
    watchdog(30, || {
        let dir = TempDir::new("future");
        let mut cold =
            ColdContext::new(dir.store(), Some(concept_embedder())).with_config(RecallConfig {
                exclude_future: true,
                ..RecallConfig::default()
            });
        let ids = cold
            .archive_events(
                vec![
                    user(FRIDAY_NOON - DAY_MS, "pizza for dinner"),
                    user(FRIDAY_NOON + 2 * DAY_MS, "pizza for dinner again"),
                ],
                "import",
                FRIDAY_NOON,
            )
            .expect("archive");
        let now = cold.peek("pizza", 5, FRIDAY_NOON).expect("peek");
        assert_eq!(
            ids_of(&now),
            [ids[0]],
            "the later entry is not a candidate yet"
        );
        let later = cold
            .peek("pizza", 5, FRIDAY_NOON + 3 * DAY_MS)
            .expect("peek");
        assert_eq!(later.len(), 2);
        // By default the date does not filter: a live assistant is asked after everything.
        cold.set_config(RecallConfig::default());
        assert_eq!(cold.peek("pizza", 5, FRIDAY_NOON).expect("peek").len(), 2);
    });
}

#[test]
fn recall_prefers_the_user_s_words_unless_asked_about_the_agent_s() {
    watchdog(30, || {
        let dir = TempDir::new("speaker");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        // The same words, the agent's entry archived second: it ranks second in both lists,
        // so only the speaker weighing can put it first.
        let ids = cold
            .archive_events(
                vec![
                    user(FRIDAY_NOON - HOUR_MS, "the pizza place Mario dinner"),
                    agent(FRIDAY_NOON - HOUR_MS, "the pizza place Mario dinner"),
                ],
                "import",
                FRIDAY_NOON,
            )
            .expect("archive");
        let mine = cold
            .peek("which pizza place did I go to for dinner", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&mine), [ids[0], ids[1]]);
        let yours = cold
            .peek(
                "which pizza place did you recommended for dinner",
                2,
                FRIDAY_NOON,
            )
            .expect("peek");
        assert_eq!(ids_of(&yours), [ids[1], ids[0]]);
        let yours_zh = cold
            .peek("你推荐的那家 pizza dinner 叫什么", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&yours_zh), [ids[1], ids[0]]);
    });
}

#[test]
fn recall_weighs_age_only_when_the_query_names_a_time() {
    watchdog(30, || {
        let dir = TempDir::new("when");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        // Equal words; the recent entry is archived second, so it loses every positional tie
        // and only its age can put it first.
        let ids = cold
            .archive_events(
                vec![
                    user(FRIDAY_NOON - 14 * DAY_MS, "pizza for dinner"),
                    user(FRIDAY_NOON - DAY_MS, "pizza for dinner"),
                ],
                "import",
                FRIDAY_NOON,
            )
            .expect("archive");
        // Naming no time: no recency, equal entries keep the fusion's order.
        let plain = cold
            .peek("what did I have for dinner", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(
            ids_of(&plain),
            [ids[0], ids[1]],
            "age alone does not reorder"
        );
        // Naming a time (a span holding neither): now age weighs, the recent one first.
        let timed = cold
            .peek("what did I have for dinner in March", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&timed), [ids[1], ids[0]], "the recent one first");
        let named = cold
            .peek("what did I have for dinner two weeks ago", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&named), [ids[0], ids[1]], "the named span wins");
        let named_zh = cold
            .peek("两周前 dinner 吃了什么", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&named_zh), [ids[0], ids[1]]);
        // Without weighing by age, equal entries keep the fusion's order.
        cold.set_config(RecallConfig {
            recency_half_life_days: 0.0,
            ..RecallConfig::default()
        });
        let flat = cold
            .peek("what did I have for dinner in March", 2, FRIDAY_NOON)
            .expect("peek");
        assert_eq!(ids_of(&flat), [ids[0], ids[1]]);
    });
}

#[test]
fn recall_searches_inside_a_span_the_query_names() {
    watchdog(30, || {
        // Candidates three deep: six closer matches from a year before fill every list.
        let config = RecallConfig {
            depth: 3,
            ..RecallConfig::default()
        };
        let history = || -> Vec<ContextEvent> {
            let mut events: Vec<ContextEvent> = (0..6)
                .map(|i| {
                    user(
                        FRIDAY_NOON - 400 * DAY_MS - i * HOUR_MS,
                        "pizza dinner food",
                    )
                })
                .collect();
            events.push(user(
                FRIDAY_NOON - 14 * DAY_MS,
                "a dinner after work at the office with the team",
            ));
            events
        };
        // With a model, the keywords are left out, so only the dense span search can find it.
        let dense_only = RecallConfig {
            keyword_weight: 0.0,
            ..config.clone()
        };
        for (embedder, config) in [(Some(concept_embedder()), dense_only), (None, config)] {
            let dir = TempDir::new("span");
            let mut cold = ColdContext::new(dir.store(), embedder).with_config(config);
            let ids = cold
                .archive_events(history(), "import", FRIDAY_NOON)
                .expect("archive");
            let in_span = ids[6];
            let plain = cold
                .peek("what did I have for dinner", 3, FRIDAY_NOON)
                .expect("peek");
            assert!(
                !ids_of(&plain).contains(&in_span),
                "no list has it among its three best: {plain:?}"
            );
            let named = cold
                .peek("what did I have for dinner two weeks ago", 3, FRIDAY_NOON)
                .expect("peek");
            // Found inside the span and weighed by it to the top.
            assert_eq!(ids_of(&named).first(), Some(&in_span), "{named:?}");
        }
    });
}

#[test]
fn keyword_only_recall_works_without_a_model() {
    watchdog(30, || {
        let dir = TempDir::new("sparse");
        let (mut cold, ids) = seeded(&dir, None);
        let hits = cold
            .recall("where is the garage?", 2, 20_000)
            .expect("recall");
        assert_eq!(hits[0].id, ids[4]);
        assert!(hits[0].dense_cosine.is_none());
        let block = cold
            .auto_inject("parking garage", 10_000, 21_000)
            .expect("inject");
        assert!(block.contains("parking garage level two"), "{block}");
    });
}

// ---------------------------------------------------------------------------------------------
// The real model, Chinese and English.

/// The installed model, loaded once for all tests of this binary.
fn real_model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<OnnxEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| match OnnxEmbedder::locate_and_load(None, 1) {
            Ok(m) => Arc::new(m),
            Err(e) => panic!("{e}"),
        })
        .clone()
}

/// A conversation where each fact is said once among unrelated turns.
fn bilingual_history() -> Vec<ContextEvent> {
    let turns = [
        "Can you suggest a quick recipe with chicken for tonight?",
        "What's the weather like in Berlin this weekend?",
        "帮我写一封请假邮件，下周一要去看牙医。",
        "My sister Emma is allergic to peanuts, so keep them out of anything you cook for her.",
        "推荐几部适合周末看的科幻电影吧。",
        "How do I reset the router when the internet stops working?",
        "我的车停在公司地下车库B2层的37号车位。",
        "Give me a short workout I can do in a hotel room.",
        "最近在学做红烧肉，火候总是掌握不好。",
        "What is a good way to learn Spanish vocabulary?",
        "帮我算一下每个月房贷还多少钱。",
        "I need a gift idea for my father's birthday; he likes fishing.",
    ];
    turns
        .iter()
        .enumerate()
        .map(|(i, t)| user(1_700_000_000_000 + i as i64 * 60_000, t))
        .collect()
}

#[test]
fn a_fact_told_once_is_the_top_hit_for_a_paraphrase_with_the_real_model() {
    watchdog(120, || {
        let dir = TempDir::new("real");
        let mut cold = ColdContext::new(dir.store(), Some(real_model()));
        let ids = cold
            .archive_events(bilingual_history(), "import", 1_800_000_000_000)
            .expect("archive");
        for (question, fact) in [
            ("Which food must Emma avoid?", 3),
            ("我把汽车放在哪儿了？", 6),
            ("Where did I leave my vehicle?", 6),
            ("艾玛对什么食物过敏？", 3),
        ] {
            assert_top_hit(&mut cold, question, ids[fact]);
        }
    });
}

/// The first recalled entry for `question` (asked well after the history) is `want`.
fn assert_top_hit(cold: &mut ColdContext, question: &str, want: i64) {
    let hits = cold.recall(question, 3, 1_800_000_000_000).expect("recall");
    assert_eq!(
        hits[0].id, want,
        "{question}: top hit was {:?}",
        hits[0].text
    );
}

#[test]
fn keyword_path_still_finds_the_fact_without_the_model() {
    watchdog(60, || {
        let dir = TempDir::new("real-sparse");
        let mut cold = ColdContext::new(dir.store(), None);
        let ids = cold
            .archive_events(bilingual_history(), "import", 1_800_000_000_000)
            .expect("archive");
        for (question, fact) in [
            ("Is Emma allergic to anything?", 3),
            ("车停在哪个车位？", 6),
            ("我的车在B2层吗", 6),
        ] {
            assert_top_hit(&mut cold, question, ids[fact]);
        }
    });
}

/// The runtime moves a cold context to the store's service thread.
#[test]
fn cold_context_is_send() {
    fn send<T: Send>() {}
    send::<ColdContext>();
    send::<Recalled>();
}

#[test]
fn a_recalled_copy_is_dropped_by_a_later_prune_not_archived_twice() {
    watchdog(30, || {
        let dir = TempDir::new("recalled-copy");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()));
        cold.archive_events(vec![user(1_000, "my kitten is asleep")], "prune", 2_000)
            .expect("archive");
        let hits = cold.recall("kitten", 1, 3_000).expect("recall");
        assert_eq!(hits.len(), 1);
        let mut copy = hits[0].event.clone();
        copy.id = format!("{}{}", crate::RECALLED_PREFIX, hits[0].id);
        let texts = [
            "flight to Lisbon",
            "pizza dinner",
            "office work",
            "rain today",
        ];
        let mut window = vec![copy];
        window.extend(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| user(10_000 + i as i64, t)),
        );
        cold.append(window).expect("append");
        let before = cold.store().cold_count().expect("count");
        // Keep only the last two: the copy and two others leave the window.
        let outcome = cold.prune("rain", 2, 2, 20_000).expect("prune");
        assert_eq!(
            outcome.archived.len(),
            2,
            "only the two events of the window's own are archived"
        );
        assert_eq!(
            cold.store().cold_count().expect("count"),
            before + 2,
            "no second copy of the kitten"
        );
        let window = cold.store().events_window().expect("window");
        assert!(
            window
                .iter()
                .all(|e| !e.record.event.id.starts_with(crate::RECALLED_PREFIX))
        );
        // Nothing unique was lost: the kitten is still in cold context.
        assert_eq!(
            cold.recall("kitten", 1, 30_000).expect("recall")[0]
                .event
                .input,
            "my kitten is asleep"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// The companion dense space.

/// Concepts of the companion test model: none of them is a concept of [`ConceptEmbedder`].
const COMPANION_CONCEPTS: &[&[&str]] = &[
    &["violin", "fiddle", "cello"],
    &["sofa", "couch", "armchair"],
    &["lisbon", "porto", "portugal"],
];

/// Words the companion understands in a query only (word, concept), the way instruction-tuned
/// models embed a question differently from a passage: a recall that embedded the query as a
/// passage would not see what "instrument" asks for.
const QUERY_ONLY_WORDS: &[(&str, usize)] = &[("instrument", 0)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CompanionMode {
    Working,
    /// Every call fails.
    Failing,
    /// Queries work, passages fail: whatever it finds must have been read from the store.
    QueriesOnly,
}

/// A second deterministic "dense model", of another fingerprint and width than the main one.
struct CompanionEmbedder {
    fingerprint: Fingerprint,
    mode: CompanionMode,
    largest_batch: AtomicUsize,
}

impl CompanionEmbedder {
    const DIM: usize = COMPANION_CONCEPTS.len() + 1;

    fn new(mode: CompanionMode) -> Self {
        Self {
            fingerprint: Fingerprint::new("companion", "fedcba987654", Self::DIM, Pooling::Mean)
                .expect("valid fingerprint"),
            mode,
            largest_batch: AtomicUsize::new(0),
        }
    }

    fn vector(text: &str, query: bool) -> Vec<f32> {
        let lower = text.to_lowercase();
        let mut v: Vec<f32> = COMPANION_CONCEPTS
            .iter()
            .map(|words| words.iter().filter(|w| lower.contains(*w)).count() as f32)
            .collect();
        if query {
            for &(word, concept) in QUERY_ONLY_WORDS {
                if lower.contains(word) {
                    v[concept] += 1.0;
                }
            }
        }
        v.push(0.1);
        crate::l2_normalize(&mut v);
        v
    }

    fn down() -> EmbedError {
        EmbedError::Output {
            message: "the companion test model is down".into(),
        }
    }
}

impl Embedder for CompanionEmbedder {
    fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    fn dim(&self) -> usize {
        Self::DIM
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Relaxed: a statistic read after the archive returned, on the same thread.
        self.largest_batch.fetch_max(texts.len(), Ordering::Relaxed);
        match self.mode {
            CompanionMode::Working => Ok(texts.iter().map(|t| Self::vector(t, false)).collect()),
            CompanionMode::Failing | CompanionMode::QueriesOnly => Err(Self::down()),
        }
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        match self.mode {
            CompanionMode::Failing => Err(Self::down()),
            CompanionMode::Working | CompanionMode::QueriesOnly => Ok(Self::vector(text, true)),
        }
    }
}

pub(super) fn companion(mode: CompanionMode) -> Arc<dyn Embedder> {
    Arc::new(CompanionEmbedder::new(mode))
}

pub(super) const COMPANION_FP: &str = "companion:fedcba987654:4:mean";
/// Found only in the companion's space: no word in common with [`INSTRUMENT_QUERY`], and to the
/// main model it is about cars.
const FIDDLE: &str = "bought a fiddle at the garage sale";
/// Main model: the kitten entry only (every other cosine is under the relative floor).
/// Keywords: the kitten entry only. Companion (as a query): the fiddle first.
const INSTRUMENT_QUERY: &str = "the instrument for my kitten";

/// The seed entries and then the fiddle (its id is the last).
pub(super) fn with_fiddle(cold: &mut ColdContext) -> Vec<i64> {
    let mut events = seed_events();
    events.push(user(6_000, FIDDLE));
    cold.archive_events(events, "import", 10_000)
        .expect("archive")
}

pub(super) fn side_count(cold: &ColdContext) -> usize {
    cold.store().cold_side_vectors(COMPANION_FP).count()
}

#[test]
fn the_companion_finds_what_only_its_space_knows() {
    watchdog(30, || {
        let without_dir = TempDir::new("companion-off");
        let mut without = ColdContext::new(without_dir.store(), Some(concept_embedder()));
        let ids = with_fiddle(&mut without);
        let fiddle = ids[5];
        let alone = without.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(
            ids_of(&alone),
            [ids[0]],
            "neither keywords nor the main model"
        );

        let dir = TempDir::new("companion-on");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        assert_eq!(cold.companion_fingerprint(), Some(COMPANION_FP));
        let ids = with_fiddle(&mut cold);
        assert_eq!(ids[5], fiddle);
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        // Kitten: first in the main and keyword lists; fiddle: first in the companion's, which
        // it reaches only through the query's own embedding ("instrument").
        assert_eq!(ids_of(&hits)[..2], [ids[0], fiddle]);
        assert!(hits[1].keyword_score.is_none());

        // Weight 0: the companion counts for nothing, and recall is what it was without it.
        cold.set_config(RecallConfig {
            companion_weight: 0.0,
            ..RecallConfig::default()
        });
        let muted = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&muted), ids_of(&alone));
    });
}

#[test]
fn recalled_dense_cosine_is_the_main_model_s() {
    watchdog(30, || {
        let dir = TempDir::new("companion-cosine");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        let ids = with_fiddle(&mut cold);
        let hits = cold.peek(INSTRUMENT_QUERY, 2, ASKED).expect("peek");
        let fiddle = hits.iter().find(|h| h.id == ids[5]).expect("fiddle found");
        let main = crate::simd::Kernel::best().dot(
            &ConceptEmbedder::vector(INSTRUMENT_QUERY),
            &ConceptEmbedder::vector(FIDDLE),
        );
        let side = crate::simd::Kernel::best().dot(
            &CompanionEmbedder::vector(INSTRUMENT_QUERY, true),
            &CompanionEmbedder::vector(FIDDLE, false),
        );
        assert!(side > 0.99 && main < 0.05, "main {main}, companion {side}");
        let cosine = fiddle.dense_cosine.expect("the fiddle has a main vector");
        // Scored against the stored (quantized) vector, as every cold search is.
        let stored = crate::simd::Kernel::best().dot(
            &ConceptEmbedder::vector(INSTRUMENT_QUERY),
            &stored_form(&ConceptEmbedder::vector(FIDDLE)),
        );
        assert!(
            (cosine - stored).abs() < 1e-5 && (cosine - main).abs() < 0.01,
            "{cosine} is not the main {main} (stored form {stored})"
        );
    });
}

#[test]
fn archive_writes_a_companion_vector_for_every_entry_with_text() {
    watchdog(30, || {
        let dir = TempDir::new("companion-archive");
        let model = Arc::new(CompanionEmbedder::new(CompanionMode::Working));
        let mut cold =
            ColdContext::new(dir.store(), Some(concept_embedder())).with_companion(model.clone());
        let mut events = seed_events();
        events.extend((0..70).map(|i| user(6_000 + i, &format!("note {i} on the couch"))));
        events.push(user(7_000, ""));
        let ids = cold
            .archive_events(events, "import", 10_000)
            .expect("archive");
        assert_eq!(ids.len(), 76);
        let store = cold.store();
        let side: Vec<ColdVector> = store
            .cold_side_vectors(COMPANION_FP)
            .collect::<Result<_, _>>()
            .expect("scan");
        assert_eq!(side.len(), 75, "every entry but the one with no text");
        assert!(side.iter().all(|v| v.id != ids[75]));
        for v in &side {
            let text = store.cold_get(v.id).expect("get").expect("present").text;
            let want = CompanionEmbedder::vector(&text, false);
            // Renormalised after embedding, then quantized: the same direction up to rounding.
            assert_eq!(v.values.len(), want.len());
            let cosine = crate::simd::dot(&v.values, &stored_form(&want));
            assert!(
                cosine > 0.9999,
                "{text}: cosine {cosine} to the model's vector"
            );
        }
        assert!(
            store
                .cold_side_missing(COMPANION_FP)
                .expect("missing")
                .is_empty()
        );
        assert!(
            model.largest_batch.load(Ordering::Relaxed) <= EMBED_BATCH,
            "embedded in batches of at most {EMBED_BATCH}"
        );
        // The main space is where it was.
        assert_eq!(
            store.cold_vectors("concepts:0123456789ab:9:mean").count(),
            75
        );
        // Nothing to fill in.
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 0);
    });
}

#[test]
fn a_failing_companion_leaves_the_archive_and_recall_intact() {
    watchdog(30, || {
        let dir = TempDir::new("companion-fail");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Failing));
        let ids = with_fiddle(&mut cold);
        assert_eq!(ids.len(), 6);
        assert_eq!(cold.store().cold_count().expect("count"), 6);
        assert!(cold.store().events_window().expect("window").is_empty());
        assert_eq!(side_count(&cold), 0);
        assert_eq!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing"),
            ids,
            "left for a back-fill"
        );
        // Keywords and the main model still rank.
        let hits = cold.recall("pizza", 1, ASKED).expect("recall");
        assert_eq!(ids_of(&hits), [ids[2]]);
        let hits = cold.peek("my pet cat", 1, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);
        assert!(hits[0].dense_cosine.expect("main cosine") > 0.9);
        assert_eq!(
            ids_of(&cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek")),
            [ids[0]]
        );
        // A back-fill with the model still down does nothing, and says so by its count.
        assert_eq!(cold.backfill_companion(10).expect("backfill"), 0);
        assert_eq!(side_count(&cold), 0);
    });
}

#[test]
fn backfill_companion_catches_up_entries_archived_before_it() {
    watchdog(30, || {
        let dir = TempDir::new("companion-backfill");
        let mut before = ColdContext::new(dir.store(), Some(concept_embedder()));
        let ids = with_fiddle(&mut before);
        let store = before.into_store();
        let mut cold = ColdContext::new(store, Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        // The companion's index loads empty: nothing found through it yet.
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);

        assert_eq!(cold.backfill_companion(4).expect("backfill"), 4);
        assert_eq!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing"),
            ids[4..],
            "oldest first, at most the limit"
        );
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 2);
        assert_eq!(cold.backfill_companion(100).expect("backfill"), 0);
        assert_eq!(side_count(&cold), 6);
        // The loaded index took the new vectors in: the fiddle is found now.
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits)[..2], [ids[0], ids[5]]);
    });
}

#[test]
fn a_deferred_companion_leaves_archived_entries_to_the_backfill() {
    watchdog(30, || {
        let dir = TempDir::new("companion-deferred");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working))
            .defer_companion();
        let ids = with_fiddle(&mut cold);
        assert_eq!(side_count(&cold), 0, "archive embedded for the companion");
        assert_eq!(
            cold.store()
                .cold_side_missing(COMPANION_FP)
                .expect("missing"),
            ids
        );
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits), [ids[0]]);

        assert_eq!(cold.backfill_companion(100).expect("backfill"), ids.len());
        assert_eq!(side_count(&cold), ids.len());
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits)[..2], [ids[0], ids[5]]);
    });
}

#[test]
fn a_reopened_store_reloads_the_companion_index() {
    watchdog(30, || {
        let dir = TempDir::new("companion-reopen");
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::Working));
        let ids = with_fiddle(&mut cold);
        drop(cold);

        // Passages fail now: every companion vector ranked below was read from the store.
        let mut cold = ColdContext::new(dir.store(), Some(concept_embedder()))
            .with_companion(companion(CompanionMode::QueriesOnly));
        let hits = cold.peek(INSTRUMENT_QUERY, 10, ASKED).expect("peek");
        assert_eq!(ids_of(&hits)[..2], [ids[0], ids[5]]);

        // A write through `store_mut` reloads the companion's index too: the fiddle's vector
        // moved to the sofa concept, so the query no longer finds it first.
        cold.store_mut()
            .cold_set_side_dense(&[(
                ids[5],
                DenseVector::new(COMPANION_FP, CompanionEmbedder::vector("sofa", false)),
            )])
            .expect("rewrite");
        let hits = cold.peek(INSTRUMENT_QUERY, 2, ASKED).expect("peek");
        assert_eq!(hits[0].id, ids[0]);
        assert_ne!(hits[1].id, ids[5]);
    });
}

/// The keyword list read from the full-text index alone (dates from the vector index) equals the
/// one read with every matching row's date from the store, including when the priors drop most
/// matches and the search has to widen.
#[test]
fn keyword_hits_from_the_index_alone_equal_the_row_reading_ones() {
    watchdog(30, || {
        // The past entries are long, so they rank below every future one: the first page of
        // matches holds only future entries and the search must widen to find the past ones.
        let filler = "with many other words about the weather the neighbours and the week";
        let events: Vec<ContextEvent> = (0..40)
            .map(|i| {
                let words = ["garden", "garden tomatoes", "garden shed paint", "tomatoes"];
                let what = words[i as usize % 4];
                let text = if i < 10 {
                    format!("{what} note {i} {filler}")
                } else {
                    format!("{what} {i}")
                };
                user(i * DAY_MS, &text)
            })
            .collect();
        // Asked on day 9: days 10..40 are the future, three quarters of the matches.
        let asked = 9 * DAY_MS + HOUR_MS;
        let config = RecallConfig {
            depth: 3,
            dense_weight: 0.0,
            exclude_future: true,
            ..RecallConfig::default()
        };
        let fast_dir = TempDir::new("keyword-fast");
        let mut fast = ColdContext::new(fast_dir.store(), Some(concept_embedder()))
            .with_config(config.clone());
        fast.archive_events(events.clone(), "import", asked)
            .expect("archive");
        let slow_dir = TempDir::new("keyword-slow");
        let mut slow = ColdContext::new(slow_dir.store(), None).with_config(config);
        slow.archive_events(events, "import", asked)
            .expect("archive");
        // "shed" is said on days 2 and 6 only, before the question.
        for (query, found) in [
            ("garden tomatoes", 3),
            ("paint the shed", 2),
            ("tomatoes", 3),
        ] {
            let got = fast.peek(query, 3, asked).expect("peek");
            let want = slow.peek(query, 3, asked).expect("peek");
            let view = |hits: &[Recalled]| -> Vec<(i64, Option<f64>)> {
                hits.iter()
                    .map(|h| (h.event.timestamp_ms, h.keyword_score))
                    .collect()
            };
            assert_eq!(view(&got), view(&want), "{query}");
            assert_eq!(got.len(), found, "{query}");
            assert!(
                got.iter().all(|h| h.event.timestamp_ms < 10 * DAY_MS),
                "{query}"
            );
        }
    });
}

/// What cold context stores for `vector`: its quantized form, decoded.
fn stored_form(vector: &[f32]) -> Vec<f32> {
    let mut q = vec![0i8; vector.len()];
    crate::simd::quantize(vector, &mut q);
    crate::simd::dequantize(&q)
}
