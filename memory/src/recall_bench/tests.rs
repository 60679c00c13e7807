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
    let dir = std::env::temp_dir().join(format!("hearth-recall-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
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
    let ranks = |r: &Report| -> Vec<Ranks> { r.questions.iter().map(|q| q.hearth).collect() };
    assert_eq!(ranks(&first), ranks(&second));
    assert!(second.render().contains("not measured in this run"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kept_store_without_the_run_s_vectors_is_ingested_afresh() {
    let dir = std::env::temp_dir().join(format!("hearth-recall-other-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let reused = watchdog(180, {
        let dir = dir.clone();
        move || {
            let both = installed_models();
            let configs = [RecallConfig::default()];
            let run_with = |models: &MemoryModels| {
                run_configs(&fixture(), &[1], models, &configs, Some(&dir), |_| {})
                    .expect("bench runs")
                    .remove(0)
                    .reused_items
            };
            let main_only = MemoryModels {
                dense: both.dense.clone(),
                companion: None,
            };
            [
                run_with(&main_only),
                run_with(both),
                run_with(both),
                run_with(&MemoryModels::default()),
            ]
        }
    });
    // Kept without companion vectors: re-ingested; then reused, also by a run needing fewer.
    assert_eq!(reused, [0, 0, 24, 24]);
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
