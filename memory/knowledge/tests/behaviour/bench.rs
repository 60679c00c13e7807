//! The knowledge benchmark on the small recall fixture: sessions become documents, and the
//! arms are scored by where each question's session comes.

use hearth_knowledge::bench::run;

fn fixture() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/recall_small.json")
}

#[test]
fn sessions_become_documents_and_every_arm_is_scored() {
    let scratch = tempfile::tempdir().unwrap();
    let report = run(&fixture(), &[5, 1, 5], None, &[0.3], scratch.path(), |_| {}).unwrap();
    // 5 sessions in "home", 2 in "work"; the question without evidence is not scored.
    assert_eq!(report.documents, 7);
    assert_eq!(report.questions, 6);
    assert_eq!(report.ks, [1, 5]);
    // Without a model there is no dense floor to measure.
    let labels: Vec<&str> = report.arms.iter().map(|a| a.label.as_str()).collect();
    assert_eq!(labels, ["keywords only", "plain BM25"]);
    for arm in &report.arms {
        assert_eq!(arm.ranks.len(), 6, "{}", arm.label);
        // The English question about a fact said in Chinese shares no word with it; every
        // other question finds its session first.
        assert!(
            (arm.hit_at(1) - 5.0 / 6.0).abs() < 1e-9,
            "{}: {:?}",
            arm.label,
            arm.ranks
        );
        assert_eq!(
            arm.ranks.iter().filter(|r| r.is_none()).count(),
            1,
            "{}",
            arm.label
        );
    }
    let table = report.render();
    assert!(
        table.contains("hit@5") && table.contains("plain BM25"),
        "{table}"
    );
    assert_eq!(report.to_json()["arms"][0]["hits"]["hit@1"], 5.0 / 6.0);
    // The scratch knowledge bases are removed.
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}

#[test]
fn no_k_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    assert!(run(&fixture(), &[0], None, &[], scratch.path(), |_| {}).is_err());
}
