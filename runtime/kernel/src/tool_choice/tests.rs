use super::*;
use hearth_memory::ToolOutput;
use hearth_stages::ToolDef;

fn candidates(core: &[&str], rest: usize) -> Vec<Candidate> {
    let core = core.iter().map(|n| Candidate {
        name: (*n).to_owned(),
        core: true,
    });
    let rest = (0..rest).map(|i| Candidate {
        name: format!("t{i}"),
        core: false,
    });
    core.chain(rest).collect()
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[test]
fn a_handful_of_tools_is_offered_whole_without_the_search() {
    let all = candidates(&["send"], FULL_SET_MAX - 1);
    let mut with_search = all.clone();
    with_search.push(Candidate {
        name: TOOL_SEARCH.into(),
        core: true,
    });
    let offered = choose(&with_search, &[], &[]);
    assert_eq!(offered.len(), FULL_SET_MAX);
    assert!(!offered.iter().any(|n| n == TOOL_SEARCH));
}

#[test]
fn past_a_handful_core_nearest_and_used_tools_are_offered_in_registration_order() {
    let all = candidates(&["send"], 20);
    let ranking = owned(&["t9", "t3", "t15", "t0", "t11", "t7", "t1"]);
    let offered = choose(&all, &ranking, &owned(&["t19"]));
    assert_eq!(
        offered,
        owned(&["send", "t0", "t3", "t9", "t11", "t15", "t19", TOOL_SEARCH])
    );
}

#[test]
fn a_core_name_in_the_ranking_does_not_take_a_relevant_slot() {
    let all = candidates(&["send"], 20);
    let ranking = owned(&["send", "t1", "t2", "t3", "t4", "t5", "t6"]);
    let offered = choose(&all, &ranking, &[]);
    assert_eq!(
        offered,
        owned(&["send", "t1", "t2", "t3", "t4", "t5", TOOL_SEARCH])
    );
}

#[test]
fn growing_appends_only_new_names_and_keeps_the_prefix() {
    let mut chosen = owned(&["a", "b"]);
    assert!(!grow(&mut chosen, owned(&["b", "a"])));
    assert!(grow(&mut chosen, owned(&["c", "a", "d"])));
    assert_eq!(chosen, owned(&["a", "b", "c", "d"]));
}

#[test]
fn found_tools_are_read_from_search_results_only() {
    let results = vec![
        ToolOutput {
            name: TOOL_SEARCH.into(),
            output: r#"{"tools":[{"name":"x"},{"name":"y"}]}"#.into(),
        },
        ToolOutput {
            name: "other".into(),
            output: r#"{"tools":[{"name":"z"}]}"#.into(),
        },
        ToolOutput {
            name: TOOL_SEARCH.into(),
            output: "not json".into(),
        },
    ];
    assert_eq!(found_tools(&results), owned(&["x", "y"]));
}

fn doc(name: &str, description: &str) -> ToolDoc {
    ToolDoc::of(&ToolDef {
        name: name.into(),
        description: description.into(),
        ..ToolDef::default()
    })
}

#[test]
fn without_a_model_tools_rank_by_shared_words() {
    let docs = vec![
        doc("music_play", "Play a song on the speakers."),
        doc("weather_now", "Current weather for a city."),
        doc("timer_start", "Start a countdown timer."),
    ];
    let index = ToolIndex::new();
    assert!(!index.has_model());
    assert_eq!(
        index.rank("what is the weather in Oslo", &docs)[0],
        "weather_now"
    );
    assert_eq!(
        index.rank("明天天气怎么样 weather", &docs)[0],
        "weather_now"
    );
    assert_eq!(index.rank("start a timer", &docs)[0], "timer_start");
}

#[test]
fn a_changed_description_is_ranked_by_its_new_words() {
    let index = ToolIndex::new();
    let before = vec![
        doc("helper", "Play a song."),
        doc("other", "Water the garden."),
    ];
    assert_eq!(index.rank("water the garden", &before)[0], "other");
    // Same names, the descriptions swapped: the kept terms of the old texts must not count.
    let after = vec![
        doc("helper", "Water the garden."),
        doc("other", "Play a song."),
    ];
    assert_eq!(index.rank("water the garden", &after)[0], "helper");
}
