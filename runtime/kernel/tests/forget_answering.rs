//! A turn taken back while it is being answered keeps its words from every memory outside
//! Hearth too: its reply still goes out, but no `memory_candidate` event offers it to a plugin
//! that keeps memories, while the turn before it is offered as usual.

use hearth_ipc::{EventKind, KindMask, ReadResult};
use hearth_kernel::durable::Durable;
use hearth_kernel::entry_ref::EntryRef;
use hearth_kernel::events::EventBus;
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_kernel::input::InputEvent;
use hearth_kernel::memory_service::MemoryConfig;
use hearth_llm::provider::{ScriptStep, ScriptedProvider};
use hearth_testkit::within;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[test]
fn a_turn_forgotten_while_answered_is_not_offered_as_a_memory_candidate() {
    within(Duration::from_secs(120), || {
        let dir = hearth_testkit::fresh_dir("forget-answering");
        let store = dir.join("memory.db");
        let events = EventBus::with_default_ring("forget-answering");
        let durable = Durable::open(&store, events.clone()).expect("store opens");
        let provider = Arc::new(ScriptedProvider::new(vec![
            ScriptStep::text("Noted."),
            ScriptStep::slow_text("I will keep it to myself.", Duration::from_millis(300)),
        ]));
        let memory = MemoryConfig {
            model: false,
            ..MemoryConfig::at(store.clone())
        };
        let kernel = graph::build_with(
            GraphConfig::unpinned(1),
            provider,
            Registries::default(),
            events,
            Some(durable),
            Some(memory),
        )
        .expect("kernel builds");
        let mut offered = kernel
            .handle()
            .subscribe(KindMask::of(&[EventKind::MemoryCandidate]));
        // Journaled, as every input from a person is: the journal is what marks the turn.
        let send = |text: &str| {
            let mut input = InputEvent::text("cli", text);
            let reply = input.reply_channel();
            kernel
                .handle()
                .submit_durably(input, false)
                .expect("accepted");
            reply
        };
        let first = send("My bike is the blue one.")
            .recv_timeout(Duration::from_secs(60))
            .expect("a reply");
        assert!(!first.error, "{first:?}");
        let asked = send("My safe code is 7319, keep it to yourself.");
        // While the answer streams, the turn is in the window: take it back.
        let service = kernel.memory().expect("memory on");
        let deadline = Instant::now() + Duration::from_secs(30);
        let id = loop {
            let hits = service
                .search_window("safe code".into(), 5)
                .expect("search");
            if let Some(hit) = hits.iter().find(|h| h.text.contains("7319")) {
                break hit.id;
            }
            assert!(
                Instant::now() < deadline,
                "the turn never reached the window"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let answer = service
            .forget_named(EntryRef::Window(id), "the test")
            .expect("forget");
        assert_eq!(answer["when_answered"], true, "{answer}");
        let reply = asked
            .recv_timeout(Duration::from_secs(60))
            .expect("a reply");
        assert!(reply.content.contains("keep it to myself"), "{reply:?}");
        let hits = service
            .search_window("safe code".into(), 5)
            .expect("search");
        assert!(hits.iter().all(|h| !h.text.contains("7319")), "{hits:?}");
        // Both replies' events are published with the replies; give the ring a moment.
        std::thread::sleep(Duration::from_millis(200));
        let mut buf = Vec::new();
        let mut candidates = Vec::new();
        while let ReadResult::Event { .. } = offered.try_next(&mut buf) {
            let v: Value = serde_json::from_slice(&buf).expect("envelope");
            candidates.push(v.to_string());
        }
        assert_eq!(candidates.len(), 1, "{candidates:?}");
        assert!(candidates[0].contains("blue one"), "{candidates:?}");
        assert!(!candidates.iter().any(|c| c.contains("7319")));
        kernel.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    });
}
