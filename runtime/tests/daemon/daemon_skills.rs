//! SKILL.md skills under a real `hearthd`: an input that asks for a skill gets its body into
//! the request the model receives, an ordinary one does not.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::Duration;

const SKILL: &str = "---\nname: pdf-forms\ndescription: Fill in PDF forms and extract their \
                     fields.\n---\n# Filling forms\n\nRead every field before writing one.\n";

const BODY: &str = "Read every field before writing one.";

#[test]
fn an_input_asking_for_a_skill_gets_its_body_and_hello_does_not() {
    within(Duration::from_secs(120), || {
        let llm = LlmServer::start();
        llm.push(Script::text("filled"));
        llm.push(Script::text("hi"));
        let daemon = Daemon::start_with(&source("llm", &llm.base_url, 0), |dir| {
            let skill = dir.join("skills/pdf-forms");
            std::fs::create_dir_all(&skill).expect("skill dir");
            std::fs::write(skill.join("SKILL.md"), SKILL).expect("skill");
        });
        let out = daemon.run(&["send", "use pdf-forms on my tax form please"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("filled"), "{}", stdout(&out));
        let out = daemon.run(&["send", "hello"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let seen = llm.wait_requests(2, Duration::from_secs(10));
        let asked = seen[0].body["messages"].to_string();
        assert_eq!(asked.matches(BODY).count(), 1, "{asked}");
        let hello = seen[1].body["messages"].to_string();
        assert!(!hello.contains(BODY), "{hello}");
        // Only the name and description are offered in the tool's description either way.
        let offered = seen[1].body["tools"].to_string();
        assert!(
            offered.contains("pdf-forms") && !offered.contains(BODY),
            "{offered}"
        );
    });
}
