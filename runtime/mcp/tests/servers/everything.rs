//! `@modelcontextprotocol/server-everything` over stdio: list, call, media and structured
//! results, progress, a long call cancelled by a stop, and its post-initialize list change.

use std::time::Duration;

use hearth_mcp::McpServerConfig;
use hearth_stages::HandlerError;
use hearth_testkit::within;
use serde_json::json;

use crate::{LIMIT, Rig, npm_server, plain, progress_of, stopped_long_call};

fn everything() -> McpServerConfig {
    McpServerConfig::stdio("ev", "node", &[&npm_server("server-everything"), "stdio"])
}

#[test]
fn lists_and_calls_with_text_media_and_structured_results() {
    within(LIMIT, || {
        let rig = Rig::start();
        let report = rig.up(everything());
        assert!(report.protocol_version.is_some());
        for tool in [
            "ev_echo",
            "ev_get-sum",
            "ev_get-tiny-image",
            "ev_trigger-long-running-operation",
        ] {
            assert!(
                rig.tools.contains(tool),
                "{tool} missing from {:?}",
                report.tools
            );
        }
        let entry = rig
            .tools
            .entries()
            .into_iter()
            .find(|e| e.name == "ev_echo")
            .expect("echo");
        assert_eq!(entry.owner, "mcp:ev");
        let echo = rig
            .tools
            .execute(&plain(), "ev_echo", &json!({"message": "hi"}));
        assert_eq!(echo, Ok(json!("Echo: hi")));
        let sum = rig
            .tools
            .execute(&plain(), "ev_get-sum", &json!({"a": 2, "b": 40}))
            .expect("sum");
        assert!(sum.as_str().expect("text").contains("42"), "{sum}");
        let image = rig
            .tools
            .execute(&plain(), "ev_get-tiny-image", &json!({}))
            .expect("image");
        let blocks = image.as_array().expect("media blocks");
        assert!(
            blocks.iter().any(|b| b["type"] == "image_url"
                && b["image_url"]["url"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("data:image/png;base64,"))),
            "{image}"
        );
        let structured = rig
            .tools
            .execute(
                &plain(),
                "ev_get-structured-content",
                &json!({"location": "New York"}),
            )
            .expect("structured");
        assert!(structured["structured"].is_object(), "{structured}");
        let bad = rig
            .tools
            .execute(&plain(), "ev_get-sum", &json!({"a": "x"}));
        assert!(
            bad.is_err(),
            "a schema violation is the tool's error: {bad:?}"
        );
        assert!(report.resources > 0, "resources are listed: {report:?}");
    });
}

#[test]
fn progress_reaches_the_caller() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.up(everything());
        let client = rig
            .servers
            .get("ev")
            .and_then(|s| s.client())
            .expect("connected");
        assert_eq!(progress_of(&client, 0.6, 3), [json!(1), json!(2), json!(3)]);
    });
}

#[test]
fn a_stop_cancels_a_long_call_and_the_server_stays_usable() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.up(everything());
        let (outcome, took) = stopped_long_call(&rig.tools, "ev", Duration::from_millis(500));
        assert_eq!(outcome, Err(HandlerError::Cancelled));
        assert!(
            took < Duration::from_secs(5),
            "cancelled at once: {:?}",
            took
        );
        let echo = rig
            .tools
            .execute(&plain(), "ev_echo", &json!({"message": "still here"}));
        assert_eq!(echo, Ok(json!("Echo: still here")));
        let conn = rig
            .servers
            .get("ev")
            .and_then(|s| s.client())
            .expect("connected");
        assert_eq!(conn.connection().bad_frames(), 0);
    });
}
