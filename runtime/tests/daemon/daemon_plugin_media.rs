//! A plugin process starts a turn that brings a picture (`io.injectMedia`, the original's
//! `InjectInputMedia`), under a real `hearthd`: the call is answered once the input is
//! journaled, the picture is kept in the media store, and a source that takes images gets its
//! bytes with that turn's message. A picture that cannot be stored refuses the injection with
//! the reason, as the call's error, and no turn runs for it.

use crate::daemon_plugins::{plugin_dir, sdk_binary, wait_state};
use crate::harness::{Daemon, messages, source, stderr, tool_results_in, within};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hearth_testkit::llm_server::{LlmServer, Script};
use serde_json::json;
use std::time::Duration;

/// Stands for a doorbell camera's frame: the bytes only have to come back exactly.
const FRAME: &[u8] = b"\x89PNG\r\n\x1a\n a visitor at the front door";

/// A daemon with the conformance plugin running and a source that takes images.
fn start() -> (LlmServer, Daemon) {
    let llm = LlmServer::start();
    let conformance = sdk_binary("hearth-plugin-conformance");
    let toml = format!(
        "memory_model = false\n{}vision = true\n",
        source("llm", &llm.base_url, 0)
    );
    let daemon = Daemon::start_with(&toml, |dir| {
        plugin_dir(&dir.join("plugins"), "conformance", &conformance);
    });
    wait_state(&daemon, "conformance", "running");
    (llm, daemon)
}

#[test]
fn a_plugins_picture_reaches_the_model_with_the_turn_it_starts() {
    within(Duration::from_secs(90), || {
        let (llm, daemon) = start();

        let url = format!("data:image/png;base64,{}", STANDARD.encode(FRAME));
        let inject = |text: &str, url: &str| {
            (
                "call".to_owned(),
                json!({"method": "io.injectMedia", "params": {
                    "channel": "camera", "text": text,
                    "blocks": [{"type": "image_url", "image_url": {"url": url}}],
                }}),
            )
        };
        let asked = "check the door camera";
        llm.push_for(
            asked,
            Script::Tools(vec![
                inject("who is at the door?", &url),
                inject("a broken frame", "data:image/png;base64,%%%"),
            ]),
        );
        llm.push_for(asked, Script::text("Checked."));
        llm.push_for("who is at the door?", Script::text("A visitor."));
        let out = daemon.run(&["send", asked]);
        assert!(out.status.success(), "{}", stderr(&out));
        // The injected turn may already have asked the model: read the injecting turn's own
        // second request, not the last one.
        let seen = llm.wait_requests(2, Duration::from_secs(20));
        let results = tool_results_in(&seen[1]);
        assert_eq!(results[0], json!({}), "{results:?}");
        let refused = results[1].as_str().unwrap_or_default();
        assert!(
            refused.contains("not accepted") && refused.contains("base64"),
            "{results:?}"
        );

        // The injected turn runs after the one that injected it.
        let seen = llm.wait_requests(3, Duration::from_secs(20));
        let injected = messages(&seen[2]);
        let user = injected
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .expect("the injected message");
        assert!(
            user["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("who is at the door?\n[image image/png")),
            "{user}"
        );
        assert_eq!(
            user["content"][1]["image_url"]["url"],
            url.as_str(),
            "{user}"
        );
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            llm.seen().len(),
            3,
            "no turn runs for the refused injection"
        );

        let digest = hearth_media::digest_of(FRAME);
        let out = daemon.run(&["memory", "media", &digest[..12], "--output", "-"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(out.stdout, FRAME, "the stored frame, read back");
    });
}

/// `io.setToolBlocks` from inside a plugin's tool (the conformance plugin's `call` tool makes
/// the call with its own call's ctx): the picture joins that tool's result, so it is stored,
/// the tool message holds its marker line and a source that takes images sees the bytes.
#[test]
fn blocks_a_plugins_tool_sets_join_its_result() {
    within(Duration::from_secs(90), || {
        let (llm, daemon) = start();
        let url = format!("data:image/png;base64,{}", STANDARD.encode(FRAME));
        llm.push(Script::Tools(vec![(
            "call".to_owned(),
            json!({"method": "io.setToolBlocks", "params": {
                "blocks": [{"type": "image_url", "image_url": {"url": url}}],
            }}),
        )]));
        llm.push(Script::text("A visitor."));
        let out = daemon.run(&["send", "show me the door"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let all = messages(&llm.wait_requests(2, Duration::from_secs(10))[1]);
        let at = all
            .iter()
            .position(|m| m["role"] == "tool")
            .expect("the tool message");
        let tool = all[at]["content"].as_str().unwrap_or_default();
        let digest = hearth_media::digest_of(FRAME);
        assert!(
            tool.starts_with("{}\n[image image/png, ")
                && tool.contains(&format!("sha256:{}", &digest[..12])),
            "{tool}"
        );
        assert_eq!(
            all[at + 1]["content"][1]["image_url"]["url"],
            url.as_str(),
            "{all:#?}"
        );
    });
}

/// `io.injectInputSync` from inside a plugin's own tool call would wait for the turn that
/// waits for the tool: it is refused at once, saying what to use instead, and the turn goes on
/// long before the tool's timeout.
#[test]
fn a_sync_injection_from_inside_a_tool_call_is_refused_at_once() {
    within(Duration::from_secs(90), || {
        let (llm, daemon) = start();
        llm.push(Script::Tools(vec![(
            "call".to_owned(),
            json!({"method": "io.injectInputSync", "params": {"text": "are you there?"}}),
        )]));
        llm.push(Script::text("Done."));
        let started = std::time::Instant::now();
        let out = daemon.run(&["send", "ask yourself"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "answered without waiting for the tool's timeout: {:?}",
            started.elapsed()
        );
        let seen = llm.wait_requests(2, Duration::from_secs(10));
        let results = tool_results_in(&seen[1]);
        let refused = results[0].as_str().unwrap_or_default();
        assert!(
            refused.contains("inside a running tool call") && refused.contains("io.injectText"),
            "{results:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(llm.seen().len(), 2, "nothing was injected");
    });
}
