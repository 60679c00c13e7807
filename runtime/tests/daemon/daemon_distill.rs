//! `hearth bench distill --config`: the labelled sentences put to a configured source exactly
//! as the kernel's consolidation task puts them, its answers grounded and scored beside the
//! rules.

use crate::harness::{source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::process::Command;
use std::time::Duration;

#[test]
fn the_distillation_bench_scores_a_configured_source_beside_the_rules() {
    within(Duration::from_secs(60), || {
        let server = LlmServer::start();
        // Every batch gets the same answer: item 1 of the first batch is "My name is Ana.", so
        // its first claim is grounded and right there; Atlantis is in no sentence.
        let answer = "Sure:\n1 | user | name | Ana\n1 | user | lives_in | Atlantis\n";
        for _ in 0..8 {
            server.push(Script::text(answer));
        }
        let dir = std::env::temp_dir().join(format!("hearth-distill-cli-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let config = dir.join("hearth.toml");
        std::fs::write(
            &config,
            format!(
                "data_dir = \"{}\"\nprobe_loopback = false\n{}\n[embedded]\nenabled = false\n",
                dir.join("data").display(),
                source("remote", &server.base_url, 0)
            ),
        )
        .expect("config");
        let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(["bench", "distill", "--config"])
            .arg(&config)
            .output()
            .expect("run hearth");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(out.status.success(), "{}", stderr(&out));
        let report = stdout(&out);
        assert!(
            report.contains("46 sentences, 45 labelled facts"),
            "{report}"
        );
        let row = |label: &str| {
            report
                .lines()
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no {label:?} row: {report}"))
                .to_owned()
        };
        assert!(
            row("model alone").contains("(1 correct of 1 found, 45 labelled)"),
            "{report}"
        );
        // The counts in parentheses: what the rules find is measured by the graph crate's own
        // tests; here, "name Ana" is one of the rules' finds too, so together they hold what
        // the rules hold.
        let counts = |label: &str| row(label).rsplit_once('(').map(|(_, c)| c.to_owned());
        assert!(counts("rules (and").is_some(), "{report}");
        assert_eq!(counts("rules + model"), counts("rules (and"), "{report}");
        assert!(
            report.contains("8 prompts of up to 6 sentences")
                && report.contains("15 claims dropped as ungrounded; 0 batches without an answer"),
            "{report}"
        );
        // The prompts are the consolidation task's, with no tools offered.
        let seen = server.seen();
        assert_eq!(seen.len(), 8);
        for s in &seen {
            assert!(s.body.to_string().contains("Memory consolidation task"));
            assert!(s.body["tools"].as_array().is_none_or(Vec::is_empty));
        }
    });
}
