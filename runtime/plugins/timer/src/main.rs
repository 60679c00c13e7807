//! `timer`: reminders as a plugin process. `timer_set` / `timer_list` / `timer_cancel`; a due
//! timer is injected as an L3 interrupt on the `timer` channel; timers live in `timers.json` in
//! the plugin's directory (its working directory), so they survive a daemon restart, and one
//! that came due while the daemon was down fires when it is back.

mod store;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hearth_plugin::{
    Host, InjectOptions, Plugin, Priority, Registrar, ToolDef, ToolError, Value, json,
};
use store::Store;

/// How often due timers are looked for: a reminder fires at most this late.
const TICK: Duration = Duration::from_millis(100);

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[derive(Default)]
struct TimerPlugin {
    store: Option<Arc<Mutex<Store>>>,
    stop: Arc<AtomicBool>,
    /// Joined on stop, so a timer the kernel already took is removed from the file before the
    /// process exits (else it would fire a second time after the restart).
    due_thread: Option<std::thread::JoinHandle<()>>,
}

fn lock(store: &Mutex<Store>) -> MutexGuard<'_, Store> {
    store.lock().unwrap_or_else(|p| p.into_inner())
}

fn failed(e: String) -> ToolError {
    ToolError::failed(e)
}

impl Plugin for TimerPlugin {
    fn name(&self) -> &str {
        "timer"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn init(&mut self, _config: &Value) -> Result<(), ToolError> {
        let dir = std::env::current_dir().map_err(|e| failed(e.to_string()))?;
        self.store = Some(Arc::new(Mutex::new(Store::open(&dir).map_err(failed)?)));
        Ok(())
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        let store = self
            .store
            .clone()
            .ok_or_else(|| ToolError::unavailable("timer: started before init"))?;
        let set = ToolDef::new(
            "timer_set",
            "Set a reminder: after `in_seconds` the text comes back as an interrupt.",
        )
        .parameters(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "What to remind of."},
                "in_seconds": {"type": "number", "minimum": 0},
            },
            "required": ["text", "in_seconds"],
        }));
        reg.tool(set, {
            let store = Arc::clone(&store);
            move |_, args| {
                let text = args["text"]
                    .as_str()
                    .filter(|t| !t.trim().is_empty())
                    .ok_or_else(|| {
                        ToolError::invalid_arguments("text must be a non-empty string")
                    })?;
                let secs = args["in_seconds"]
                    .as_f64()
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        ToolError::invalid_arguments("in_seconds must be a number ≥ 0")
                    })?;
                let due = now_ms() + (secs * 1000.0) as u64;
                let timer = lock(&store).add(due, text).map_err(failed)?;
                Ok(json!({"id": timer.id, "due_ms": timer.due_ms}))
            }
        })?;
        reg.tool(
            ToolDef::new("timer_list", "The pending reminders, soonest first."),
            {
                let store = Arc::clone(&store);
                move |_, _| Ok(json!({"timers": lock(&store).list(), "now_ms": now_ms()}))
            },
        )?;
        let cancel = ToolDef::new("timer_cancel", "Cancel a pending reminder by its id.")
            .parameters(json!({
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            }));
        reg.tool(cancel, {
            let store = Arc::clone(&store);
            move |_, args| {
                let id = args["id"]
                    .as_u64()
                    .ok_or_else(|| ToolError::invalid_arguments("id must be an integer"))?;
                let cancelled = lock(&store).remove(id).map_err(failed)?;
                Ok(json!({"cancelled": cancelled}))
            }
        })?;
        let host = reg.host().clone();
        let stop = Arc::clone(&self.stop);
        let thread = std::thread::Builder::new()
            .name("timer-due".into())
            .spawn(move || fire_due(&host, &store, &stop))
            .map_err(|e| failed(e.to_string()))?;
        self.due_thread = Some(thread);
        Ok(())
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.due_thread.take() {
            let _ = thread.join();
        }
    }
}

/// Injects every due timer; a timer is removed only once the kernel took it, so a failed
/// injection is tried again on the next tick and a crash never loses one.
fn fire_due(host: &Host, store: &Mutex<Store>, stop: &AtomicBool) {
    let options = InjectOptions {
        no_memory: false,
        priority: Some(Priority::L3),
    };
    while !stop.load(Ordering::Relaxed) {
        let due = lock(store).due(now_ms());
        for timer in due {
            let text = format!("Reminder: {}", timer.text);
            match host.inject_interrupt("timer", &text, &options) {
                Ok(()) => {
                    if let Err(e) = lock(store).remove(timer.id) {
                        host.log("error", &format!("timer {}: {e}", timer.id));
                    }
                }
                Err(e) => host.log(
                    "warn",
                    &format!("timer {} not delivered yet: {e}", timer.id),
                ),
            }
        }
        std::thread::sleep(TICK);
    }
}

fn main() -> ExitCode {
    hearth_plugin::run(TimerPlugin::default())
}
