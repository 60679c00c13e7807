//! End-to-end runs of the recall benchmark on the small bilingual fixture
//! (`memory/tests/fixtures/recall_small.json`), and the loader's checks.

use std::path::PathBuf;
use std::sync::OnceLock;

use super::*;
use crate::test_support::watchdog;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recall_small.json")
}

/// Both installed models, loaded once (missing ones fail the test with "run `make setup`").
fn installed_models() -> &'static MemoryModels {
    static MODELS: OnceLock<MemoryModels> = OnceLock::new();
    MODELS.get_or_init(|| {
        let models = MemoryModels::load(None, 1);
        assert!(
            models.dense.is_some() && models.companion.is_some(),
            "run `make setup`"
        );
        models
    })
}

/// An empty directory of this process under the system temp dir, named after `tag`.
fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hearth-recall-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    dir
}

/// Where Hearth ranked each question's evidence, question by question.
fn hearth_ranks(report: &Report) -> Vec<Ranks> {
    report.questions.iter().map(|q| q.hearth).collect()
}

fn question<'a>(report: &'a Report, id: &str) -> &'a QuestionResult {
    report
        .questions
        .iter()
        .find(|q| q.id == id)
        .unwrap_or_else(|| panic!("question {id} not in the report"))
}

#[test]
fn bench_runs_end_to_end_with_the_real_model() {
    let report = watchdog(120, || {
        let mut lines = Vec::new();
        let report = run(&fixture(), &[5, 1, 3, 5], installed_models(), |l| {
            lines.push(l.to_owned())
        })
        .expect("bench runs");
        assert!(
            lines.iter().any(|l| l.contains("archiving 20 items")),
            "{lines:?}"
        );
        report
    });
    assert_eq!(report.name, "recall-small");
    assert_eq!(report.corpora, 2);
    assert_eq!(report.items, 24);
    assert_eq!(report.questions.len(), 6);
    assert_eq!(report.skipped, 1);
    assert_eq!(report.ks, [1, 3, 5]);
    assert!(report.mode.starts_with("dense use-m3:"), "{}", report.mode);
    assert!(
        report.mode.contains("companion multilingual-e5-small:"),
        "{}",
        report.mode
    );
    assert!(report.ingest > Duration::ZERO);
    assert!(report.hearth_latency.p50 > Duration::ZERO);

    // Every question's evidence is in Hearth's top 3, and each single fact is the top hit,
    // including the English question about a fact said in Chinese.
    assert_eq!(report.recall_at(System::Hearth, Measure::TurnAny, 3), 1.0);
    for id in ["q-allergy", "q-parking", "q-piano", "q-deadline"] {
        assert_eq!(question(&report, id).hearth.turn_any, Some(1), "{id}");
    }
    // The word-matching baseline cannot cross languages.
    assert_eq!(question(&report, "q-piano").bm25.turn_any, None);
    assert!(
        report.recall_at(System::Hearth, Measure::TurnAny, 1)
            > report.recall_at(System::Bm25, Measure::TurnAny, 1)
    );
    // Session level can never be worse than turn level for "any".
    for q in &report.questions {
        if let Some(t) = q.hearth.turn_any {
            assert!(q.hearth.session_any.is_some_and(|s| s <= t), "{}", q.id);
        }
    }
    let table = report.render();
    for needle in [
        "turn_any@1",
        "session_all@5",
        "query p50 ms",
        "items/s",
        "recall-small",
    ] {
        assert!(table.contains(needle), "{needle} missing from\n{table}");
    }
}

#[test]
fn bench_without_a_model_measures_keyword_recall() {
    let report = watchdog(60, || {
        run(&fixture(), &[1, 5], &MemoryModels::default(), |_| {}).expect("bench runs")
    });
    assert!(report.mode.starts_with("keyword only"), "{}", report.mode);
    assert_eq!(question(&report, "q-parking").hearth.turn_any, Some(1));
    assert_eq!(question(&report, "q-deadline").hearth.turn_any, Some(1));
    // No word of the English question appears in the Chinese fact.
    assert_eq!(question(&report, "q-piano").hearth.turn_any, None);
}

#[test]
fn a_kept_store_is_reused_and_ranks_the_same() {
    let dir = fresh_dir("kept");
    let (first, second, lines) = watchdog(180, {
        let dir = dir.clone();
        move || {
            let models = installed_models();
            let configs = [RecallConfig::default()];
            let run_once = |lines: &mut Vec<String>| {
                run_configs(&fixture(), &[1, 5], models, &configs, Some(&dir), |l| {
                    lines.push(l.to_owned())
                })
                .expect("bench runs")
                .remove(0)
            };
            let mut lines = Vec::new();
            let first = run_once(&mut lines);
            lines.clear();
            let second = run_once(&mut lines);
            (first, second, lines)
        }
    });
    assert_eq!(first.reused_items, 0);
    assert_eq!(second.reused_items, second.items);
    assert!(
        lines.iter().any(|l| l.contains("reusing the kept store")),
        "{lines:?}"
    );
    assert_eq!(hearth_ranks(&first), hearth_ranks(&second));
    assert!(second.render().contains("not measured in this run"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kept_store_without_the_run_s_vectors_gets_them_filled() {
    let dir = fresh_dir("other");
    let (reused, filled, fresh) = watchdog(240, {
        let dir = dir.clone();
        move || {
            let both = installed_models();
            let configs = [RecallConfig::default()];
            let run_with = |models: &MemoryModels, dir: &Path| {
                let mut lines = Vec::new();
                let report = run_configs(&fixture(), &[1, 5], models, &configs, Some(dir), |l| {
                    lines.push(l.to_owned())
                })
                .expect("bench runs")
                .remove(0);
                (report, lines)
            };
            let main_only = MemoryModels {
                dense: both.dense.clone(),
                companion: None,
            };
            let (a, _) = run_with(&main_only, &dir);
            let (b, lines) = run_with(both, &dir);
            let (c, _) = run_with(both, &dir);
            let (d, _) = run_with(&MemoryModels::default(), &dir);
            let (fresh, _) = run_with(both, &dir.join("fresh"));
            (
                [
                    a.reused_items,
                    b.reused_items,
                    c.reused_items,
                    d.reused_items,
                ],
                (b, lines),
                fresh,
            )
        }
    });
    // Kept without companion vectors: the entries are kept and given them, then reused as
    // they are, also by a run needing fewer.
    assert_eq!(reused, [0, 24, 24, 24]);
    let (filled, lines) = filled;
    assert!(
        lines
            .iter()
            .any(|l| l.contains("corpus home: 20 missing vectors")),
        "{lines:?}"
    );
    assert_eq!(
        hearth_ranks(&filled),
        hearth_ranks(&fresh),
        "filled ranks as a fresh ingest"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The fixture with only its first `items` items and the questions they answer, written
/// beside `dir` (the same corpus id: a run over it leaves a store a full run can resume).
fn fixture_prefix(items: usize, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let mut set: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut kept = std::collections::HashSet::new();
    for corpus in set["corpora"]
        .as_object_mut()
        .expect("corpora")
        .values_mut()
    {
        let list = corpus.as_array_mut().expect("items");
        list.truncate(items);
        kept.extend(
            list.iter()
                .map(|i| i["id"].as_str().expect("id").to_owned()),
        );
    }
    set["questions"]
        .as_array_mut()
        .expect("questions")
        .retain(|q| {
            q["evidence"]
                .as_array()
                .expect("evidence")
                .iter()
                .all(|e| kept.contains(e.as_str().expect("id")))
        });
    let path = dir.join("prefix.json");
    std::fs::write(&path, set.to_string()).expect("write");
    path
}

#[test]
fn a_stopped_ingest_resumes_where_it_stopped() {
    let dir = fresh_dir("resume");
    let (resumed, lines, fresh) = watchdog(240, {
        let dir = dir.clone();
        move || {
            let models = installed_models();
            let configs = [RecallConfig::default()];
            let stores = dir.join("stores");
            // What a stopped ingest leaves: the corpus's first 14 items archived.
            let prefix = fixture_prefix(14, &dir);
            run_configs(&prefix, &[1], models, &configs, Some(&stores), |_| {})
                .expect("prefix runs");
            let mut lines = Vec::new();
            let resumed = run_configs(&fixture(), &[1, 5], models, &configs, Some(&stores), |l| {
                lines.push(l.to_owned())
            })
            .expect("bench resumes")
            .remove(0);
            let fresh = run_configs(&fixture(), &[1, 5], models, &configs, None, |_| {})
                .expect("bench runs")
                .remove(0);
            (resumed, lines, fresh)
        }
    });
    assert!(
        lines
            .iter()
            .any(|l| l.contains("corpus home: resuming the kept store: 14 of 20 items held")),
        "{lines:?}"
    );
    // The home corpus's 14 and the whole of the four-item work corpus.
    assert_eq!(resumed.reused_items, 18);
    assert_eq!(
        hearth_ranks(&resumed),
        hearth_ranks(&fresh),
        "resumed ranks as a fresh ingest"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kept store holding items the corpus does not start with (another set under the same
/// corpus id) is never resumed: its entries would be ranked as this corpus's.
#[test]
fn a_kept_store_of_other_items_is_started_afresh() {
    let dir = fresh_dir("foreign");
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let mut set: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut renamed = Vec::new();
    let first = &mut set["corpora"]["home"][0]["id"];
    renamed.push(first.as_str().expect("id").to_owned());
    *first = "someone-else".into();
    // Questions whose evidence was the renamed item would no longer load.
    set["questions"]
        .as_array_mut()
        .expect("questions")
        .retain(|q| {
            !q["evidence"]
                .as_array()
                .expect("evidence")
                .iter()
                .any(|e| renamed.iter().any(|r| e == r.as_str()))
        });
    let other = dir.join("other.json");
    std::fs::write(&other, set.to_string()).expect("write");
    let (reused, lines) = watchdog(120, {
        let dir = dir.clone();
        move || {
            let configs = [RecallConfig::default()];
            let keywords = MemoryModels::default();
            let stores = dir.join("stores");
            let _ = run_configs(&other, &[1], &keywords, &configs, Some(&stores), |_| {});
            let mut lines = Vec::new();
            let report = run_configs(&fixture(), &[1], &keywords, &configs, Some(&stores), |l| {
                lines.push(l.to_owned())
            })
            .expect("bench runs")
            .remove(0);
            (report.reused_items, lines)
        }
    });
    // The work corpus is the same in both sets and kept; home is archived again.
    assert_eq!(reused, 4);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("corpus home: archiving 20 items")),
        "{lines:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loader_rejects_files_that_do_not_fit_the_format() {
    let ok = r#"{"format":"hearth-recall/1","corpora":{"c":[{"id":"a","session":"s","time":null,"speaker":"user","text":"x"}]},
                "questions":[{"id":"q","corpus":"c","text":"x","evidence":["a"],"category":"k"}]}"#;
    let set = RecallSet::from_json(ok).expect("valid");
    assert_eq!(set.corpora["c"][0].time, None);
    for (bad, why) in [
        (ok.replace("hearth-recall/1", "hearth-recall/2"), "format"),
        (ok.replace(r#"["a"]"#, r#"["b"]"#), "evidence"),
        (ok.replace(r#""corpus":"c""#, r#""corpus":"d""#), "corpus"),
        (
            ok.replace(
                r#""text":"x"}]}"#,
                r#""text":"x"},{"id":"a","session":"s","speaker":"user","text":"y"}]}"#,
            ),
            "repeats",
        ),
        ("{".to_owned(), "EOF"),
    ] {
        let err = RecallSet::from_json(&bad).expect_err(why);
        assert!(err.contains(why), "{why}: {err}");
    }
    let missing = run(
        std::path::Path::new("/nonexistent/recall.json"),
        &[1],
        &MemoryModels::default(),
        |_| {},
    );
    assert!(matches!(missing, Err(RecallBenchError::Io { .. })));
    assert!(matches!(
        run(&fixture(), &[0], &MemoryModels::default(), |_| {}),
        Err(RecallBenchError::NoK)
    ));
}

#[test]
fn items_become_events_in_session_order_with_their_ids() {
    let set = RecallSet::load(&fixture()).expect("fixture loads");
    let events = to_events(&set.corpora["home"]);
    assert_eq!(events[0].id, "s1#1");
    assert_eq!(events[0].source, "user");
    assert_eq!(events[0].input, set.corpora["home"][0].text);
    assert_eq!(events[1].source, AGENT_SOURCE);
    assert!(events[1].input.is_empty());
    assert_eq!(events[1].response, set.corpora["home"][1].text);
    // One session's items share a time; each is a millisecond after the previous one.
    assert_eq!(events[1].timestamp_ms, events[0].timestamp_ms + 1);
    assert_eq!(
        events[4].timestamp_ms,
        parse_iso8601("2024-03-05T20:00:00Z").expect("time")
    );
}

#[test]
fn variants_rewrite_only_what_they_name() {
    let set = RecallSet::load(&fixture()).expect("fixture loads");
    let undated = SetVariant::Undated.apply(set.clone());
    assert!(undated.questions.iter().all(|q| q.time.is_none()));
    assert!(set.questions.iter().any(|q| q.time.is_some()));
    assert_eq!(undated.corpora, set.corpora);
    assert_eq!(undated.name, "recall-small+undated");
    let named = SetVariant::Named.apply(set.clone());
    let speakers: std::collections::BTreeSet<&str> = named
        .corpora
        .values()
        .flatten()
        .map(|i| i.speaker.as_str())
        .collect();
    assert_eq!(speakers, [NAMED_USER, NAMED_PARTNER].into_iter().collect());
    // A named corpus has no agent's words: every item is a person's input.
    let events = to_events(&named.corpora["home"]);
    assert!(
        events
            .iter()
            .all(|e| e.source != AGENT_SOURCE && !e.input.is_empty())
    );
    assert_eq!(named.questions, set.questions);
    assert_eq!(SetVariant::AsIs.apply(set.clone()), set);
    assert_eq!("named".parse::<SetVariant>(), Ok(SetVariant::Named));
    let third = SetVariant::ThirdPerson.apply(set.clone());
    assert_eq!(third.corpora, named.corpora);
    assert_eq!(third.name, "recall-small+third-person");
    for (asked, was) in third.questions.iter().zip(&set.questions) {
        assert_eq!((&asked.id, &asked.evidence), (&was.id, &was.evidence));
    }
    assert!(
        third
            .questions
            .iter()
            .zip(&set.questions)
            .any(|(a, b)| a.text != b.text && a.text.contains(NAMED_USER)),
        "a first-person question names the user"
    );
    assert_eq!(
        "third-person".parse::<SetVariant>(),
        Ok(SetVariant::ThirdPerson)
    );
    let short = SetVariant::ShortTurns.apply(set.clone());
    assert_eq!(short.name, "recall-small+short-turns");
    for (asked, third) in short.questions.iter().zip(&third.questions) {
        assert_eq!(asked.text, third.text);
    }
    for (corpus, items) in &short.corpora {
        let was = &third.corpora[corpus];
        assert!(items.len() >= was.len());
        // Every piece keeps its turn's session, time and speaker, and ids stay unique.
        let ids: std::collections::HashSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids.len(), items.len());
        for item in items {
            let (turn, _) = item.id.rsplit_once('.').expect("piece id");
            let whole = was.iter().find(|w| w.id == turn).expect("its turn");
            assert_eq!(
                (&item.session, &item.time, &item.speaker),
                (&whole.session, &whole.time, &whole.speaker)
            );
            assert!(
                whole
                    .text
                    .contains(item.text.split(' ').next().unwrap_or(""))
            );
        }
    }
    // A question's evidence is every piece of its evidence turns.
    for (asked, was) in short.questions.iter().zip(&set.questions) {
        let turns: std::collections::BTreeSet<&str> = asked
            .evidence
            .iter()
            .map(|e| e.rsplit_once('.').expect("piece id").0)
            .collect();
        let wanted: std::collections::BTreeSet<&str> =
            was.evidence.iter().map(String::as_str).collect();
        assert_eq!(turns, wanted, "{}", asked.id);
    }
    assert!("dated".parse::<SetVariant>().is_err());
}

#[test]
fn the_report_counts_injected_tokens_and_serialises_to_json() {
    let dir = std::env::temp_dir().join(format!("hearth-recall-new-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The store directory is created by the run, a named variant's in its own subdirectory.
    let store_dir = dir.join("stores");
    let reports = watchdog(180, {
        let store_dir = store_dir.clone();
        move || {
            let configs = [
                RecallConfig::default(),
                RecallConfig::default().without_priors(),
            ];
            run_variant(
                &fixture(),
                SetVariant::Named,
                None,
                &[1, 5],
                installed_models(),
                &configs,
                Some(&store_dir),
                None,
                |_| {},
            )
            .expect("bench runs")
        }
    });
    assert!(store_dir.join("named").join("home.db").exists());
    let report = &reports[0];
    let tokens = report.inject_tokens();
    assert!(tokens.p50 > 0, "{tokens:?}");
    assert!(tokens.max <= report.memory_tokens);
    // What is injected is what peek ranks best and clears the floor: a single fact found at
    // rank 1 is in the block.
    assert!(question(report, "q-parking").injected_evidence);
    // Evidence can only be seen in a block that exists.
    assert!(
        report
            .questions
            .iter()
            .all(|q| !q.injected_evidence || q.inject_tokens > 0)
    );
    let json = report.to_json();
    assert_eq!(json["name"], "recall-small+named");
    assert_eq!(
        json["recall"]["hearth"]["turn_any@1"].as_f64(),
        Some(report.recall_at(System::Hearth, Measure::TurnAny, 1))
    );
    assert_eq!(json["inject"]["tokens_p95"], tokens.p95);
    assert_eq!(json["per_question"].as_array().map(Vec::len), Some(6));
    assert_eq!(reports[1].config.recency_half_life_days, 0.0);
    assert!(report.render().contains("tokens p50"));
    // Small talk is put to every corpus under the first config only, and counted with the
    // rule off beside it; the rule never brings more.
    let st = report.small_talk;
    assert_eq!(st.inputs, SMALL_TALK_PROBES.len() * report.corpora);
    assert!(st.items <= st.items_without_rule, "{st:?}");
    assert_eq!(reports[1].small_talk.inputs, 0);
    assert_eq!(json["small_talk"]["inputs"], st.inputs);
    assert!(report.render().contains("small talk ("));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A history longer than the window: the evidence is said early, then 80 turns of other talk.
fn long_history() -> RecallSet {
    let topics = [
        "the bus to work was late again",
        "I repotted the basil on the balcony",
        "the football match ended in a draw",
        "we watched a documentary about whales",
        "my laptop battery drains too fast",
    ];
    let mut items = vec![
        r#"{"id":"t0","session":"s0","time":"2024-03-01T10:00:00Z","speaker":"user","text":"My sister Marta is getting married in Lisbon on the fourteenth of June."}"#.to_owned(),
        r#"{"id":"t1","session":"s0","time":"2024-03-01T10:00:00Z","speaker":"assistant","text":"Congratulations to Marta! Lisbon in June is lovely."}"#.to_owned(),
    ];
    for i in 0..80 {
        let (speaker, text) = if i % 2 == 0 {
            (
                "user",
                format!("Day {i}: {}.", topics[i / 2 % topics.len()]),
            )
        } else {
            (
                "assistant",
                format!("Noted, thanks for telling me about day {}.", i - 1),
            )
        };
        items.push(format!(
            r#"{{"id":"t{}","session":"s{}","time":"2024-03-{:02}T10:00:00Z","speaker":"{speaker}","text":"{text}"}}"#,
            i + 2,
            i / 2 + 1,
            (i / 4 + 2).min(28),
        ));
    }
    let json = format!(
        r#"{{"format":"hearth-recall/1","name":"long","corpora":{{"c":[{}]}},
            "questions":[{{"id":"q","corpus":"c","time":"2024-04-01T10:00:00Z",
            "text":"In which city is Marta's wedding?","evidence":["t0"],"category":"single"}}]}}"#,
        items.join(",")
    );
    RecallSet::from_json(&json).expect("valid set")
}

#[test]
fn prune_replay_sees_early_evidence_only_through_recall() {
    let report = watchdog(180, || {
        run_prune(
            &long_history(),
            installed_models(),
            &RecallConfig::default(),
            PruneArm {
                slack: 0.0,
                window: 0,
            },
            &mut |_| {},
        )
        .expect("replay runs")
    });
    assert_eq!(report.items, 82);
    assert_eq!(report.questions, 1);
    assert!(report.prunes > 0);
    // The window holds at most the production cap (29 events), far fewer than were said.
    assert!((1..=29).contains(&report.window_events), "{report:?}");
    // The newest turns are small talk: keeping them loses the wedding; Hearth archived it and
    // recalls it into the prompt.
    assert_eq!(report.newest, 0.0);
    assert_eq!(report.in_window, 0.0);
    assert_eq!(report.injected, 1.0);
    assert_eq!(report.seen, 1.0);
    assert!(report.inject_tokens.p50 > 0);
    assert!(report.render().contains("keep the newest"));
    assert_eq!(report.to_json()["seen"], 1.0);
    // Every person's turn after the first is compared with the one before.
    assert_eq!(report.reuse.turns, 40);
    assert!(report.reuse.tokens > 0);
    // An undeclared window is the budget's default.
    assert_eq!(report.window, crate::DEFAULT_MAX_CONTEXT_TOKENS);
}

#[test]
fn a_prune_replay_at_a_small_window_keeps_fewer_turns() {
    let replay = |window: usize| {
        watchdog(180, move || {
            run_prune(
                &long_history(),
                installed_models(),
                &RecallConfig::default(),
                PruneArm { slack: 0.5, window },
                &mut |_| {},
            )
            .expect("replay runs")
        })
    };
    // The history's turns are short: at 1,024 tokens the event cap (29) binds first.
    let (small, large) = (replay(256), replay(32_768));
    assert_eq!((small.window, large.window), (256, 32_768));
    assert!(small.prunes > large.prunes, "{small:?}\n{large:?}");
    assert!(
        small.window_events < large.window_events,
        "{small:?}\n{large:?}"
    );
    assert!(small.render().contains("at a 256-token window"));
}

#[test]
fn a_sample_keeps_picked_questions_their_evidence_and_a_share_of_the_rest() {
    let set = RecallSet::load(&fixture()).expect("fixture loads");
    let all = sample(set.clone(), 100);
    assert_eq!(all, set);
    let small = sample(set.clone(), 3);
    assert!(small.questions.len() < set.questions.len());
    assert_eq!(
        sample(set.clone(), 3),
        small,
        "the same questions on every run"
    );
    for q in &small.questions {
        let items = &small.corpora[&q.corpus];
        assert!(
            q.evidence.iter().all(|e| items.iter().any(|i| &i.id == e)),
            "{}",
            q.id
        );
    }
    // Only corpora with a picked question remain; a remaining corpus keeps whole sessions.
    for (id, items) in &small.corpora {
        assert!(small.questions.iter().any(|q| &q.corpus == id));
        for item in items {
            let whole = set.corpora[id]
                .iter()
                .filter(|i| i.session == item.session)
                .count();
            let kept = items.iter().filter(|i| i.session == item.session).count();
            assert_eq!(whole, kept, "{id}/{}", item.session);
        }
    }
    assert!(
        small
            .name
            .ends_with(&format!("~{}q", small.questions.len()))
    );
}

#[test]
fn fusion_weights_are_read_as_three_weights_or_refused() {
    let w: FusionWeights = "1:1.5:0".parse().expect("weights");
    let config = w.apply(RecallConfig::default());
    assert_eq!(
        (
            config.dense_weight,
            config.keyword_weight,
            config.companion_weight
        ),
        (1.0, 1.5, 0.0)
    );
    assert_eq!(w.label(), "weights=1:1.5:0");
    for bad in ["1:1", "1:1:1:1", "a:1:1", "1:-1:1", "1:inf:1", ""] {
        let err = bad.parse::<FusionWeights>().expect_err(bad);
        assert!(err.to_string().contains("weights"), "{bad}: {err}");
    }
}

/// `--explain` reads the store a run kept and shows a question's evidence, marked, with its
/// place in the lists; without a kept store it says so instead of building one.
#[test]
fn explain_shows_a_questions_evidence_from_the_kept_store() {
    let dir = std::env::temp_dir().join(format!("hearth-recall-explain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let set = RecallSet::load(&fixture()).expect("fixture");
    let none = MemoryModels::default();
    let explain = |dir: &std::path::Path| {
        let mut lines = Vec::new();
        explain_questions(
            &set,
            &["q-parking".to_owned(), "q-nope".to_owned()],
            &none,
            &RecallConfig::default(),
            dir,
            &mut |l| lines.push(l.to_owned()),
        )
        .expect("explain");
        lines
    };
    let before = explain(&dir);
    assert!(
        before.iter().any(|l| l.contains("does not hold corpus")),
        "{before:?}"
    );
    let kept = dir.clone();
    watchdog(60, move || {
        run_variant(
            &fixture(),
            SetVariant::AsIs,
            None,
            &[1],
            &MemoryModels::default(),
            &[RecallConfig::default()],
            Some(&kept),
            None,
            |_| {},
        )
        .expect("bench runs")
    });
    let lines = explain(&dir);
    let evidence = lines
        .iter()
        .find(|l| l.starts_with("* "))
        .unwrap_or_else(|| panic!("evidence marked: {lines:?}"));
    // Keyword recall alone finds the parking fact first: first in the fusion and the list.
    assert!(evidence.starts_with("* 1:"), "{evidence}");
    assert!(lines.iter().any(|l| l.contains("q-nope: not in the set")));
    let _ = std::fs::remove_dir_all(&dir);
}
