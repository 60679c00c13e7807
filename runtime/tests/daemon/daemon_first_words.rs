//! The words Hearth adds to a turn must not derail a small local model: ordinary first
//! messages to the real embedded model (SmolLM2-135M, `make setup`) get an answer that is not
//! about where the message came from or about the instructions the model was given. What a
//! 135M model says is not checked beyond that: only the obvious derailment is.

use crate::harness::{Daemon, stderr, within};
use std::time::Duration;

/// Greetings, a question and requests in Chinese: what a user types first.
const FIRST_MESSAGES: &[&str] = &[
    "hello",
    "What is the capital of France?",
    "你好",
    "请用一句话介绍一下你自己。",
];

/// Words of an answer about the channel, the device or the system prompt, not the message.
const DERAILED: &[&str] = &[
    "cli",
    "channel",
    "channels",
    "device",
    "system prompt",
    "output channel",
    // The chat template's tool preamble, repeated back.
    "one or more functions",
    "通道",
    "渠道",
    "设备",
    "系统提示",
];

/// Whether `answer` speaks of `term` (as a whole word for Latin terms: "click" is not "cli").
fn mentions(answer: &str, term: &str) -> bool {
    let lower = answer.to_lowercase();
    if !term.is_ascii() {
        return lower.contains(term);
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let wanted: Vec<&str> = term.split(' ').collect();
    words.windows(wanted.len()).any(|w| w == wanted.as_slice())
}

#[test]
fn ordinary_first_messages_are_answered_not_the_channel_or_the_prompt() {
    within(Duration::from_secs(590), || {
        let mut derailed = Vec::new();
        for message in FIRST_MESSAGES {
            // Each the first message of a fresh daemon, so the prompt is the same on every run:
            // a later turn's prompt shows the earlier ones with the clock time they were said,
            // and a 135M model's greedy answer changes with those digits. Greedy decoding: the
            // model's likeliest answer, not one draw of many. Recall by keywords only: what a
            // turn recalls must not depend on when the embedding model finished loading on a
            // busy machine, or the prompt (and the answer) would.
            let daemon = Daemon::start(
                "memory_model = false\n[embedded]\nenabled = true\nthreads = 1\nctx = 4096\ntemperature = 0\n",
            );
            let out = daemon.run(&["send", message]);
            assert!(out.status.success(), "{message}: {}", stderr(&out));
            let answer = String::from_utf8_lossy(&out.stdout).into_owned();
            eprintln!("{message:?} -> {answer:?}");
            assert!(!answer.trim().is_empty(), "{message}: no answer");
            if let Some(term) = DERAILED.iter().find(|t| mentions(&answer, t)) {
                derailed.push(format!("{message:?} -> {answer:?} (says {term:?})"));
            }
        }
        assert!(
            derailed.is_empty(),
            "derailed answers:\n{}",
            derailed.join("\n")
        );
    });
}

#[test]
fn derailment_is_recognised_by_whole_words() {
    assert!(mentions("You are using the CLI.", "cli"));
    assert!(mentions(
        "It came from the output channel",
        "output channel"
    ));
    assert!(!mentions("Click the button", "cli"));
    assert!(mentions("这条消息来自通道", "通道"));
    assert!(mentions(
        "# Tools\n\nYou may call one or more functions to assist with the user query.",
        "one or more functions"
    ));
}
