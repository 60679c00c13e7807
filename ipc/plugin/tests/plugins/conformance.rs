//! A plugin that exercises every corner of the protocol on request; the process tests drive it.
//! With `--garbage-first` it writes malformed and oversize lines to stdout before serving.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hearth_plugin::{
    CallContext, ErrorKind, Host, InjectOptions, OutputChannel, Plugin, Priority, Registrar,
    StageSpec, ToolDef, ToolError, Value, json,
};

#[path = "conformance_data.rs"]
mod conformance_data;

struct Conformance {
    /// `conformance`, or the name of the link it runs under when that starts with it (so two
    /// plugins can run from one binary).
    name: String,
    cancelled: Arc<AtomicU64>,
    host: Option<Host>,
}

impl Conformance {
    fn from_argv0() -> Conformance {
        let name = std::env::args()
            .next()
            .and_then(|a| {
                let file = std::path::Path::new(&a).file_name()?.to_str()?.to_owned();
                file.starts_with("conformance").then_some(file)
            })
            .unwrap_or_else(|| "conformance".to_owned());
        Conformance {
            name,
            cancelled: Arc::default(),
            host: None,
        }
    }
}

impl Plugin for Conformance {
    fn name(&self) -> &str {
        &self.name
    }

    fn version(&self) -> &str {
        "1.0.0"
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        let host = reg.host().clone();
        self.host = Some(host.clone());
        if let Some(suffix) = self.name.strip_prefix("conformance-") {
            // A second instance: only the data-plane tools, under names of its own.
            return conformance_data::register(reg, &format!("{suffix}_"));
        }
        reg.tool(
            ToolDef::new("echo", "Returns its arguments."),
            |ctx, args| Ok(json!({"args": args, "task": ctx.task_id(), "caller": ctx.caller()})),
        )?;
        reg.tool(ToolDef::new("panic", "Panics."), |_, _| {
            panic!("conformance tool asked to panic")
        })?;
        reg.tool(ToolDef::new("stats", "Control-plane counters."), {
            let cancelled = Arc::clone(&self.cancelled);
            move |ctx, _| {
                let s = ctx.host().stats();
                Ok(json!({
                    "bad_frames": s.bad_frames,
                    "oversize_frames": s.oversize_frames,
                    "unknown_responses": s.unknown_responses,
                    "peer_errors": s.peer_errors,
                    "panics": s.panics,
                    "cancelled": cancelled.load(Ordering::Relaxed),
                }))
            }
        })?;
        reg.tool(
            ToolDef::new("recall", "Asks the kernel's memory."),
            |ctx, args| {
                let docs = ctx
                    .host()
                    .memory_query(args["text"].as_str().unwrap_or(""), 3)?;
                let setting = ctx.host().settings_get("greeting")?;
                Ok(json!({"docs": docs, "greeting": setting}))
            },
        )?;
        reg.tool(ToolDef::new("crash", "Exits mid-call."), |_, _| {
            std::process::exit(3)
        })?;
        reg.tool(ToolDef::new("flood", "Many reverse calls at once."), flood)?;
        reg.tool(ToolDef::new("inject", "Injects an input."), |ctx, args| {
            let options = InjectOptions {
                no_memory: false,
                priority: match args["priority"].as_str() {
                    Some("L4") => Some(Priority::L4),
                    _ => None,
                },
            };
            ctx.host()
                .inject_interrupt("conformance", "wake up", &options)?;
            Ok(json!("injected"))
        })?;
        // `detached: true` makes the call as the plugin itself, outside the tool's call (no
        // `ctx`), as a plugin's own thread would.
        let plugin = reg.host().clone();
        reg.tool(
            ToolDef::new("call", "Calls any kernel method."),
            move |ctx, args| {
                let method = args["method"].as_str().unwrap_or_default();
                let host = if args["detached"] == true {
                    &plugin
                } else {
                    ctx.host()
                };
                host.call(method, args["params"].clone())
            },
        )?;
        reg.tool(
            ToolDef::new("remember", "Keeps what was said in long-term memory."),
            |ctx, args| {
                let id = ctx.host().text_memory_append(
                    args["input"].as_str().unwrap_or_default(),
                    args["source"].as_str(),
                    args["timestamp_ms"].as_i64(),
                )?;
                Ok(json!({"id": id}))
            },
        )?;
        reg.tool(
            ToolDef::new("wait_cancel", "Runs until cancelled.").cancellable(),
            {
                let cancelled = Arc::clone(&self.cancelled);
                move |ctx, _| {
                    let until = Instant::now() + Duration::from_secs(10);
                    while Instant::now() < until {
                        if ctx.is_cancelled() {
                            cancelled.fetch_add(1, Ordering::Relaxed);
                            return Err(ToolError::cancelled("wait_cancel was cancelled"));
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    }
                    Err(ToolError::timed_out("never cancelled"))
                }
            },
        )?;
        reg.stage(StageSpec::new("pre_action").priority(5), |ctx, context| {
            let prompt = context["system_prompt"].as_str().unwrap_or("").to_owned();
            context["system_prompt"] = json!(format!("{prompt} [conformance:{}]", ctx.task_id()));
            Ok(())
        })?;
        reg.output_channel(
            OutputChannel::text("conformance-out", "Counts."),
            |_, args| {
                let text = args["text"].as_str().unwrap_or("");
                Ok(json!({"delivered": true, "chars": text.chars().count()}))
            },
        )?;
        conformance_data::register(reg, "")?;
        for n in 1..=3 {
            let host = host.clone();
            reg.on_stop(move || host.log("info", &format!("stop handler {n}")));
        }
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(host) = &self.host {
            host.log("info", "plugin stop");
        }
    }
}

/// `n` concurrent reverse calls; counts how each ended.
fn flood(ctx: &CallContext, args: Value) -> Result<Value, ToolError> {
    let n = args["n"].as_u64().unwrap_or(16) as usize;
    let outcomes: Vec<Result<Value, ToolError>> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..n)
            .map(|_| s.spawn(|| ctx.host().memory_recall(&["flood"], 1)))
            .collect();
        calls
            .into_iter()
            .map(|c| c.join().expect("a flood thread panicked"))
            .collect()
    });
    let count = |kind: Option<ErrorKind>| {
        outcomes
            .iter()
            .filter(|o| o.as_ref().err().map(|e| e.kind) == kind)
            .count()
    };
    let (ok, busy) = (count(None), count(Some(ErrorKind::Busy)));
    Ok(json!({"ok": ok, "busy": busy, "other": n - ok - busy}))
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--garbage-first") {
        let mut out = std::io::stdout().lock();
        let oversize = vec![b'x'; (1 << 20) + 10];
        for line in [
            &b"not json"[..],
            b"{\"id\":1,",
            b"\xff\xfe",
            b"[1,2]",
            &oversize,
        ] {
            out.write_all(line)
                .and_then(|()| out.write_all(b"\n"))
                .expect("stdout");
        }
        out.flush().expect("stdout");
    }
    hearth_plugin::run(Conformance::from_argv0())
}
