//! `@modelcontextprotocol/server-everything` over stdio: list, call, media and structured
//! results, progress, a long call cancelled by a stop, and its post-initialize list change.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hearth_mcp::{McpServerConfig, Watch};
use hearth_stages::HandlerError;
use hearth_testkit::within;
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::{LIMIT, Rig, ctx, npm_server, plain};

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
        let seen = Mutex::new(Vec::new());
        let progress = |p: &Value| seen.lock().push(p["progress"].as_f64().unwrap_or(-1.0));
        let watch = Watch {
            cancelled: &|| false,
            deadline: Instant::now() + Duration::from_secs(20),
            progress: Some(&progress),
        };
        let result = client
            .call_tool(
                "trigger-long-running-operation",
                &json!({"duration": 0.6, "steps": 3}),
                &watch,
            )
            .expect("completes");
        assert!(
            result["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("completed"))
        );
        assert_eq!(*seen.lock(), [1.0, 2.0, 3.0]);
    });
}

#[test]
fn a_stop_cancels_a_long_call_and_the_server_stays_usable() {
    within(LIMIT, || {
        let rig = Rig::start();
        rig.up(everything());
        let stop = Arc::new(AtomicBool::new(false));
        let call = ctx(&stop, Duration::from_secs(60));
        let tools = Arc::clone(&rig.tools);
        let started = Instant::now();
        let long = std::thread::spawn(move || {
            tools.execute(
                &call,
                "ev_trigger-long-running-operation",
                &json!({"duration": 30, "steps": 30}),
            )
        });
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, Ordering::SeqCst);
        let outcome = long.join().expect("the call thread");
        assert_eq!(outcome, Err(HandlerError::Cancelled));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "cancelled at once: {:?}",
            started.elapsed()
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
