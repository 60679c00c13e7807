//! The memory pass against a real SQLite store.

use super::*;

/// A store path in a directory removed when the guard drops, also when the test fails.
fn scratch_store(tag: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("hearth-memory-service-{tag}-"))
        .tempdir()
        .expect("scratch dir");
    let path = dir.path().join("store.db");
    (dir, path)
}

/// Memory over the store at `path` without a model, a 30-token context and ten protected
/// events, in a zone `utc_offset_secs` east of UTC.
fn keyword_config(path: &std::path::Path, utc_offset_secs: i64) -> MemoryConfig {
    MemoryConfig {
        model: false,
        max_context_size: 30,
        prune_slack: 0.0,
        protected: 10,
        zone: hearth_engine::LocalZone::fixed(utc_offset_secs),
        ..MemoryConfig::at(path.to_path_buf())
    }
}

/// SPEC §4.7: a prune protects the *budget-bounded* count (`effective_protected_count`), not the
/// configured one. Twenty equal events, a context budget for three of them and ten configured:
/// the window keeps the three newest plus one by rank (`top_k` = 4), where protecting the
/// configured ten would keep ten.
#[test]
fn pruning_protects_the_budget_bounded_count_not_the_configured_one() {
    let (_scratch, path) = scratch_store("protected");
    let cfg = keyword_config(&path, 0);
    let mut cold = ColdContext::new(
        hearth_memory::Store::open(&path).expect("store opens"),
        None,
    );
    let events: Vec<ContextEvent> = (0..20)
        .map(|i| {
            ContextEvent::new(1_000 + i64::from(i), "cli", format!("note number {i}"))
                .with_response("an answer of a few words")
        })
        .collect();
    cold.append(events).expect("events stored");
    let stats = cold.store().events_stats().expect("stats");
    let avg = (stats.tokens / stats.events) as usize;
    assert!(avg > 0, "events carry tokens: {stats:?}");
    let context_tokens = 3 * avg;
    let limits = hearth_memory::PruneLimits::compute(30, 10, context_tokens, stats.tokens, 20);
    assert_eq!(
        (limits.protected, limits.top_k),
        (3, 4),
        "the budget bounds the protected count"
    );

    let pass = pass(
        &mut cold,
        &mut crate::graph_service::GraphMemory::open(
            None,
            hearth_engine::LocalZone::default(),
            0,
            None,
        ),
        &cfg,
        "note number 2",
        None,
        PassBudget {
            prune: true,
            recall: false,
            context_tokens,
            memory_tokens: 0,
        },
        10_000,
    )
    .expect("pass");
    let kept: Vec<&str> = pass.window.iter().map(|e| e.input.as_str()).collect();
    assert_eq!(pass.archived, 16, "kept {kept:?}");
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert_eq!(
        kept[1..],
        ["note number 17", "note number 18", "note number 19"],
        "the three newest are protected"
    );
}

/// With a slack, a window past its limit is pruned below it, and the turns after only append
/// until the limit is reached again: the conversation's start stays the same between prunes.
#[test]
fn a_prune_with_slack_frees_half_the_window_and_the_next_turns_only_append() {
    let (_scratch, path) = scratch_store("slack");
    let cfg = MemoryConfig {
        max_context_size: 11,
        prune_slack: 0.5,
        protected: 3,
        ..keyword_config(&path, 0)
    };
    let mut cold = ColdContext::new(
        hearth_memory::Store::open(&path).expect("store opens"),
        None,
    );
    let mut graph =
        crate::graph_service::GraphMemory::open(None, hearth_engine::LocalZone::default(), 0, None);
    let budget = PassBudget {
        prune: true,
        recall: false,
        context_tokens: 100_000,
        memory_tokens: 0,
    };
    let mut archived = Vec::new();
    let mut window_start = Vec::new();
    for i in 0..30 {
        let now = 1_000 + i64::from(i);
        let pass = pass(&mut cold, &mut graph, &cfg, "tea", None, budget, now).expect("pass");
        archived.push(pass.archived);
        window_start.push(pass.window.first().map(|e| e.input.clone()));
        cold.append(vec![ContextEvent::new(now, "cli", format!("turn {i}"))])
            .expect("append");
    }
    // The limit is 10 events (max_context_size − 1): past it, a prune keeps 5 (3 newest and 2
    // by relevance), then five turns append before the next one.
    let prunes: Vec<usize> = (0..30).filter(|&i| archived[i] > 0).collect();
    assert_eq!(prunes, [11, 17, 23, 29], "{archived:?}");
    assert!(prunes.iter().all(|&i| archived[i] == 6), "{archived:?}");
    for turn in 12..17 {
        assert_eq!(window_start[turn], window_start[11], "turn {turn}");
    }
}

/// A note with no content is the caller's mistake, a store failure is not: the tool answers
/// `invalid_arguments` for the first and `failed` for the other, never the same untyped text.
#[test]
fn a_note_without_content_is_invalid_arguments_and_a_refused_request_unavailable() {
    let (_scratch, path) = scratch_store("typed-errors");
    let mut cold = ColdContext::new(
        hearth_memory::Store::open(&path).expect("store opens"),
        None,
    );
    let err = commit(&mut cold, "  ".into(), String::new(), 1_000).expect_err("empty note");
    assert!(matches!(err, MemoryError::InvalidArguments(_)), "{err}");
    let handler: hearth_stages::HandlerError = err.into();
    assert_eq!(handler.kind(), "invalid_arguments", "{handler}");
    assert_eq!(
        cold.store().cold_count().expect("count"),
        0,
        "nothing stored"
    );
    let stored = commit(
        &mut cold,
        "the spare key is under the mat".into(),
        String::new(),
        1_000,
    )
    .expect("a note with content is stored");
    assert!(stored.starts_with("stored as memory"), "{stored}");

    let (reply, answer) = crossbeam_channel::bounded(1);
    MemoryState::refuse(MemoryOp::Commit {
        content: "x".into(),
        summary: String::new(),
        media: Vec::new(),
        reply,
    });
    let err = answer.recv().expect("answered").expect_err("refused");
    assert!(matches!(err, MemoryError::Stopped(_)), "{err}");
    let handler: hearth_stages::HandlerError = err.into();
    assert_eq!(handler.kind(), "unavailable", "{handler}");
}

/// A memory pass's surroundings over real files: a store with no model, a graph, a budget
/// that recalls and does not prune.
struct SceneRig {
    scratch: tempfile::TempDir,
    cfg: MemoryConfig,
    cold: ColdContext,
    graph: crate::graph_service::GraphMemory,
    budget: PassBudget,
}

fn scene_rig(tag: &str, utc_offset_secs: i64) -> SceneRig {
    use crate::graph_service::{GraphMemory, GraphSettings};
    let (scratch, path) = scratch_store(tag);
    let dir = scratch.path();
    let cfg = keyword_config(&path, utc_offset_secs);
    let cold = ColdContext::new(
        hearth_memory::Store::open(&path).expect("store opens"),
        None,
    );
    let settings = GraphSettings {
        path: dir.join("graph.db"),
        interval: Duration::from_secs(600),
        model: None,
        scene_half_life: None,
    };
    SceneRig {
        graph: GraphMemory::open(
            Some(&settings),
            hearth_engine::LocalZone::default(),
            1_000,
            None,
        ),
        scratch,
        cfg,
        cold,
        budget: PassBudget {
            prune: false,
            recall: true,
            context_tokens: 1_000,
            memory_tokens: 400,
        },
    }
}

/// The pass enters the turn's scene exactly once (the channel's scene is created at 1 and each
/// turn adds 1), a `scene_policy: "none"` input enters nothing, and the graph's block for the
/// same situation over the same graph is the same bytes.
#[test]
fn a_pass_enters_the_turns_scene_once_and_scene_policy_none_enters_nothing() {
    use crate::graph_service::{GraphMemory, GraphRequest};
    use crate::input::InputEvent;
    use crate::turn_scene::TurnScene;
    let SceneRig {
        scratch: _scratch,
        cfg,
        mut cold,
        mut graph,
        budget,
    } = scene_rig("scenes", 3_600);
    let mut run = |graph: &mut GraphMemory, input: &InputEvent, at: i64| {
        let scene = TurnScene::of_input(input);
        pass(
            &mut cold,
            graph,
            &cfg,
            input.content(),
            scene.as_ref(),
            budget,
            at,
        )
        .expect("pass")
    };
    let stats = |graph: &mut GraphMemory| {
        graph
            .request(GraphRequest::Stats, "", 1_000)
            .expect("stats")
    };

    let quiet = InputEvent::text("telegram", "hello there")
        .with_payload("scene_policy", serde_json::json!("none"));
    run(&mut graph, &quiet, 2_000);
    assert_eq!(
        stats(&mut graph)["scenes"],
        0,
        "no scene under scene_policy none"
    );

    let mut blocks = Vec::new();
    for n in 1..=3u64 {
        let input = InputEvent::text("telegram", "hello there")
            .with_payload("scene", serde_json::json!(["work", "  "]));
        blocks.push(run(&mut graph, &input, 2_000 + n as i64).block);
        let s = stats(&mut graph);
        let strength = |key: &str| {
            s["recent_scenes"]
                .as_array()
                .expect("listed")
                .iter()
                .find(|sc| sc["key"] == key)
                .map(|sc| sc["strength"].clone())
        };
        assert_eq!(
            strength("chan:telegram"),
            Some(serde_json::json!(n + 1)),
            "{s}"
        );
        assert_eq!(strength("work"), Some(serde_json::json!(n + 1)), "{s}");
        assert_eq!(s["scene_turns"], n, "{s}");
    }
    assert!(blocks.windows(2).all(|w| w[0] == w[1]), "{blocks:?}");
}

/// The turn's tools join the scenes its pass entered once the agent's entry for it is
/// recorded; a turn under `scene_policy: "none"` gets none, and only the agent's entry of a
/// turn with tools adds any.
#[test]
fn a_turns_tools_join_the_scenes_its_pass_entered() {
    use crate::graph_service::{GraphMemory, GraphRequest};
    use crate::input::InputEvent;
    use crate::turn_scene::TurnScene;
    let SceneRig {
        scratch: _scratch,
        cfg,
        mut cold,
        mut graph,
        budget,
    } = scene_rig("turn-tools", 0);
    let scene_keys = |graph: &mut GraphMemory| -> Vec<String> {
        graph
            .request(GraphRequest::Stats, "", 1_000)
            .expect("stats")["recent_scenes"]
            .as_array()
            .expect("listed")
            .iter()
            .map(|s| s["key"].as_str().expect("key").to_owned())
            .collect()
    };
    let reply = |input: &InputEvent, tools: &[&str]| {
        let mut evt = ContextEvent::new(3_000, hearth_memory::AGENT_SOURCE, input.content())
            .with_response("done");
        evt.id.clone_from(&input.request_id);
        evt.tools_used = tools.iter().map(|t| (*t).to_owned()).collect();
        evt
    };

    let quiet = InputEvent::text("cli", "what is 2 + 2")
        .with_payload("scene_policy", serde_json::json!("none"));
    let scene = TurnScene::of_input(&quiet);
    pass(
        &mut cold,
        &mut graph,
        &cfg,
        quiet.content(),
        scene.as_ref(),
        budget,
        2_000,
    )
    .expect("pass");
    graph.note_turn_tools(&reply(&quiet, &["calc"]), 3_000);
    assert!(!scene_keys(&mut graph).iter().any(|k| k == "tool:calc"));

    let input = InputEvent::text("cli", "what is 2 + 2");
    let scene = TurnScene::of_input(&input);
    pass(
        &mut cold,
        &mut graph,
        &cfg,
        input.content(),
        scene.as_ref(),
        budget,
        2_000,
    )
    .expect("pass");
    // The user's own entry, and a reply without tools, add nothing.
    let mut own = reply(&input, &["calc"]);
    own.source = "cli".to_owned();
    graph.note_turn_tools(&own, 3_000);
    graph.note_turn_tools(&reply(&input, &[]), 3_000);
    assert!(
        !scene_keys(&mut graph)
            .iter()
            .any(|k| k.starts_with("tool:"))
    );

    graph.note_turn_tools(&reply(&input, &["calc"]), 3_000);
    assert!(scene_keys(&mut graph).iter().any(|k| k == "tool:calc"));
}

/// Cold recall reckons in the daemon's zone itself, not in an offset copied at start: when
/// the offset changes (daylight saving), the next query reads its time words in the new one.
#[test]
fn cold_recall_follows_the_users_zone() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};
    let (_scratch, path) = scratch_store("zone");
    let offset = Arc::new(AtomicI64::new(3_600));
    let mut cfg = keyword_config(&path, 0);
    let seen = Arc::clone(&offset);
    cfg.zone = hearth_engine::LocalZone::following(move |_| seen.load(Ordering::SeqCst));
    let cold = ColdContext::new(
        hearth_memory::Store::open(&path).expect("store opens"),
        None,
    );
    let install = Install {
        models: hearth_memory::MemoryModels::default(),
        cfg,
        done: Sink::new(|_| {}),
        consolidate: None,
    };
    let (cold, _) = MemoryState::default().install(cold, install);
    assert_eq!(cold.config().zone.offset_at(0), 3_600);
    offset.store(7_200, Ordering::SeqCst);
    assert_eq!(cold.config().zone.offset_at(0), 7_200);
}

/// A turn marked to be forgotten once answered whose reply came while memory was not running
/// (loading at a start, off, a crash between the two) is forgotten when memory starts: the
/// install queues it, and running it removes the turn and clears the mark.
#[test]
fn a_start_forgets_the_answered_turns_still_marked() {
    let (_scratch, path) = scratch_store("forget-answered");
    let mut store = hearth_memory::Store::open(&path).expect("store opens");
    for (id, text) in [("req-1", "my safe code is 7319"), ("req-2", "buy more tea")] {
        store
            .journal_accept(id, "cli", "input", &serde_json::json!({"content": text}), 1)
            .expect("accept");
        let mut event = ContextEvent::new(2, "cli", text.to_owned());
        event.id = id.into();
        store
            .event_append(&hearth_memory::EventRecord::new(event))
            .expect("append");
    }
    assert!(store.journal_forget_when_answered("req-1").expect("mark"));
    for id in ["req-1", "req-2"] {
        store
            .journal_reply(id, &serde_json::json!({"content": "Noted."}), 3)
            .expect("reply");
    }
    let install = Install {
        models: hearth_memory::MemoryModels::default(),
        cfg: keyword_config(&path, 0),
        done: Sink::new(|_| {}),
        consolidate: None,
    };
    let mut state = MemoryState::default();
    let (mut cold, waiting) = state.install(ColdContext::new(store, None), install);
    let turns: Vec<&str> = waiting
        .iter()
        .filter_map(|op| match op {
            MemoryOp::ForgetAnswered { turn } => Some(turn.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(turns, ["req-1"]);
    let mut after = Vec::new();
    for op in waiting {
        state.handle(&mut cold, op, &mut after);
    }
    let window: Vec<String> = cold
        .store()
        .events_window()
        .expect("window")
        .into_iter()
        .map(|e| e.record.event.input)
        .collect();
    assert_eq!(window, ["buy more tea"]);
    assert!(
        !cold
            .store()
            .journal_forgets_when_answered("req-1")
            .expect("read"),
        "the mark goes with the turn"
    );
    assert!(
        cold.store()
            .journal_answered_to_forget()
            .expect("read")
            .is_empty()
    );
}

/// A small-talk input gets neither cold recall nor the facts its words match: "thanks" is in
/// the sentence a fact was told in, yet only a question is shown it.
#[test]
fn small_talk_is_shown_no_memory_its_words_match() {
    let (scratch, path) = scratch_store("small-talk");
    let cfg = keyword_config(&path, 0);
    let t0 = 1_780_000_000_000;
    let mut cold = ColdContext::new(
        hearth_memory::Store::open(&path).expect("store opens"),
        None,
    );
    cold.archive_events(
        vec![ContextEvent::new(t0, "cli", "Thanks, I live in Porto now.").with_response("ok")],
        "prune",
        t0,
    )
    .expect("archived");
    let settings = crate::graph_service::GraphSettings {
        path: scratch.path().join("graph.db"),
        interval: Duration::from_secs(600),
        model: None,
        scene_half_life: None,
    };
    let mut graph = crate::graph_service::GraphMemory::open(
        Some(&settings),
        hearth_engine::LocalZone::fixed(0),
        t0,
        None,
    );
    let later = t0 + 601_000;
    graph.tick_if_due(&cold, later);
    let budget = PassBudget {
        prune: false,
        recall: true,
        context_tokens: 2_000,
        memory_tokens: 2_000,
    };
    let mut ask = |query: &str| {
        pass(&mut cold, &mut graph, &cfg, query, None, budget, later + 1)
            .expect("pass")
            .block
    };
    let question = ask("thanks, where do I live?");
    assert!(question.contains("Porto"), "{question}");
    assert_eq!(ask("Thanks!"), "");
}
