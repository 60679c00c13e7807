//! The conformance plugin's data-plane tools: large results and arguments through the arena,
//! following the kernel's event ring, writing one stage-context field.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_plugin::{
    EventKind, EventStream, Next, Registrar, StageField, StageSpec, ToolDef, ToolError, Value,
    decode_envelope, json,
};

fn plane_missing() -> ToolError {
    ToolError::unavailable("the kernel offered no data plane")
}

/// Registers the tools, each name prefixed with `prefix`.
pub fn register(reg: &mut Registrar<'_>, prefix: &str) -> Result<(), ToolError> {
    let name = |tool: &str| format!("{prefix}{tool}");
    reg.tool(
        ToolDef::new(name("big"), "Returns a text of `bytes` bytes."),
        |_, args| {
            let n = args["bytes"].as_u64().unwrap_or(0) as usize;
            Ok(json!({"text": "x".repeat(n)}))
        },
    )?;
    reg.tool(
        ToolDef::new(
            name("measure"),
            "The length of the text it got, and a result of `reply` bytes.",
        ),
        |_, args| {
            let text = args["text"].as_str().unwrap_or("");
            let reply = args["reply"].as_u64().unwrap_or(0) as usize;
            Ok(json!({"len": text.len(), "reply": "y".repeat(reply)}))
        },
    )?;
    reg.tool(
        ToolDef::new(name("plane"), "What the data plane looks like from here."),
        |ctx, _| {
            let plane = ctx.host().data_plane().ok_or_else(plane_missing)?;
            Ok(json!({"owner": plane.owner(), "kernel_pid": plane.kernel_pid(), "offer": plane.offer()}))
        },
    )?;
    let stream: Arc<Mutex<Option<EventStream>>> = Arc::default();
    reg.tool(
        ToolDef::new(
            name("stream_open"),
            "Starts reading content deltas (of `tag`, if given).",
        ),
        {
            let stream = Arc::clone(&stream);
            move |ctx, args| {
                let plane = ctx.host().data_plane().ok_or_else(plane_missing)?;
                let mut events = plane.events(&[EventKind::ContentDelta, EventKind::AgentOutput]);
                if let Some(tag) = args["tag"].as_u64() {
                    events = events.with_tag(tag);
                }
                let doorbell = events.uses_doorbell();
                *stream.lock().unwrap() = Some(events);
                Ok(json!({"doorbell": doorbell}))
            }
        },
    )?;
    reg.tool(
        ToolDef::new(
            name("stream_follow"),
            "Reads deltas until the answer's agent_output.",
        ),
        move |_, args| {
            let mut guard = stream.lock().unwrap();
            let events = guard
                .as_mut()
                .ok_or_else(|| ToolError::invalid_arguments("stream_open first"))?;
            let limit = Duration::from_millis(args["timeout_ms"].as_u64().unwrap_or(10_000));
            let deadline = Instant::now() + limit;
            let (mut text, mut lagged, mut deltas) = (String::new(), 0, 0);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match events.next(left) {
                    Next::Event { kind, payload, .. } => {
                        let envelope = decode_envelope(payload).map_err(|e| {
                            ToolError::new(hearth_plugin::ErrorKind::Failed, e.to_string())
                        })?;
                        if kind == EventKind::AgentOutput {
                            break;
                        }
                        deltas += 1;
                        text.push_str(envelope.payload["content"].as_str().unwrap_or(""));
                    }
                    Next::Lagged { missed } => lagged += missed,
                    Next::TimedOut => return Err(ToolError::timed_out("no agent_output came")),
                    Next::Closed => break,
                }
            }
            Ok(json!({"text": text, "deltas": deltas, "lagged": lagged}))
        },
    )?;
    reg.tool(
        ToolDef::new(
            name("set_field"),
            "Writes one stage-context field in the shared segment.",
        ),
        |ctx, args| {
            let plane = ctx.host().data_plane().ok_or_else(plane_missing)?;
            let name = args["field"].as_str().unwrap_or_default();
            let field = StageField::from_name(name)
                .ok_or_else(|| ToolError::invalid_arguments(format!("no field {name:?}")))?;
            let text = args["text"].as_str().unwrap_or_default();
            plane
                .stage_context()
                .write(field, Some(text.as_bytes()))
                .map_err(|e| ToolError::new(hearth_plugin::ErrorKind::Busy, e.to_string()))?;
            Ok(json!({"written": name}))
        },
    )?;
    reg.tool(
        ToolDef::new(
            name("stage_lock"),
            "stage.lock (or, with unlock, stage.unlock) of `stage`.",
        ),
        |ctx, args| {
            let method = if args["unlock"] == true {
                "stage.unlock"
            } else {
                "stage.lock"
            };
            ctx.host().call(method, json!({"stage": args["stage"]}))
        },
    )?;
    let who = if prefix.is_empty() {
        "a".to_owned()
    } else {
        prefix.trim_end_matches('_').to_owned()
    };
    let priority = if prefix.is_empty() { 10 } else { 5 };
    reg.stage(
        StageSpec::new("before_output").priority(priority),
        move |_, context| {
            stage_command(&who, context);
            Ok(())
        },
    )?;
    Ok(())
}

/// What the `before_output` handler does, by the input's text or, where the stage sees no
/// input (a daemon's `before_output` carries only the answer), the answer's text
/// (`stage:<command> …`; anything else passes untouched). Plugin `a` (the unprefixed one) edits
/// the final text, the others add a memory item recording the final text they saw.
fn stage_command(who: &str, context: &mut Value) {
    let raw = context["raw_message"].as_str().unwrap_or("").to_owned();
    let final_text = context["final_text"].as_str().unwrap_or("").to_owned();
    let Some(command) = raw
        .strip_prefix("stage:")
        .or_else(|| final_text.strip_prefix("stage:"))
        .and_then(|c| c.split_whitespace().next())
    else {
        return;
    };
    match (command, who) {
        ("both", "a") => context["final_text"] = json!(format!("{final_text} [a]")),
        ("both", _) => {
            let item = json!({"role": who, "content": final_text, "score": 1.0});
            match context["memory"].as_array_mut() {
                Some(items) => items.push(item),
                None => context["memory"] = json!([item]),
            }
        }
        ("upper", "a") => {
            context["final_text"] = json!(format!("[rewritten] {}", final_text.to_uppercase()));
        }
        ("oversize", "a") => context["final_text"] = json!("x".repeat(64 * 1024)),
        ("flags", "a") => {
            context["no_memory"] = json!(true);
            context["extra"]["media_type"] = json!("image/png");
            context["response"] = json!(format!("answered: {final_text}"));
        }
        _ => {}
    }
}
