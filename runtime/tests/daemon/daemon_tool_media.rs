//! Media a tool brings (SPEC §3.5): a Lua plugin's tool returns a picture as a content block
//! with a data URL. The picture is stored in the media store; the tool message the model reads
//! holds its marker line, never its base64; a source that takes images then gets the picture
//! itself, read back from the store, in a user message of its own after the tool message, and
//! a source that does not gets no such message.

use crate::harness::{Daemon, install_lua, messages, source, stderr, within};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hearth_testkit::llm_server::{LlmServer, Script, Seen};
use serde_json::{Value, json};
use std::time::Duration;

/// Stands for a screenshot: the bytes only have to come back exactly.
const SCREEN: &[u8] = b"\x89PNG\r\n\x1a\n a screenshot of the desktop";

fn screen_lua() -> String {
    format!(
        r#"
sdk.tool{{
  name = "screen_shot",
  description = "Take a screenshot of the desktop.",
  handler = function()
    return {{
      {{ type = "text", text = "the desktop:" }},
      {{ type = "image_url", image_url = {{ url = "data:image/png;base64,{}" }} }},
    }}
  end,
}}
"#,
        STANDARD.encode(SCREEN)
    )
}

/// The second request of a turn in which the model calls `screen_shot` once, against a daemon
/// whose source takes images or not.
fn after_the_tool(vision: bool) -> Seen {
    let llm = LlmServer::start();
    llm.push(Script::Tools(vec![("screen_shot".into(), json!({}))]));
    llm.push(Script::text("A desktop."));
    let toml = format!(
        "memory_model = false\n{}vision = {vision}\n",
        source("llm", &llm.base_url, 0)
    );
    let daemon = Daemon::start_with(&toml, |dir| install_lua(dir, "screen", &screen_lua(), &[]));
    let out = daemon.run(&["send", "what is on my screen?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    llm.wait_requests(2, Duration::from_secs(10))[1].clone()
}

/// Where the tool message is among `all`.
fn tool_message(all: &[Value]) -> usize {
    all.iter()
        .position(|m| m["role"] == "tool")
        .expect("the tool message")
}

#[test]
fn a_tools_picture_is_stored_marked_and_shown_only_to_a_source_that_sees() {
    within(Duration::from_secs(90), || {
        let digest = hearth_media::digest_of(SCREEN);
        let seeing = after_the_tool(true);
        let all = messages(&seeing);
        let at = tool_message(&all);
        let tool = all[at]["content"].as_str().expect("text");
        assert!(
            tool.starts_with("the desktop:\n[image image/png, ")
                && tool.contains(&format!("sha256:{}", &digest[..12])),
            "{tool}"
        );
        let shown = &all[at + 1];
        assert_eq!(shown["role"], "user", "{all:#?}");
        assert_eq!(
            shown["content"][0]["text"],
            "[media from screen_shot follows]"
        );
        assert_eq!(
            shown["content"][1]["image_url"]["url"],
            format!("data:image/png;base64,{}", STANDARD.encode(SCREEN)),
            "the stored bytes, read back"
        );
        assert!(shown.get("media").is_none() && shown.get("media_only").is_none());

        let blind = after_the_tool(false);
        let all = messages(&blind);
        let at = tool_message(&all);
        assert!(
            all[at]["content"]
                .as_str()
                .is_some_and(|t| t.contains("[image image/png"))
        );
        assert!(
            !all.iter()
                .any(|m| m["content"].to_string().contains("media from")),
            "{all:#?}"
        );
        assert!(
            !blind.body.to_string().contains(&STANDARD.encode(SCREEN)),
            "no base64 reaches a source that does not see"
        );
    });
}

/// The reference MCP server's `get-tiny-image` under a real daemon: its picture is stored and
/// the model reads its marker line, not its base64, in the tool's result.
#[test]
fn an_mcp_servers_image_is_stored_and_marked() {
    within(Duration::from_secs(90), || {
        let entry = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
            "../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        );
        assert!(
            entry.exists(),
            "{} is missing: run `make setup`",
            entry.display()
        );
        let llm = LlmServer::start();
        let toml = format!(
            "memory_model = false\n{}[[mcp]]\nname = \"ev\"\ncommand = \"node\"\nargs = [\"{}\", \"stdio\"]\n",
            source("llm", &llm.base_url, 0),
            entry.display()
        );
        let daemon = Daemon::start(&toml);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let out = daemon.run(&["mcp", "list"]);
            if crate::harness::stdout(&out).contains("ev_get-tiny-image") {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the mcp server never listed its tools"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        llm.push(Script::Tools(vec![("ev_get-tiny-image".into(), json!({}))]));
        llm.push(Script::text("A tiny image."));
        let out = daemon.run(&["send", "show me the tiny image"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let seen = &llm.wait_requests(2, Duration::from_secs(10))[1];
        let all = messages(seen);
        let tool = all[tool_message(&all)]["content"].to_string();
        assert!(tool.contains("[image image/png, "), "{tool}");
        assert!(!tool.contains("base64"), "{tool}");
    });
}
