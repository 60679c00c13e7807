//! The conformance plugin's data-plane tools: large results and arguments through the arena,
//! following the kernel's event ring, writing one stage-context field.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_plugin::{
    EventKind, EventStream, Next, Registrar, StageField, ToolDef, ToolError, decode_envelope, json,
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
            let field = StageField::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| ToolError::invalid_arguments(format!("no field {name:?}")))?;
            let text = args["text"].as_str().unwrap_or_default();
            plane
                .stage_context()
                .write(field, Some(text.as_bytes()))
                .map_err(|e| ToolError::new(hearth_plugin::ErrorKind::Busy, e.to_string()))?;
            Ok(json!({"written": name}))
        },
    )?;
    Ok(())
}
