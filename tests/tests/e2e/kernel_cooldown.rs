//! The preemption cooldown on real engine threads (SPEC §2.2, §2.6): an interrupt that arrives
//! while its victim is cooling down waits for the cooldown, not for the victim's whole answer.

use crate::support::{Harness, within};
use hearth_kernel::input::InputEvent;
use hearth_llm::provider::ScriptStep;
use serde_json::json;
use std::time::{Duration, Instant};

fn interrupt(text: &str) -> InputEvent {
    InputEvent::text("timer", text).with_payload("priority", json!("L2"))
}

/// How long the resumed answer streams: far longer than the cooldown plus any slack below.
const RESUMED_ANSWER: Duration = Duration::from_secs(8);
const WORDS: u32 = 16;

/// Pins three rules at once, each of which alone would leave the second interrupt waiting for
/// the whole resumed answer (≥ 8 s):
/// - the cooldown is 2 s (a second interrupt is answered no earlier than 2 s after the first
///   preemption, and not much later);
/// - the turn engine re-arms a held-back interrupt mid-stream, cutting the LLM call;
/// - while the victim streams, the kernel node's `Idle { until }` names the cooldown's end, so
///   the worker wakes then without any message arriving (stream deltas go to the event ring,
///   not to the kernel).
#[test]
fn an_interrupt_held_back_by_the_cooldown_cuts_the_stream_when_the_cooldown_ends() {
    within(Duration::from_secs(60), || {
        let words = vec!["word"; WORDS as usize].join(" ");
        let h = Harness::new(vec![
            ScriptStep::slow_text(&words, Duration::from_millis(100)),
            ScriptStep::text("First interrupt."),
            ScriptStep::slow_text(&words, RESUMED_ANSWER / WORDS),
            ScriptStep::text("Second interrupt."),
            ScriptStep::text("The story."),
        ]);
        let handle = h.kernel.handle();
        let story = handle.send_text("cli", "tell me a story");
        h.wait_requests(1);

        // The first interrupt preempts at once: the story's cooldown starts no earlier than this.
        let first_sent = Instant::now();
        let first = handle.interrupt(interrupt("first"));
        let first = first
            .recv_timeout(Duration::from_secs(10))
            .expect("first interrupt answered");
        assert_eq!(first.content, "First interrupt.");

        // The story streams again; the second interrupt arrives inside its cooldown.
        h.wait_requests(3);
        let second = handle.interrupt(interrupt("second"));
        let second = second
            .recv_timeout(Duration::from_secs(20))
            .expect("second interrupt answered");
        let waited = first_sent.elapsed();
        assert_eq!(second.content, "Second interrupt.");
        assert!(
            waited >= Duration::from_millis(1900),
            "the second interrupt ran {waited:?} after the first preemption, inside the 2 s cooldown"
        );
        assert!(
            waited < Duration::from_millis(4500),
            "the second interrupt waited {waited:?}: it must preempt when the 2 s cooldown ends, \
             not after the {RESUMED_ANSWER:?} answer"
        );

        let story = story
            .recv_timeout(Duration::from_secs(10))
            .expect("story answered");
        assert_eq!(story.content, "The story.");
        let reqs = h.provider.requests();
        assert_eq!(reqs.len(), 5, "the cut call is sent again on resume");
        assert_eq!(
            reqs[4].messages.last().map(|m| m.content.clone()),
            reqs[0].messages.last().map(|m| m.content.clone())
        );
        let snap = handle.snapshot(Duration::from_secs(10)).expect("snapshot");
        assert_eq!(snap.stats.suspended, 2);
        h.kernel.shutdown();
    });
}
