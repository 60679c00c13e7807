//! Scenes: a turn enters its scenes once, its facts are tagged with them when distilled, and the
//! block of a later turn in the same scene shows them first; scene refs fade on the heartbeat.

use super::*;

/// A scratch graph whose scene refs fade with `half_life` on the heartbeat.
fn scratch_fading(tag: &str, half_life: Option<Duration>) -> Scratch {
    let mut s = scratch(tag);
    let settings = GraphSettings {
        path: s.dir.join("graph.db"),
        interval: TICK,
        model: None,
        scene_half_life: half_life,
    };
    s.graph = GraphMemory::open(Some(&settings), LocalZone::default(), T0, None);
    s
}

const NO_SHARED_WORD: &str = "any news about the weather tomorrow";

#[test]
fn a_fact_told_on_a_channel_comes_back_on_that_channel_with_no_shared_word() {
    let mut s = scratch("scene-chan");
    let told = "I live in Porto.";
    assert!(
        s.graph
            .enter_scene(&turn("t1", "telegram"), told, 0, T0)
            .is_some()
    );
    s.say_in(T0, "t1", "telegram", told);
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let later = due + 1;
    // Without its scene the query finds nothing: it shares no word with the fact.
    assert_eq!(s.graph.block(NO_SHARED_WORD, 400, later), "");

    let here = s.scene_block(&turn("t2", "telegram"), NO_SHARED_WORD, later);
    assert!(here.starts_with(SCENE_FACTS_HEADER), "{here}");
    assert!(here.contains("lives_in Porto (current"), "{here}");
    let elsewhere = s.scene_block(&turn("t3", "web"), NO_SHARED_WORD, later);
    assert!(!elsewhere.contains("Porto"), "{elsewhere}");

    // Asked with its own words on the channel, the fact is shown once, in the scene's part.
    let both = s.scene_block(&turn("t4", "telegram"), "where do I live", later);
    assert_eq!(both.matches("Porto").count(), 1, "{both}");
    assert!(both.starts_with(SCENE_FACTS_HEADER), "{both}");
    assert!(!both.contains(FACTS_HEADER), "{both}");
}

#[test]
fn a_declared_scene_is_honoured_by_prefix_and_a_bad_key_is_ignored() {
    let mut s = scratch("scene-declared");
    let told = "I live in Porto.";
    let mut first = turn("t1", "cli");
    first.declared = vec!["Project:Hearth/Graph".into(), "!!!".into()];
    let entered = s.graph.enter_scene(&first, told, 0, T0).expect("entered");
    assert_eq!(entered.keys[..2], ["project:hearth/graph", "chan:cli"]);
    let graph = s.graph.store.as_ref().unwrap();
    assert_eq!(
        graph.turn_scenes("t1").unwrap()[..2],
        ["project:hearth/graph", "chan:cli"]
    );
    s.say_in(T0, "t1", "cli", told);
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let mut later = turn("t2", "web");
    later.declared = vec!["project:hearth".into()];
    let block = s.scene_block(&later, NO_SHARED_WORD, due + 1);
    assert!(block.contains("Porto"), "{block}");
    let plain = s.scene_block(&turn("t3", "web"), NO_SHARED_WORD, due + 1);
    assert!(!plain.contains("Porto"), "{plain}");
}

#[test]
fn each_entry_adds_one_to_the_scene_strength() {
    let mut s = scratch("scene-strength");
    for n in 1..=3u64 {
        let t = turn(&format!("t{n}"), "telegram");
        s.graph.enter_scene(&t, "hello there", 0, T0 + n as i64);
        // Created at 1 and entered: 2 after the first turn, N + 1 after N.
        assert_eq!(s.strength("chan:telegram"), n + 1);
    }
    // No scene for an empty query, and none without a graph.
    assert!(
        s.graph
            .enter_scene(&turn("t9", "telegram"), "  ", 0, T0)
            .is_none()
    );
    assert_eq!(s.strength("chan:telegram"), 4);
    let mut off = GraphMemory::open(None, LocalZone::default(), T0, None);
    assert!(
        off.enter_scene(&turn("t1", "telegram"), "hello", 0, T0)
            .is_none()
    );
}

/// A scratch graph where `told` was said in turn `t1` on telegram and distilled: the heartbeat
/// has run, at the time returned.
fn told_on_telegram(tag: &str, told: &str) -> (Scratch, i64) {
    let mut s = scratch(tag);
    s.graph.enter_scene(&turn("t1", "telegram"), told, 0, T0);
    s.say_in(T0, "t1", "telegram", told);
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    (s, due)
}

#[test]
fn the_same_situation_over_the_same_graph_gives_the_same_bytes() {
    let (mut s, due) = told_on_telegram(
        "scene-stable",
        "I live in Porto. I like hiking. I work at Acme.",
    );
    let query = "where do I work";
    let first = s.scene_block(&turn("t2", "telegram"), query, due + 1);
    // The second sighting of this situation makes it an emergent scene: the graph's facts are
    // the same, and so is the block.
    let second = s.scene_block(&turn("t3", "telegram"), query, due + 2);
    assert_eq!(first, second);
    assert!(first.starts_with(SCENE_FACTS_HEADER), "{first}");
    // A turn whose scenes hold no fact gets exactly the block it had without scenes.
    let web = s.scene_block(&turn("t6", "web"), query, due + 2);
    assert_eq!(web, s.graph.block(query, 400, due + 2));
    assert!(web.starts_with(FACTS_HEADER), "{web}");
    let ids: Vec<u32> = first
        .lines()
        .filter_map(|l| l.split(['[', ']']).nth(1))
        .map(|id| id[1..].parse().unwrap())
        .collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "by id: {first}");
    let small = s.scene_block(&turn("t4", "telegram"), query, due + 3);
    let entered = s
        .graph
        .enter_scene(&turn("t5", "telegram"), query, 0, due + 3);
    let tight = s.graph.block_in(query, entered.as_ref(), 40, due + 3).text;
    assert!(estimate_tokens(&tight) <= 40, "{tight}");
    assert!(!small.is_empty());
}

/// The weight of the heaviest fact of scene `key`.
fn scene_weight(s: &Scratch, key: &str) -> f64 {
    let graph = s.graph.store.as_ref().unwrap();
    graph.recall_by_scene(&[key], 8, 0).unwrap().relations[0].score
}

/// Tells a fact in a scene at T0, distills it, and ticks again `days` later: the stats then,
/// and the fact's weight in the scene before and after.
fn fade_after(s: &mut Scratch, days: i64) -> (Value, f64, f64) {
    s.graph
        .enter_scene(&turn("t1", "telegram"), "I live in Porto.", 0, T0);
    s.say_in(T0, "t1", "telegram", "I live in Porto.");
    let due = T0 + TICK.as_millis() as i64;
    s.tick(due);
    let refs = s.ask(GraphRequest::Stats, due)["scene_refs"].clone();
    assert!(refs.as_u64().unwrap() > 0, "the fact was tagged");
    let before = scene_weight(s, "chan:telegram");
    s.tick(due + days * DAY + TICK.as_millis() as i64);
    let stats = s.ask(GraphRequest::Stats, due + days * DAY);
    assert_eq!(stats["scene_refs"], refs, "halved, not dropped: {stats}");
    (stats, before, scene_weight(s, "chan:telegram"))
}

#[test]
fn scene_refs_fade_on_the_heartbeat_after_their_half_life_and_not_when_off() {
    let mut s = scratch_fading("scene-fade", Some(Duration::from_secs(86_400)));
    let (stats, before, after) = fade_after(&mut s, 2);
    assert_eq!(stats["scene_half_life_ms"], DAY, "{stats}");
    assert_eq!(stats["scene_refs_halved"], stats["scene_refs"], "{stats}");
    assert!(before > 0.1, "{before}");
    assert_eq!(after, before / 2.0);

    let mut fresh = scratch_fading("scene-fade-soon", Some(Duration::from_secs(86_400)));
    // Within the half-life nothing fades.
    let (stats, before, after) = fade_after(&mut fresh, 0);
    assert_eq!(stats["scene_refs_halved"], 0, "{stats}");
    assert_eq!(after, before);

    let mut off = scratch_fading("scene-fade-off", None);
    let (stats, before, after) = fade_after(&mut off, 30);
    assert_eq!(after, before);
    assert_eq!(
        (&stats["scene_refs_halved"], &stats["scene_half_life_ms"]),
        (&json!(0), &Value::Null),
        "{stats}"
    );
    // Zero is off too.
    let mut zero = scratch_fading("scene-fade-zero", Some(Duration::ZERO));
    assert_eq!(fade_after(&mut zero, 30).0["scene_refs_halved"], 0);
}

#[test]
fn the_stats_count_scenes_and_list_the_recent_ones() {
    let mut s = scratch("scene-stats");
    assert_eq!(s.ask(GraphRequest::Stats, T0)["scenes"], 0);
    let mut t = turn("t1", "telegram");
    t.declared = vec!["work".into()];
    s.graph.enter_scene(&t, "hello there", 0, T0);
    let stats = s.ask(GraphRequest::Stats, T0);
    assert_eq!(stats["scenes"], 2, "{stats}");
    assert_eq!(stats["scene_turns"], 1, "{stats}");
    let listed = stats["recent_scenes"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|sc| sc["key"] == "work" && sc["origin"] == "declared" && sc["strength"] == 2),
        "{stats}"
    );
}

#[test]
fn small_talk_is_shown_its_scenes_facts_and_none_its_words_match() {
    let (mut s, due) = told_on_telegram(
        "scene-small-talk",
        "Thanks, I live in Porto now. I like hiking.",
    );
    // Its word is in a fact's sentence: asked as a query, "thanks" finds where the user lives.
    assert!(s.graph.block("thanks", 400, due).contains("Porto"));
    // As small talk it is shown no fact its words match: nothing outside a scene...
    assert!(s.graph.scene_block_in(None, 400, due).is_empty());
    // ...and in its scene, the scene's facts alone.
    let entered = s
        .graph
        .enter_scene(&turn("t2", "telegram"), "thanks", 0, due + 1);
    let block = s.graph.scene_block_in(entered.as_ref(), 400, due + 1).text;
    assert!(block.starts_with(SCENE_FACTS_HEADER), "{block}");
    assert!(!block.contains(FACTS_HEADER), "{block}");
    assert!(
        s.graph
            .scene_block_in(entered.as_ref(), 0, due + 1)
            .is_empty()
    );
}
