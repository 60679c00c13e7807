//! The tool side of the handler contract: the call context reaches the tool, typed errors come
//! back unchanged, a cancellable tool sees a stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hearth_stages::{CallContext, Caller, Cancel, HandlerError, ToolDef, ToolRegistry, Trust};
use serde_json::{Value, json};

use crate::within;

fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        ..ToolDef::default()
    }
}

#[test]
fn every_error_kind_comes_back_as_the_tool_returned_it() {
    let reg = ToolRegistry::new();
    let kinds = [
        HandlerError::InvalidArguments("city is required".into()),
        HandlerError::Denied("external callers may not".into()),
        HandlerError::TimedOut,
        HandlerError::Cancelled,
        HandlerError::Unavailable("no network".into()),
        HandlerError::Failed("exit code 2".into()),
    ];
    for (i, err) in kinds.iter().enumerate() {
        let err = err.clone();
        reg.register(def(&format!("t_{i}")), move |_: &CallContext, _: &Value| {
            Err(err.clone())
        })
        .expect("valid tool");
    }
    let call = CallContext::kernel(Duration::from_secs(60));
    for (i, err) in kinds.into_iter().enumerate() {
        assert_eq!(reg.execute(&call, &format!("t_{i}"), &json!({})), Err(err));
    }
}

#[test]
fn the_tool_sees_task_caller_trust_and_deadline() {
    let reg = ToolRegistry::new();
    reg.register(def("who_am"), |call: &CallContext, _: &Value| {
        let caller = call.caller();
        Ok(json!({
            "task": call.task_id(),
            "source": caller.source,
            "plugin": caller.plugin,
            "trust": call.trust().as_str(),
            "remaining_ms": call.remaining().as_millis() as u64,
        }))
    })
    .expect("valid tool");
    let call = CallContext::new(
        42,
        Caller::new("qq", Trust::External).with_plugin("qqbridge"),
        Cancel::never(),
        Instant::now() + Duration::from_secs(2),
    );
    let out = reg.execute(&call, "who_am", &json!({})).expect("runs");
    assert_eq!(out["task"], 42);
    assert_eq!(out["source"], "qq");
    assert_eq!(out["plugin"], "qqbridge");
    assert_eq!(out["trust"], "external");
    let left = out["remaining_ms"].as_u64().expect("a number");
    assert!(left > 1000 && left <= 2000, "{left}");
}

#[test]
fn a_stopped_or_expired_call_does_not_start_the_tool() {
    let reg = ToolRegistry::new();
    let started = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&started);
    reg.register(def("side_effect"), move |_: &CallContext, _: &Value| {
        flag.store(true, Ordering::SeqCst);
        Ok(Value::Null)
    })
    .expect("valid tool");
    let stop = Arc::new(AtomicBool::new(true));
    let far = Instant::now() + Duration::from_secs(60);
    let stopped = CallContext::new(1, Caller::kernel(), Cancel::flag(stop), far);
    assert_eq!(
        reg.execute(&stopped, "side_effect", &json!({})),
        Err(HandlerError::Cancelled)
    );
    let expired = CallContext::new(1, Caller::kernel(), Cancel::never(), Instant::now());
    assert_eq!(
        reg.execute(&expired, "side_effect", &json!({})),
        Err(HandlerError::TimedOut)
    );
    assert!(!started.load(Ordering::SeqCst));
}

#[test]
fn a_cancellable_tool_returns_soon_after_a_stop_from_another_thread() {
    within(Duration::from_secs(10), || {
        let reg = Arc::new(ToolRegistry::new());
        reg.register(
            ToolDef {
                cancellable: true,
                ..def("long_scan")
            },
            |call: &CallContext, _: &Value| {
                // Up to 5 s of work in 5 ms steps, checking for a stop between steps.
                for _ in 0..1000 {
                    call.check()?;
                    thread::sleep(Duration::from_millis(5));
                }
                Ok(json!("finished"))
            },
        )
        .expect("valid tool");
        assert!(reg.get("long_scan").expect("registered").cancellable());
        assert!(
            !ToolDef::default().cancellable,
            "not cancellable unless declared"
        );
        let stop = Arc::new(AtomicBool::new(false));
        let call = CallContext::new(
            5,
            Caller::new("cli", Trust::Local),
            Cancel::flag(Arc::clone(&stop)),
            Instant::now() + Duration::from_secs(60),
        );
        let tool = {
            let reg = Arc::clone(&reg);
            thread::spawn(move || {
                let out = reg.execute(&call, "long_scan", &json!({}));
                (out, Instant::now())
            })
        };
        thread::sleep(Duration::from_millis(100));
        let stopped = Instant::now();
        stop.store(true, Ordering::Release);
        let (out, ended) = tool.join().expect("tool thread");
        assert_eq!(out, Err(HandlerError::Cancelled));
        let took = ended.duration_since(stopped);
        assert!(
            took < Duration::from_millis(50),
            "the tool ended {took:?} after the stop"
        );
    });
}
