//! Forgetting a fact reaches every place memory kept its words: the turn it was told in (the
//! user's sentence, and the value in the reply), the turns a remembered entry told it in, and
//! the replies of later turns memory showed it to — by the input's block, by a memory tool the
//! model called, or by the recall a tool declares.

use crate::daemon_graph::{
    config, fill, hit, last_system, rows_saying, search, send, send_from, until_both,
    until_gone_from_bytes,
};
use crate::harness::{Daemon, install_lua, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use std::time::Duration;

/// The ids (`c45`, `w12`) of the remembered turns `hearth memory recall` lists for `query`
/// whose text holds `words`.
pub(crate) fn entries(daemon: &Daemon, query: &str, words: &str) -> Vec<String> {
    let out = daemon.run(&["memory", "recall", query]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .filter(|l| l.contains(words))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn a_remembered_entry_forgotten_from_the_cli_takes_the_fact_only_it_told() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        send(&daemon, "I live in Zorblaxton.");
        fill(&daemon, 8);
        until_both(&daemon, "where do I live", "Zorblaxton", "Zorblaxton");

        // Recall lists the turn once; forgetting that entry takes the whole turn (its input
        // archived alone, and with its reply when that was archived too) and the fact it told.
        let ids = entries(&daemon, "Zorblaxton", "Zorblaxton");
        assert_eq!(ids.len(), 1, "{ids:?}");
        assert!(ids[0].starts_with('c'), "{ids:?}");
        let out = daemon.run(&["memory", "forget", &ids[0]]);
        assert!(out.status.success(), "{}", stderr(&out));
        let said = stdout(&out);
        assert!(
            said.contains("user lives_in Zorblaxton (only that turn told it)"),
            "{said}"
        );
        assert!(said.contains("(the same turn)"), "{said}");
        assert!(
            search(&daemon, "where do I live")
                .iter()
                .all(|h| h["object"] != "Zorblaxton")
        );
        assert!(entries(&daemon, "Zorblaxton", "Zorblaxton").is_empty());
        // Nothing of the turn is left (window, journal) to archive and distil again.
        assert_eq!(rows_saying(&daemon, "I live in Zorblaxton"), 0);
        fill(&daemon, 8);
        std::thread::sleep(Duration::from_millis(2_500));
        assert!(
            search(&daemon, "where do I live")
                .iter()
                .all(|h| h["object"] != "Zorblaxton")
        );

        let unknown = daemon.run(&["memory", "forget", "c999999"]);
        assert!(!unknown.status.success());
        assert!(
            stderr(&unknown).contains("no remembered turn c999999"),
            "{}",
            stderr(&unknown)
        );
        let bad = daemon.run(&["memory", "forget", "cX"]);
        assert!(!bad.status.success());
        assert!(
            stderr(&bad).contains("names nothing to forget"),
            "{}",
            stderr(&bad)
        );
    });
}

#[test]
fn a_fact_the_model_committed_forgotten_leaves_the_turn_it_was_told_in() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        // The model stores the fact in its own words; the user's words are not its sentence.
        server.push(Script::Tools(vec![(
            "memory_commit".to_owned(),
            serde_json::json!({
                "subject": "user", "predicate": "lives_in", "object": "Quuxford",
                "sentence": "The user is based in Quuxford"
            }),
        )]));
        server.push(Script::text("Noted: quuxford it is."));
        send(
            &daemon,
            "Please note that these days I am based in Quuxford.",
        );
        assert!(rows_saying(&daemon, "based in Quuxford") > 0);
        let hits = search(&daemon, "where do I live");
        let fact = hit(&hits, "Quuxford");
        let why = daemon.run(&["memory", "why", fact["id"].as_str().unwrap()]);
        assert!(
            stdout(&why).contains("The user is based in Quuxford"),
            "{}",
            stdout(&why)
        );

        let gone = daemon.run(&["memory", "forget", fact["id"].as_str().unwrap()]);
        assert!(gone.status.success(), "{}", stderr(&gone));
        // The turn it was committed in keeps neither the user's mention nor the reply's.
        until_gone_from_bytes(&daemon, "Quuxford");
        assert!(rows_saying(&daemon, "these days I am based in [forgotten]") > 0);
    });
}

/// Something said a moment ago, still in the working window, is found with its `w` id and
/// taken back whole: the turn, the journal's words, and the fact the model committed in it.
#[test]
fn a_turn_just_said_is_found_and_taken_back_with_what_was_committed_in_it() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        send(&daemon, "What is a good soup for a cold day?");
        server.push(Script::Tools(vec![(
            "memory_commit".to_owned(),
            serde_json::json!({"subject": "user", "predicate": "banks_at", "object": "Quuxbank"}),
        )]));
        server.push(Script::text("Noted: Quuxbank, PIN 4711."));
        send(&daemon, "My bank is Quuxbank and my PIN is 4711.");
        assert!(!search(&daemon, "Quuxbank").is_empty(), "committed at once");

        let recall = daemon.run(&["memory", "recall", "my bank PIN"]);
        assert!(recall.status.success(), "{}", stderr(&recall));
        let listed = stdout(&recall);
        let line = listed
            .lines()
            .find(|l| l.contains("4711") && l.ends_with("(recent)"))
            .unwrap_or_else(|| panic!("the turn is listed as recent: {listed}"));
        let id = line.split_whitespace().next().unwrap().to_owned();
        assert!(id.starts_with('w'), "{line}");

        let gone = daemon.run(&["memory", "forget", &id]);
        assert!(gone.status.success(), "{}", stderr(&gone));
        let said = stdout(&gone);
        assert!(said.starts_with(&format!("forgot {id}")), "{said}");
        assert!(
            said.contains("Quuxbank"),
            "the committed fact goes too: {said}"
        );
        until_gone_from_bytes(&daemon, "4711");
        assert_eq!(rows_saying(&daemon, "Quuxbank"), 0);
        assert!(search(&daemon, "Quuxbank").is_empty());
        assert!(
            rows_saying(&daemon, "soup for a cold day") > 0,
            "the other turn stays"
        );
        let again = daemon.run(&["memory", "forget", &id]);
        assert!(!again.status.success(), "nothing left to forget");
        assert!(
            stderr(&again).contains("no remembered turn"),
            "{}",
            stderr(&again)
        );
    });
}

/// The model, asked to forget what was just said, finds the turn with `memory_recall` (its `w`
/// id among the recent turns) and forgets it with `memory_forget`.
#[test]
fn the_model_takes_back_a_turn_just_said_by_its_recent_id() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        send(&daemon, "My locker code is 8642.");
        let listed = stdout(&daemon.run(&["memory", "recall", "locker code"]));
        let id = listed
            .lines()
            .find(|l| l.contains("8642"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("listed: {listed}"))
            .to_owned();
        server.push(Script::Tools(vec![(
            "memory_recall".to_owned(),
            serde_json::json!({"query": "locker code"}),
        )]));
        server.push(Script::Tools(vec![(
            "memory_forget".to_owned(),
            serde_json::json!({"id": id}),
        )]));
        server.push(Script::text("Done, it is forgotten."));
        send(&daemon, "Please forget what I told you about my locker.");
        let seen = server.seen();
        let recalled = seen[seen.len() - 2].body["messages"].to_string();
        assert!(
            recalled.contains(&format!("\\\"id\\\":\\\"{id}\\\"")),
            "memory_recall lists the turn with its id: {recalled}"
        );
        let answered = seen.last().unwrap().body["messages"].to_string();
        assert!(answered.contains("forgotten"), "{answered}");
        until_gone_from_bytes(&daemon, "8642");
    });
}

#[test]
fn a_forgotten_fact_leaves_the_replies_it_was_shown_for() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start(&config(&server.base_url));
        send(&daemon, "I live in Quuxford.");
        fill(&daemon, 8);
        let hits = until_both(&daemon, "where do I live", "Quuxford", "Quuxford");
        let id = hit(&hits, "Quuxford")["id"].as_str().unwrap().to_owned();

        // A later turn is shown the fact, and its reply repeats it in its own words.
        server.push(Script::text("You live in quuxford, as you told me."));
        send(&daemon, "Where do I live these days?");
        let system = last_system(&server);
        assert!(system.contains(&format!("[{id}]")), "{system}");
        assert!(rows_saying(&daemon, "in quuxford, as you told me") > 0);
        // On another channel, whose prompt the fact's scene does not reach, the model fetches
        // the fact itself and repeats it. Its tool's output (the facts, sentences included) is
        // not kept in memory: the tool is memory's own (`no_memory`).
        server.push(Script::Tools(vec![(
            "memory_recall".to_owned(),
            serde_json::json!({"query": "where do I live"}),
        )]));
        server.push(Script::text("Quuxford has a fine library, by the way."));
        send_from(&daemon, "web", "Any ideas for a rainy afternoon?");
        let asked = &server.seen()[server.seen().len() - 2].body;
        assert!(
            !asked["messages"].to_string().contains(&format!("[{id}]")),
            "memory did not show it: the model fetched it"
        );
        assert!(rows_saying(&daemon, "Quuxford has a fine library") > 0);

        let gone = daemon.run(&["memory", "forget", &id]);
        assert!(gone.status.success(), "{}", stderr(&gone));
        until_gone_from_bytes(&daemon, "Quuxford");
        assert!(rows_saying(&daemon, "You live in [forgotten], as you told me.") > 0);
        assert!(rows_saying(&daemon, "[forgotten] has a fine library") > 0);
    });
}

/// A Lua tool that declares `recall_policy = "auto"`: its output is a query of memory, and
/// what memory finds for it is shown to the model in a recall message.
const FORECAST_LUA: &str = r#"
sdk.tool{
  name = "home_forecast",
  description = "The weather forecast where the user lives.",
  parameters = { type = "object", properties = {} },
  recall_policy = "auto",
  handler = function(args)
    return "forecast for Quuxford: rain all afternoon"
  end,
}
"#;

const TOLD: &str = "I live in Quuxford. This spring my neighbours and I planted tomatoes, \
    beans, courgettes, lettuce and three kinds of basil along the old stone wall behind the \
    bakery, and every Saturday morning we trade seedlings, compost tips and jars of jam.";

#[test]
fn a_forgotten_fact_leaves_a_reply_a_tools_recall_showed_it_to() {
    within(Duration::from_secs(120), || {
        let server = LlmServer::start();
        let daemon = Daemon::start_with(&config(&server.base_url), |dir| {
            install_lua(dir, "forecast", FORECAST_LUA, &[])
        });
        // Told among many other words, so the turn itself is too far from the tool's output
        // to be recalled with the fact: only the fact shows that reply what it repeats.
        send(&daemon, TOLD);
        fill(&daemon, 8);
        let hits = until_both(&daemon, "where do I live", "Quuxford", "Quuxford");
        let id = hit(&hits, "Quuxford")["id"].as_str().unwrap().to_owned();

        // On a channel whose prompt the fact does not reach, the tool's recall shows it.
        server.push(Script::Tools(vec![(
            "home_forecast".to_owned(),
            serde_json::json!({}),
        )]));
        server.push(Script::text(
            "Rain at home today, so a quuxford museum it is.",
        ));
        send_from(&daemon, "web", "Any ideas for a rainy afternoon?");
        let seen = server.seen();
        let first = seen[seen.len() - 2].body["messages"].to_string();
        assert!(
            !first.contains(&format!("[{id}]")),
            "not in the input's block"
        );
        let recall = last_system(&server);
        assert!(
            recall.contains("Memory recall:") && recall.contains(&format!("[{id}]")),
            "{recall}"
        );
        assert!(
            !recall.contains("seedlings"),
            "the turn is not recalled: {recall}"
        );
        assert!(rows_saying(&daemon, "so a quuxford museum it is") > 0);

        let gone = daemon.run(&["memory", "forget", &id]);
        assert!(gone.status.success(), "{}", stderr(&gone));
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while rows_saying(&daemon, "so a [forgotten] museum it is") == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the reply keeps the value: {} rows",
                rows_saying(&daemon, "so a quuxford museum it is")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    });
}
