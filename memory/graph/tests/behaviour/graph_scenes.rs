//! Scenes: declared and hierarchical keys recalled by prefix, emergent scenes found in
//! recurring situations, refs that fade, and facts tagged with the scenes of the turn they
//! were said in — and gone from every scene once forgotten.

use hearth_graph::{
    DEFAULT_SCENE_RECALL_LIMIT, FactId, FactMode, GraphError, GraphStore, JOIN_THRESHOLD,
    PurgeCriteria, RECALL_THRESHOLD, SceneFeature, SceneOrigin, Statement, scene_similarity,
};

use crate::support::{DAY, DROP_V4, T0, assert_invariants, count, fact, graph, item, peek, source};

fn f(kind: &str, value: &str) -> SceneFeature {
    SceneFeature::new(kind, value).unwrap()
}

/// Stores `subject predicate object` at `confidence` and returns its id.
fn tell(
    g: &mut GraphStore,
    subject: &str,
    predicate: &str,
    object: &str,
    confidence: f64,
) -> FactId {
    let mut claim = fact(subject, predicate, object);
    claim.confidence = confidence;
    let statement = Statement {
        sentence: format!("{subject} {predicate} {object}."),
        facts: vec![claim],
        events: Vec::new(),
    };
    let report = g.tell(&[statement], &source(None)).unwrap();
    *report
        .inserted
        .first()
        .unwrap_or_else(|| panic!("not inserted: {report:?}"))
}

fn objects(g: &GraphStore, keys: &[&str], limit: usize) -> Vec<String> {
    g.recall_by_scene(keys, limit, T0)
        .unwrap()
        .relations
        .into_iter()
        .map(|h| h.object)
        .collect()
}

fn entity_names(g: &GraphStore, keys: &[&str], limit: usize) -> Vec<String> {
    g.recall_by_scene(keys, limit, T0)
        .unwrap()
        .entities
        .into_iter()
        .map(|e| e.name)
        .collect()
}

fn strength(g: &GraphStore, key: &str) -> Option<u64> {
    g.scenes(1_000)
        .unwrap()
        .into_iter()
        .find(|s| s.key == key)
        .map(|s| s.strength)
}

fn refs(path: &std::path::Path) -> i64 {
    count(
        &peek(path),
        "SELECT (SELECT count(*) FROM scene_relation_refs) + (SELECT count(*) FROM scene_entity_refs)",
    )
}

#[test]
fn a_scene_recalls_its_own_facts_and_its_childrens_but_not_a_longer_names() {
    let mut g = graph();
    let own = tell(&mut g.graph, "user", "likes", "Tea", 0.8);
    let child = tell(&mut g.graph, "user", "likes", "Chess", 0.8);
    let other = tell(&mut g.graph, "user", "likes", "Golf", 0.8);
    g.graph.tag_scene("Work", own, T0).unwrap();
    g.graph.tag_scene("work/Meetings", child, T0).unwrap();
    g.graph.tag_scene("work2", other, T0).unwrap();

    let mut found = objects(&g.graph, &["work"], 8);
    found.sort();
    assert_eq!(found, ["Chess", "Tea"]);
    assert_eq!(objects(&g.graph, &["WORK/meetings"], 8), ["Chess"]);
    assert_eq!(objects(&g.graph, &["work2"], 8), ["Golf"]);
    let mut both = objects(&g.graph, &["work/meetings", "work2"], 8);
    both.sort();
    assert_eq!(both, ["Chess", "Golf"]);
    assert!(objects(&g.graph, &["wor"], 8).is_empty());
    assert!(matches!(
        g.graph.recall_by_scene(&["  /// "], 8, T0),
        Err(GraphError::InvalidSceneKey { .. })
    ));
}

#[test]
fn heavier_refs_come_first_and_the_limit_bounds_each_list() {
    let mut g = graph();
    for (object, confidence) in [("Alpha", 0.3), ("Bravo", 0.9), ("Charlie", 0.6)] {
        let id = tell(&mut g.graph, "user", "likes", object, confidence);
        g.graph.tag_scene("s", id, T0).unwrap();
    }
    assert_eq!(objects(&g.graph, &["s"], 8), ["Bravo", "Charlie", "Alpha"]);
    let recall = g.graph.recall_by_scene(&["s"], 8, T0).unwrap();
    let scores: Vec<f64> = recall.relations.iter().map(|h| h.score).collect();
    assert_eq!(scores, [0.9, 0.6, 0.3]);
    // user and Bravo both weigh 0.9; user is mentioned three times.
    assert_eq!(
        entity_names(&g.graph, &["s"], 8),
        ["user", "Bravo", "Charlie", "Alpha"]
    );
    assert_eq!(objects(&g.graph, &["s"], 2), ["Bravo", "Charlie"]);
    assert_eq!(entity_names(&g.graph, &["s"], 2), ["user", "Bravo"]);
    assert_eq!(DEFAULT_SCENE_RECALL_LIMIT, 8);

    // Equal weights: the newest recorded first, then the newest id.
    let mut h = graph();
    for object in ["One", "Two", "Three"] {
        let id = tell(&mut h.graph, "user", "likes", object, 0.5);
        h.graph.tag_scene("eq", id, T0).unwrap();
    }
    assert_eq!(objects(&h.graph, &["eq"], 8), ["Three", "Two", "One"]);
}

#[test]
fn only_open_relations_are_recalled_by_scene() {
    let mut g = graph();
    let porto = tell(&mut g.graph, "user", "lives_in", "Porto", 0.8);
    g.graph.tag_scene("home", porto, T0).unwrap();
    let mut moved = fact("user", "lives_in", "Lisbon");
    moved.mode = FactMode::Began;
    let report = g
        .graph
        .tell(
            &[Statement {
                sentence: "I moved to Lisbon.".into(),
                facts: vec![moved],
                events: Vec::new(),
            }],
            &source(None),
        )
        .unwrap();
    assert_eq!(report.closed, [porto]);
    g.graph.tag_scene("home", report.inserted[0], T0).unwrap();
    assert_eq!(objects(&g.graph, &["home"], 8), ["Lisbon"]);
}

#[test]
fn tagging_refuses_events_unknown_facts_and_empty_keys() {
    let mut g = graph();
    let id = tell(&mut g.graph, "user", "likes", "Tea", 0.8);
    assert!(matches!(
        g.graph.tag_scene("s", FactId::Event(1), T0),
        Err(GraphError::NotARelation { .. })
    ));
    assert!(matches!(
        g.graph.tag_scene("s", FactId::Relation(999), T0),
        Err(GraphError::NotFound { .. })
    ));
    assert!(matches!(
        g.graph.tag_scene("__", id, T0),
        Err(GraphError::InvalidSceneKey { .. })
    ));
    assert_eq!(
        g.graph.stats().unwrap().scenes,
        0,
        "a refused tag makes no scene"
    );
    g.graph.tag_scene("s", id, T0).unwrap();
    let stats = g.graph.stats().unwrap();
    assert_eq!((stats.scenes, stats.scene_refs), (1, 3));
    let listed = g.graph.scenes(10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].key.as_str(), listed[0].origin, listed[0].strength),
        ("s", SceneOrigin::Declared, 1)
    );
}

/// Ten features of weight 1.
fn ten() -> Vec<SceneFeature> {
    (1..=10).map(|i| f("chan", &i.to_string())).collect()
}

#[test]
fn a_situation_joins_a_scene_at_exactly_half_similar_and_not_just_below() {
    let mut g = graph();
    assert_eq!(g.graph.enter_scene(&ten(), T0).unwrap(), None);
    let key = g.graph.enter_scene(&ten(), T0).unwrap().expect("created");
    assert_eq!(key, "auto:chan:1_chan:2");
    assert_eq!(strength(&g.graph, &key), Some(1));

    let half: Vec<SceneFeature> = ten().into_iter().take(5).collect();
    let mut below = half.clone();
    below.push(f("part", "night"));
    assert_eq!(scene_similarity(&half, &ten()), JOIN_THRESHOLD);
    let just_below = scene_similarity(&below, &ten());
    assert!(
        just_below > 0.49 && just_below < JOIN_THRESHOLD,
        "{just_below}"
    );

    assert_eq!(g.graph.enter_scene(&below, T0 + 1).unwrap(), None);
    assert_eq!(strength(&g.graph, &key), Some(1), "not joined");
    assert_eq!(
        g.graph.enter_scene(&half, T0 + 2).unwrap().as_deref(),
        Some(key.as_str())
    );
    assert_eq!(strength(&g.graph, &key), Some(2), "joined");
    let updated = g.graph.scenes(10).unwrap();
    assert_eq!(updated[0].key, key);
    assert_eq!(updated[0].updated_ms, T0 + 2);
}

#[test]
fn two_sightings_make_an_auto_scene_and_a_taken_key_is_numbered() {
    let mut g = graph();
    let first = [f("chan", "web"), f("part", "morning"), f("peer", "Ana")];
    assert_eq!(g.graph.enter_scene(&first, T0).unwrap(), None);
    assert!(
        g.graph.scenes(10).unwrap().is_empty(),
        "one sighting is only evidence"
    );
    let key = g.graph.enter_scene(&first, T0).unwrap().expect("created");
    // Heaviest two first: chan and peer, not part.
    assert_eq!(key, "auto:chan:web_peer:ana");
    let listed = g.graph.scenes(10).unwrap();
    assert_eq!(
        (listed[0].origin, listed[0].strength),
        (SceneOrigin::Emergent, 1)
    );

    // Same channel and peer, but busy with tools: 2 / (2 + 0.2 + 2.4) < 0.5 — a situation of
    // its own under the same label.
    let busy = [
        f("chan", "web"),
        f("peer", "Ana"),
        f("tool", "a"),
        f("tool", "b"),
        f("tool", "c"),
    ];
    assert!(scene_similarity(&busy, &first) < JOIN_THRESHOLD);
    assert_eq!(g.graph.enter_scene(&busy, T0).unwrap(), None);
    assert_eq!(
        g.graph.enter_scene(&busy, T0).unwrap().as_deref(),
        Some("auto:chan:web_peer:ana#2")
    );
    // The numbered key names its scene when it comes back.
    assert_eq!(
        hearth_graph::normalize_scene_key("auto:chan:web_peer:ana#2").unwrap(),
        "auto:chan:web_peer:ana#2"
    );
    // And the busy situation now joins its own scene.
    assert_eq!(
        g.graph.enter_scene(&busy, T0).unwrap().as_deref(),
        Some("auto:chan:web_peer:ana#2")
    );
    assert!(
        g.graph.enter_scene(&[], T0).unwrap().is_none(),
        "no features, no scene"
    );
}

#[test]
fn creating_a_scene_spends_only_its_own_evidence() {
    let mut g = graph();
    let a = [f("chan", "x"), f("peer", "p")];
    let b = [f("chan", "y"), f("peer", "q")];
    assert_eq!(g.graph.enter_scene(&a, T0).unwrap(), None);
    assert_eq!(g.graph.enter_scene(&b, T0).unwrap(), None);
    assert_eq!(
        g.graph.enter_scene(&a, T0).unwrap().as_deref(),
        Some("auto:chan:x_peer:p")
    );
    // b's first sighting survived a's scene being made (the original deleted all evidence).
    assert_eq!(
        g.graph.enter_scene(&b, T0).unwrap().as_deref(),
        Some("auto:chan:y_peer:q")
    );
    assert_eq!(
        count(&peek(g.graph.path()), "SELECT count(*) FROM scene_evidence"),
        0
    );
}

#[test]
fn a_declared_scene_learns_only_from_its_key_and_the_entry_unites_both_paths() {
    let mut g = graph();
    let situation = [f("chan", "web"), f("peer", "ana"), f("topic", "rust")];
    let declared = "project:Hearth/topic:graph/chan:Web";
    let entry = g
        .graph
        .enter_scene_with_hint(
            &situation,
            &[declared, "PROJECT:hearth/topic:graph/chan:web"],
            T0,
        )
        .unwrap();
    let key = "project:hearth/topic:graph/chan:web";
    assert_eq!(entry.primary.as_deref(), Some(key));
    assert_eq!(entry.keys, [key], "declared once; no emergent scene yet");
    let learned: Vec<(String, f64)> = peek(g.graph.path())
        .prepare("SELECT feature, weight FROM scene_features WHERE scene_key = ?1 ORDER BY feature")
        .unwrap()
        .query_map([key], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        learned,
        [
            ("chan:web".to_owned(), 1.0),
            ("topic:graph".to_owned(), 0.4)
        ],
        "never peer:ana or topic:rust from the fingerprint"
    );
    assert_eq!(strength(&g.graph, key), Some(2), "created at 1, entered: 2");

    let entry = g
        .graph
        .enter_scene_with_hint(&situation, &[declared, "home"], T0 + 1)
        .unwrap();
    let auto = "auto:chan:web_peer:ana";
    assert_eq!(
        entry.primary.as_deref(),
        Some(auto),
        "the emergent scene is primary"
    );
    assert_eq!(entry.keys, [key, "home", auto]);
    assert_eq!(strength(&g.graph, key), Some(3));
    assert_eq!(strength(&g.graph, "home"), Some(2));

    // The declared scene's features never make it emergent: only `auto:` is joined.
    let entry = g
        .graph
        .enter_scene_with_hint(&situation, &[], T0 + 2)
        .unwrap();
    assert_eq!(entry.primary.as_deref(), Some(auto));
    assert_eq!(entry.keys, [auto]);
    assert_eq!(
        strength(&g.graph, key),
        Some(3),
        "not entered without its name"
    );

    assert!(matches!(
        g.graph
            .enter_scene_with_hint(&situation, &["ok", "!!!"], T0 + 3),
        Err(GraphError::InvalidSceneKey { .. })
    ));
    assert_eq!(
        strength(&g.graph, "ok"),
        None,
        "nothing entered on a bad key"
    );
    assert_eq!(strength(&g.graph, auto), Some(2), "nor the emergent one");
}

#[test]
fn recall_by_situation_reads_scenes_at_least_0_35_similar() {
    let mut g = graph();
    let usual = [f("chan", "web"), f("peer", "ana")];
    g.graph.enter_scene(&usual, T0).unwrap();
    let key = g.graph.enter_scene(&usual, T0).unwrap().expect("created");
    let tea = tell(&mut g.graph, "user", "likes", "Tea", 0.8);
    g.graph.tag_scene(&key, tea, T0).unwrap();

    // 1 / (1 + 1 + 0.8) = 0.357.
    let near = [f("chan", "web"), f("tool", "calc")];
    // 1 / 3 = 0.333.
    let far = [f("chan", "web"), f("peer", "bob")];
    assert!(scene_similarity(&near, &usual) >= RECALL_THRESHOLD);
    assert!(scene_similarity(&far, &usual) < RECALL_THRESHOLD);

    let found = g.graph.recall_by_situation(&near, 8, T0).unwrap();
    assert_eq!(found.scenes, std::slice::from_ref(&key));
    assert_eq!(found.relations.len(), 1);
    assert_eq!(found.relations[0].object, "Tea");
    let missed = g.graph.recall_by_situation(&far, 8, T0).unwrap();
    assert!(missed.scenes.is_empty() && missed.relations.is_empty());
    assert_eq!(strength(&g.graph, &key), Some(1), "recall does not enter");
}

/// Scene `{chan:web, peer:ana}` holding no fact and scene `{chan:web, tool:calc}` holding
/// Tea; a situation with all three features is nearer the first (0.71) than the second (0.64).
fn two_scenes_one_with_a_fact() -> (crate::support::TestGraph, Vec<SceneFeature>) {
    let mut g = graph();
    let ana = [f("chan", "web"), f("peer", "ana")];
    let calc = [f("chan", "web"), f("tool", "calc")];
    for features in [&ana, &ana, &calc, &calc] {
        g.graph.enter_scene(features, T0).unwrap();
    }
    let calc_key = g.graph.enter_scene(&calc, T0).unwrap().expect("joined");
    let tea = tell(&mut g.graph, "user", "likes", "Tea", 0.8);
    g.graph.tag_scene(&calc_key, tea, T0).unwrap();
    let both = vec![f("chan", "web"), f("peer", "ana"), f("tool", "calc")];
    assert!(scene_similarity(&both, &ana) > scene_similarity(&both, &calc));
    (g, both)
}

#[test]
fn scene_facts_count_only_the_similar_scenes_that_hold_a_fact() {
    let (g, both) = two_scenes_one_with_a_fact();
    // Situation recall spends its one scene on the nearer, empty one ...
    let by_situation = g.graph.recall_by_situation(&both, 1, T0).unwrap();
    assert!(by_situation.relations.is_empty(), "{by_situation:?}");
    // ... the prompt's read skips it and finds the fact.
    let facts = g.graph.scene_facts(&[], &both, 1, T0).unwrap();
    let objects: Vec<&str> = facts.iter().map(|h| h.object.as_str()).collect();
    assert_eq!(objects, ["Tea"]);
}

#[test]
fn scene_facts_list_the_keys_facts_first_and_each_fact_once() {
    let (mut g, both) = two_scenes_one_with_a_fact();
    let coffee = tell(&mut g.graph, "user", "likes", "Coffee", 0.9);
    g.graph.tag_scene("chan:web", coffee, T0).unwrap();
    let tea = g.graph.recall_by_situation(&both, 8, T0).unwrap().relations[0].id;
    g.graph.tag_scene("chan:web", tea, T0).unwrap();
    let facts = g.graph.scene_facts(&["CHAN:web"], &both, 8, T0).unwrap();
    let objects: Vec<&str> = facts.iter().map(|h| h.object.as_str()).collect();
    assert_eq!(objects, ["Coffee", "Tea"]);
    assert!(
        g.graph
            .scene_facts(&["chan:web"], &both, 0, T0)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn scene_facts_are_empty_while_no_scene_holds_a_fact() {
    let mut g = graph();
    let ana = [f("chan", "web"), f("peer", "ana")];
    g.graph.enter_scene(&ana, T0).unwrap();
    g.graph.enter_scene(&ana, T0).unwrap();
    tell(&mut g.graph, "user", "likes", "Tea", 0.8);
    let facts = g.graph.scene_facts(&["chan:web"], &ana, 8, T0).unwrap();
    assert!(facts.is_empty(), "{facts:?}");
}

fn weight_in(g: &GraphStore, key: &str) -> Option<f64> {
    g.recall_by_scene(&[key], 8, T0)
        .unwrap()
        .relations
        .first()
        .map(|h| h.score)
}

#[test]
fn refs_halve_once_per_half_life_spare_entered_scenes_and_go_below_the_floor() {
    let mut g = graph();
    let tea = tell(&mut g.graph, "user", "likes", "Tea", 0.8);
    let chess = tell(&mut g.graph, "user", "likes", "Chess", 0.8);
    g.graph
        .enter_scene_with_hint(&[], &["old", "busy"], 0)
        .unwrap();
    g.graph.tag_scene("old", tea, 0).unwrap();
    g.graph.tag_scene("busy", chess, 0).unwrap();
    g.graph.enter_scene_with_hint(&[], &["busy"], 120).unwrap();
    let half = 100;

    let pass = g.graph.decay_scene_refs(half, 0.05, 150).unwrap();
    assert_eq!((pass.halved, pass.deleted), (3, 0), "tea and its two ends");
    assert_eq!(weight_in(&g.graph, "old"), Some(0.4));
    assert_eq!(
        weight_in(&g.graph, "busy"),
        Some(0.8),
        "entered within the half-life"
    );

    for now in [160, 200, 249] {
        g.graph.decay_scene_refs(half, 0.05, now).unwrap();
        assert_eq!(
            weight_in(&g.graph, "old"),
            Some(0.4),
            "halved already in this half-life (at {now})"
        );
    }
    // At 249 busy's last entry (120) is more than a half-life ago: it fades from then on.
    assert_eq!(weight_in(&g.graph, "busy"), Some(0.4));

    // 0.4 → 0.2 → 0.1 → 0.05 (kept: not below the floor) → 0.025 (deleted).
    for (now, want) in [(251, 0.2), (352, 0.1), (453, 0.05)] {
        let pass = g.graph.decay_scene_refs(half, 0.05, now).unwrap();
        assert_eq!(pass.deleted, 0);
        assert_eq!(weight_in(&g.graph, "old"), Some(want), "at {now}");
    }
    let before = refs(g.graph.path());
    let pass = g.graph.decay_scene_refs(half, 0.05, 554).unwrap();
    assert_eq!(pass.deleted, 3, "old's three refs fall below the floor");
    assert_eq!(weight_in(&g.graph, "old"), None);
    assert_eq!(refs(g.graph.path()), before - 3);
    assert_eq!(
        weight_in(&g.graph, "busy"),
        Some(0.05),
        "at the floor, kept"
    );
    assert_eq!(
        refs(g.graph.path()),
        3,
        "busy's refs are still above the floor"
    );

    assert!(matches!(
        g.graph.decay_scene_refs(0, 0.05, 600),
        Err(GraphError::InvalidDecay { .. })
    ));
    assert!(matches!(
        g.graph.decay_scene_refs(100, 0.0, 600),
        Err(GraphError::InvalidDecay { .. })
    ));
}

#[test]
fn a_fact_distilled_from_a_noted_turn_is_in_its_scenes_until_forgotten() {
    let mut g = graph();
    // item(n) is said in turn "turn-n".
    g.graph
        .note_turn_scenes("turn-1", &["chan:Telegram", "project:x"], T0)
        .unwrap();
    g.graph
        .note_turn_scenes("turn-2", &["chan:web"], T0)
        .unwrap();
    g.graph
        .distill_items(&[item(1, T0, "I live in Zorblaxton.")])
        .unwrap();
    let hits = objects(&g.graph, &["chan:telegram"], 8);
    assert_eq!(hits, ["Zorblaxton"]);
    assert_eq!(objects(&g.graph, &["project:x"], 8), ["Zorblaxton"]);
    assert!(objects(&g.graph, &["chan:web"], 8).is_empty());
    let recall = g.graph.recall_by_scene(&["chan:telegram"], 8, T0).unwrap();
    let id = recall.relations[0].id;
    assert!((recall.relations[0].score - recall.relations[0].confidence).abs() < 1e-12);
    assert!(recall.entities.iter().any(|e| e.name == "Zorblaxton"));

    // The same fact said again in another turn is merged, and the merge is tagged too.
    g.graph
        .distill_items(&[item(2, T0 + DAY, "I live in Zorblaxton.")])
        .unwrap();
    assert_eq!(objects(&g.graph, &["chan:web"], 8), ["Zorblaxton"]);
    // A turn noted with no scene tags nothing.
    let tagged = refs(g.graph.path());
    g.graph
        .distill_items(&[item(3, T0 + DAY, "I like jazz.")])
        .unwrap();
    assert_eq!(refs(g.graph.path()), tagged);

    g.graph.forget(id).unwrap();
    for key in ["chan:telegram", "project:x", "chan:web"] {
        let left = g.graph.recall_by_scene(&[key], 8, T0).unwrap();
        assert!(left.relations.is_empty(), "{key}: {left:?}");
        assert!(
            left.entities.is_empty(),
            "{key}: user and Zorblaxton go too: {left:?}"
        );
    }
    assert_eq!(refs(g.graph.path()), 0, "no ref outlives its fact");
    // Distilling the items again brings neither the fact nor its refs back.
    g.graph
        .distill_items(&[item(1, T0, "I live in Zorblaxton.")])
        .unwrap();
    assert_eq!(refs(g.graph.path()), 0);
    assert_invariants(g.graph.path());
}

#[test]
fn a_purge_leaves_no_scene_refs_and_other_facts_keep_theirs() {
    let mut g = graph();
    g.graph.note_turn_scenes("turn-1", &["home"], T0).unwrap();
    g.graph.note_turn_scenes("turn-2", &["home"], T0).unwrap();
    g.graph
        .distill_items(&[item(1, T0, "I live in Porto."), item(2, T0, "I like jazz.")])
        .unwrap();
    let mut before = objects(&g.graph, &["home"], 8);
    before.sort();
    assert_eq!(before, ["Porto", "jazz"]);
    g.graph
        .purge(&PurgeCriteria {
            cold_item: Some(1),
            ..PurgeCriteria::default()
        })
        .unwrap();
    assert_eq!(objects(&g.graph, &["home"], 8), ["jazz"]);
    let mut names = entity_names(&g.graph, &["home"], 8);
    names.sort();
    assert_eq!(
        names,
        ["jazz", "user"],
        "user stays: jazz still touches them"
    );
    assert_eq!(refs(g.graph.path()), 3);
    assert_invariants(g.graph.path());
}

#[test]
fn merging_names_keeps_their_scene_refs() {
    let mut g = graph();
    let a = tell(&mut g.graph, "user", "likes", "Jazz", 0.6);
    let b = tell(&mut g.graph, "Bo", "likes", "jazz music", 0.9);
    let dup = tell(&mut g.graph, "user", "likes", "jazz music", 0.9);
    g.graph.tag_scene("s", a, T0).unwrap();
    g.graph.tag_scene("t", b, T0).unwrap();
    g.graph.tag_scene("t", dup, T0).unwrap();
    g.graph.merge_entities("jazz music", "Jazz").unwrap();
    // Bo's fact now points at Jazz; user's duplicate folded into `a` with its ref.
    let mut t = objects(&g.graph, &["t"], 8);
    t.sort();
    assert_eq!(t, ["Jazz", "Jazz"]);
    assert!(entity_names(&g.graph, &["t"], 8).contains(&"Jazz".to_owned()));
    assert_eq!(objects(&g.graph, &["s"], 8), ["Jazz"]);
    assert_invariants(g.graph.path());
}

#[test]
fn a_version_three_graph_gains_the_scene_tables_and_keeps_its_facts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    {
        let mut g = GraphStore::open(&path).unwrap();
        g.distill_items(&[item(1, T0, "I live in Porto.")]).unwrap();
    }
    // Back to version 3 as an older Hearth left it.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(&format!("{DROP_V4} PRAGMA user_version = 3;"))
        .unwrap();
    drop(conn);
    assert_eq!(
        count(
            &peek(&path),
            "SELECT count(*) FROM sqlite_master WHERE name LIKE '%scene%'"
        ),
        0
    );

    let mut g = GraphStore::open(&path).unwrap();
    let conn = peek(&path);
    assert_eq!(
        count(&conn, "PRAGMA user_version"),
        hearth_graph::GRAPH_SCHEMA_VERSION
    );
    assert_eq!(
        count(
            &conn,
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN \
             ('scenes', 'scene_features', 'scene_relation_refs', 'scene_entity_refs', \
              'scene_evidence', 'turn_scenes')"
        ),
        6
    );
    assert_eq!(
        g.recall("where do I live", T0, 5).unwrap()[0].object,
        "Porto"
    );
    g.note_turn_scenes("turn-2", &["home"], T0).unwrap();
    g.distill_items(&[item(2, T0, "I like jazz.")]).unwrap();
    assert_eq!(
        g.recall_by_scene(&["home"], 8, T0).unwrap().relations[0].object,
        "jazz"
    );
    assert_invariants(&path);
}

#[test]
fn a_recurring_situation_stays_one_scene_however_many_one_off_words_its_turns_bring() {
    let mut g = graph();
    for n in 0..60 {
        let features = [
            f("chan", "cli"),
            f("part", "evening"),
            f("topic", "turn"),
            f("topic", "number"),
            f("topic", &format!("n{n}")),
        ];
        g.graph.enter_scene(&features, T0 + n).expect("enter");
    }
    let scenes = g.graph.scenes(100).expect("scenes");
    assert_eq!(scenes.len(), 1, "{scenes:?}");
    assert_eq!(strength(&g.graph, &scenes[0].key), Some(59));
    let stored: i64 = g_count(&g.graph, &scenes[0].key);
    assert!(
        stored <= hearth_graph::MAX_FEATURES as i64,
        "{stored} features stored"
    );
    // The trim keeps the most often seen: the four words every turn brought stay.
    let kept = g_features(&g.graph, &scenes[0].key);
    for recurring in ["chan:cli", "part:evening", "topic:turn", "topic:number"] {
        assert!(
            kept.iter().any(|k| k == recurring),
            "{recurring} dropped: {kept:?}"
        );
    }
    assert_eq!(kept.len(), hearth_graph::MAX_FEATURES);
}

fn g_features(g: &GraphStore, key: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(g.path()).expect("open");
    let mut stmt = conn
        .prepare("SELECT feature FROM scene_features WHERE scene_key = ?1")
        .expect("prepare");
    stmt.query_map([key], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("features")
}

fn g_count(g: &GraphStore, key: &str) -> i64 {
    let conn = rusqlite::Connection::open(g.path()).expect("open");
    conn.query_row(
        "SELECT count(*) FROM scene_features WHERE scene_key = ?1",
        [key],
        |r| r.get(0),
    )
    .expect("count")
}

#[test]
fn entering_a_turns_scenes_notes_them_for_that_turn_in_the_same_step() {
    let mut g = graph();
    let features = [f("chan", "cli"), f("part", "evening")];
    let entry = g
        .graph
        .enter_turn_scenes("req-1", &features, &["home/kitchen"], T0)
        .expect("enter");
    assert_eq!(entry.keys, ["home/kitchen"]);
    assert_eq!(g.graph.turn_scenes("req-1").expect("noted"), entry.keys);
    assert_eq!(strength(&g.graph, "home/kitchen"), Some(2));
    // A bad declared key enters and notes nothing.
    assert!(
        g.graph
            .enter_turn_scenes("req-2", &features, &["///"], T0)
            .is_err()
    );
    assert!(g.graph.turn_scenes("req-2").expect("read").is_empty());
}

#[test]
fn a_turns_tools_join_its_scenes_once_it_has_run() {
    let mut g = graph();
    let features = [f("chan", "cli"), f("part", "evening"), f("topic", "garden")];
    // Two sightings make the emergent scene; the third turn joins it. item(n) is said in
    // turn "turn-n".
    for turn in ["turn-1", "turn-2", "turn-3"] {
        g.graph.enter_turn_scenes(turn, &features, &[], T0).unwrap();
    }
    let entered = g.graph.turn_scenes("turn-3").unwrap();
    let auto = entered
        .iter()
        .find(|k| k.starts_with("auto:"))
        .expect("the turn joined an emergent scene")
        .clone();
    assert!(!g_features(&g.graph, &auto).contains(&"tool:calc".to_owned()));

    let added = g
        .graph
        .note_turn_tools(
            "turn-3",
            &["Web Search", "calc", "web search", "!!!"],
            T0 + 1,
        )
        .unwrap();
    assert_eq!(
        added,
        ["tool:web_search", "tool:calc"],
        "normalised, once, the unnamable left out"
    );
    let noted = g.graph.turn_scenes("turn-3").unwrap();
    for key in [auto.as_str(), "tool:web_search", "tool:calc"] {
        assert!(noted.iter().any(|k| k == key), "{key} in {noted:?}");
    }
    // The situation learned its tools; each tool's own scene only its own feature.
    let learned = g_features(&g.graph, &auto);
    assert!(
        learned.contains(&"tool:web_search".to_owned()),
        "{learned:?}"
    );
    assert!(learned.contains(&"tool:calc".to_owned()), "{learned:?}");
    assert_eq!(g_features(&g.graph, "tool:calc"), ["tool:calc"]);
    let calc = strength(&g.graph, "tool:calc").expect("declared");

    // A fact said in that turn is found through the tool's scene.
    g.graph
        .distill_items(&[item(3, T0, "I live in Zorblaxton.")])
        .unwrap();
    assert_eq!(objects(&g.graph, &["tool:calc"], 8), ["Zorblaxton"]);
    assert_eq!(objects(&g.graph, &["tool:web_search"], 8), ["Zorblaxton"]);

    // A turn that entered no scene (scene policy "none", or aged out) gets none.
    assert!(
        g.graph
            .note_turn_tools("turn-9", &["calc"], T0 + 2)
            .unwrap()
            .is_empty()
    );
    assert!(g.graph.turn_scenes("turn-9").unwrap().is_empty());
    assert_eq!(strength(&g.graph, "tool:calc"), Some(calc));
    assert_invariants(g.graph.path());
}
