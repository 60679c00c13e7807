//! A Lua script plugin under a real `hearthd`: installed as a directory with `plugin.json`
//! whose entry is `main.lua`, its tool offered to the model and called through the kernel.

use crate::harness::{Daemon, source, stderr, stdout, within};
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::json;
use std::time::Duration;

const MAIN_LUA: &str = r#"
sdk.tool{
  name = "dice_roll",
  description = "Roll a die with the given number of sides.",
  parameters = { type = "object", properties = { sides = { type = "integer" } } },
  handler = function(args) return { rolled = args.sides, by = "lua" } end,
}
"#;

#[test]
fn a_lua_plugins_tool_is_offered_and_called_through_the_kernel() {
    within(Duration::from_secs(90), || {
        let llm = LlmServer::start();
        llm.push(Script::Tools(vec![(
            "dice_roll".into(),
            json!({"sides": 20}),
        )]));
        llm.push(Script::text("rolled"));
        let daemon = Daemon::start_with(&source("llm", &llm.base_url, 0), |dir| {
            let plugin = dir.join("plugins/dice");
            std::fs::create_dir_all(&plugin).expect("plugin dir");
            std::fs::write(plugin.join("main.lua"), MAIN_LUA).expect("script");
            std::fs::write(
                plugin.join("plugin.json"),
                r#"{"name":"dice","version":"1.0","entry":"main.lua"}"#,
            )
            .expect("manifest");
        });
        let out = daemon.run(&["send", "roll a d20"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("rolled"), "{}", stdout(&out));
        let seen = llm.wait_requests(2, Duration::from_secs(10));
        let offered: Vec<&str> = seen[0].body["tools"]
            .as_array()
            .expect("tools offered")
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(offered.contains(&"dice_roll"), "{offered:?}");
        let messages = seen[1].body["messages"].as_array().expect("messages");
        let result = messages
            .iter()
            .find(|m| m["role"] == "tool")
            .expect("the tool result goes back to the model");
        let content = result["content"].as_str().unwrap_or_default();
        assert!(
            content.contains("lua") && content.contains("20"),
            "{result}"
        );
    });
}
