//! Which tool schemas a request carries, on the real recall model: the size of "hello" with
//! many tools, the right tool offered for labelled requests, and a set that stays the same
//! within a task and grows by what `tool_search` found.

#[path = "tool_choice/prompt.rs"]
mod prompt;

use hearth_kernel::tool_choice::{
    Candidate, FULL_SET_MAX, RELEVANT_K, TOOL_SEARCH, ToolDoc, ToolIndex, choose,
};
use hearth_llm::provider::{ChatRequest, ScriptStep};
use hearth_memory::OnnxEmbedder;
use hearth_stages::ToolDef;
use hearth_testkit::tool_set::labelled_tools;
use hearth_testkit::within;
use prompt::{model_tokens, prompt_tokens, requests_for, requests_in, sent_for};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

const WATCHDOG: Duration = Duration::from_secs(300);

fn names(request: &ChatRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[test]
fn hello_with_a_hundred_tools_stays_under_a_thousand_prompt_tokens() {
    within(WATCHDOG, || {
        let tokens = model_tokens();
        let hello = |n| {
            let sent = sent_for(n, &["hello"], vec![ScriptStep::text("Hi!")]);
            let mut every = sent.requests[0].clone();
            every.tools = sent.every_schema;
            let all = prompt_tokens(&tokens, &every);
            (
                prompt_tokens(&tokens, &sent.requests[0]),
                names(&sent.requests[0]),
                all,
            )
        };
        let (few, few_names, few_all) = hello(4);
        let (hundred, hundred_names, hundred_all) = hello(100);
        eprintln!(
            "hello: {few} prompt tokens with 4 tools, {hundred} with 100 ({hundred_all} with every schema)"
        );
        assert_eq!(few, few_all, "with few tools the request carries them all");
        assert_eq!(
            few_names.len(),
            4,
            "with few tools every one is offered: {few_names:?}"
        );
        assert!(!few_names.iter().any(|n| n == TOOL_SEARCH));
        assert!(
            hundred <= 1_000,
            "{hundred} prompt tokens: {hundred_names:?}"
        );
        assert!(hundred_names.len() <= RELEVANT_K + 1, "{hundred_names:?}");
        assert_eq!(hundred_names.last().map(String::as_str), Some(TOOL_SEARCH));
    });
}

#[test]
fn the_right_tool_is_offered_for_most_labelled_requests_in_both_languages() {
    within(WATCHDOG, || {
        let model = OnnxEmbedder::locate_and_load(None, 1)
            .expect("the default embedding model is installed (make setup)");
        let index = ToolIndex::new();
        index.install(Arc::new(model));
        let set = labelled_tools();
        let docs: Vec<ToolDoc> = set
            .iter()
            .map(|t| {
                ToolDoc::of(&ToolDef {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    ..ToolDef::default()
                })
            })
            .collect();
        let candidates: Vec<Candidate> = set
            .iter()
            .map(|t| Candidate {
                name: t.name.clone(),
                core: false,
            })
            .collect();
        let mut misses = Vec::new();
        let mut hits = [0usize; 2];
        for t in &set {
            for (lang, request) in [&t.en, &t.zh].into_iter().enumerate() {
                let offered = choose(&candidates, &index.rank(request, &docs), &[]);
                if offered.contains(&t.name) {
                    hits[lang] += 1;
                } else {
                    misses.push(format!("{request} -> {offered:?} (want {})", t.name));
                }
            }
        }
        let n = set.len();
        let share = (hits[0] + hits[1]) as f64 / (2 * n) as f64;
        eprintln!(
            "right tool offered: English {}/{n}, Chinese {}/{n}, {:.1} %; misses:\n{}",
            hits[0],
            hits[1],
            share * 100.0,
            misses.join("\n")
        );
        assert!(n > 100, "the set has {n} tools");
        assert!(
            share >= 0.95,
            "{:.1} % offered the right tool",
            share * 100.0
        );
    });
}

#[test]
fn the_set_stays_within_a_task_and_grows_by_the_tools_search_found() {
    within(WATCHDOG, || {
        let steps = vec![
            ScriptStep::tool_calls(&[(TOOL_SEARCH, json!({"query": "feed the cat"}))]),
            ScriptStep::tool_calls(&[("pet_feeder", json!({"portions": "1"}))]),
            ScriptStep::text("The cat is fed."),
        ];
        let requests = requests_for(
            100,
            &["What's the weather like in Berlin right now?"],
            steps,
        );
        assert_eq!(requests.len(), 3);
        let first = names(&requests[0]);
        assert!(first.iter().any(|n| n == "weather_now"), "{first:?}");
        assert!(!first.iter().any(|n| n == "pet_feeder"), "{first:?}");
        for later in &requests[1..] {
            let later = names(later);
            assert_eq!(later[..first.len()], first[..], "the chosen prefix stays");
            assert!(later.iter().any(|n| n == "pet_feeder"), "{later:?}");
        }
    });
}

#[test]
fn up_to_a_handful_of_tools_every_one_is_offered() {
    within(WATCHDOG, || {
        let hi = || vec![ScriptStep::text("Hi!")];
        let requests = requests_in(FULL_SET_MAX, 4096, &["hello"], hi());
        let offered = names(&requests[0]);
        assert_eq!(offered.len(), FULL_SET_MAX, "{offered:?}");
        assert!(!offered.iter().any(|n| n == TOOL_SEARCH));
        // A 4,096-token window's band is 3,276 tokens: a quarter of it holds fewer schemas.
        let requests = requests_in(FULL_SET_MAX + 1, 4096, &["hello"], hi());
        assert!(names(&requests[0]).iter().any(|n| n == TOOL_SEARCH));
    });
}

#[test]
fn every_tool_goes_while_their_schemas_take_a_quarter_of_the_band() {
    within(WATCHDOG, || {
        let inputs = ["hello", "What's the weather like in Berlin right now?"];
        let steps = || vec![ScriptStep::text("Hi!"), ScriptStep::text("Sunny.")];
        // A 32k window: twenty tools fit, so every one goes, the same set whatever the input
        // (a local model's server then reuses the prompt it read up to the tools and past them).
        let requests = requests_in(20, 32_768, &inputs, steps());
        let first = names(&requests[0]);
        assert_eq!(first.len(), 20, "{first:?}");
        assert!(!first.iter().any(|n| n == TOOL_SEARCH));
        assert_eq!(names(&requests[1]), first);
        // An 8k window: the same twenty take more than a quarter of its band, so each input
        // gets its own choice.
        let requests = requests_in(20, 8_192, &inputs, steps());
        let chosen: Vec<Vec<String>> = requests.iter().map(names).collect();
        assert!(
            chosen
                .iter()
                .all(|c| c.len() < 20 && c.iter().any(|n| n == TOOL_SEARCH))
        );
        assert!(chosen[1].iter().any(|n| n == "weather_now"), "{chosen:?}");
    });
}
