//! What a Lua script may touch, and how long it may run: the one sandbox of provider adapters
//! and Lua script plugins.
//!
//! Only the `string`, `table`, `math` and `utf8` libraries are opened; `io`, `os`, `package`,
//! `require`, `debug` and `coroutine` never exist. From the base library `dofile`, `loadfile`,
//! `collectgarbage` and `warn` are removed, `string.dump` is removed, `load` is wrapped so it
//! only ever compiles text (bytecode can break the VM's memory safety), and `setmetatable`
//! refuses `__gc` metatables (a finalizer would run outside any call's budget).
//!
//! A call is metered by an instruction-count hook that checks both an instruction budget and a
//! wall-clock deadline. Once a call has tripped its budget, `pcall`/`xpcall` re-raise the error
//! instead of swallowing it, and the hook keeps raising, so a script cannot catch its way out.

use super::AdapterLimits;
use super::log_limit::{Admit, LOG_BURST, LOG_PER_SECOND, LogLimiter, message_text, truncated};
use mlua::chunk::ChunkMode;
use mlua::{HookTriggers, Lua, StdLib, Value, VmState};
use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The `util` helpers, loaded into every adapter state before the adapter itself.
const UTIL: &str = include_str!("../../adapters/prelude.lua");

/// The standard libraries an adapter gets.
fn libs() -> StdLib {
    StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::UTF8
}

/// How often the hook runs; small enough that a deadline is noticed within a millisecond or so.
const HOOK_EVERY: u32 = 10_000;

/// Runs in the sandbox before the adapter script; receives the `tripped` probe.
const PRELUDE: &str = r##"
local tripped = ...
local raw_load, raw_pcall, raw_xpcall, raw_error = load, pcall, xpcall, error
local raw_setmetatable, raw_rawget, select, type = setmetatable, rawget, select, type

local function rethrow_if_tripped(ok, ...)
  if not ok and tripped() then raw_error((...), 0) end
  return ok, ...
end

function pcall(f, ...)
  return rethrow_if_tripped(raw_pcall(f, ...))
end

-- A budget error is raised from inside the hook, where hooks are off: the message handler it
-- triggers would run unmetered, so once tripped the script's handler is not run at all.
function xpcall(f, handler, ...)
  local function guarded(...)
    if tripped() then return (...) end
    return handler(...)
  end
  return rethrow_if_tripped(raw_xpcall(f, guarded, ...))
end

function load(chunk, name, _mode, ...)
  -- An explicit nil environment differs from an absent one, so keep the arity.
  if select("#", ...) > 0 then return raw_load(chunk, name, "t", ...) end
  return raw_load(chunk, name, "t")
end

function setmetatable(t, mt)
  if type(mt) == "table" and raw_rawget(mt, "__gc") ~= nil then
    raw_error("__gc metamethods are not allowed in sandboxed scripts", 2)
  end
  return raw_setmetatable(t, mt)
end
"##;

/// Creates a sandboxed Lua state for the script `name`, metered by `meter`; `limits` gives its
/// memory limit and the budget of the setup it runs.
pub fn new_state(name: &str, limits: &AdapterLimits, meter: &Arc<Meter>) -> mlua::Result<Lua> {
    let lua = Lua::new_with(libs(), mlua::LuaOptions::default())?;
    lua.set_memory_limit(limits.memory_bytes)?;
    let hook_meter = Arc::clone(meter);
    lua.set_global_hook(
        HookTriggers::new().every_nth_instruction(HOOK_EVERY),
        move |_, _| hook_meter.on_hook(),
    )?;

    let globals = lua.globals();
    for name in [
        "dofile",
        "loadfile",
        "collectgarbage",
        "warn",
        "require",
        "package",
        "io",
        "os",
        "debug",
        "coroutine",
    ] {
        globals.raw_set(name, Value::Nil)?;
    }
    let string: mlua::Table = globals.raw_get("string")?;
    string.raw_set("dump", Value::Nil)?;

    // `log` and `print` share one budget, so neither is a way around the other's.
    let limiter = Arc::new(Mutex::new(LogLimiter::new(Instant::now())));
    let (adapter, bucket) = (name.to_string(), Arc::clone(&limiter));
    globals.raw_set(
        "log",
        lua.create_function(move |_, (level, msg): (Value, Value)| {
            if let Some(dropped) = admit(&bucket) {
                let level = message_text(&level);
                emit(&adapter, &level, &message_text(&msg), dropped);
            }
            Ok(())
        })?,
    )?;
    let adapter = name.to_string();
    globals.raw_set(
        "print",
        lua.create_function(move |_, args: mlua::Variadic<Value>| {
            if let Some(dropped) = admit(&limiter) {
                let parts: Vec<String> = args.iter().map(message_text).collect();
                emit(
                    &adapter,
                    "debug",
                    &truncated(parts.join("\t").as_bytes()),
                    dropped,
                );
            }
            Ok(())
        })?,
    )?;
    super::json::install(&lua, limits.memory_bytes)?;
    // Helpers the bundled adapters share (and a user's own may use), as the global `util`.
    lua.load(UTIL)
        .set_name("=util")
        .set_mode(ChunkMode::Text)
        .exec()?;

    let probe_meter = Arc::clone(meter);
    let tripped = lua.create_function(move |_, ()| Ok(probe_meter.tripped().is_some()))?;
    meter.begin(limits);
    let prelude = lua
        .load(PRELUDE)
        .set_name("=sandbox")
        .set_mode(ChunkMode::Text)
        .call::<()>(tripped);
    meter.end();
    prelude?;
    Ok(lua)
}

/// `Some(dropped since the last report)` when the message may be logged.
fn admit(limiter: &Mutex<LogLimiter>) -> Option<u64> {
    match limiter.lock().admit(Instant::now()) {
        Admit::Log { dropped } => Some(dropped),
        Admit::Drop => None,
    }
}

fn emit(adapter: &str, level: &str, msg: &str, dropped: u64) {
    if dropped > 0 {
        tracing::warn!(
            adapter,
            "[lua] {dropped} log messages dropped: over {LOG_BURST} at once or {LOG_PER_SECOND} a second"
        );
    }
    match level {
        "error" => tracing::error!(adapter, "[lua/{level}] {msg}"),
        "warn" | "warning" => tracing::warn!(adapter, "[lua/{level}] {msg}"),
        "debug" => tracing::debug!(adapter, "[lua/{level}] {msg}"),
        "trace" => tracing::trace!(adapter, "[lua/{level}] {msg}"),
        _ => tracing::info!(adapter, "[lua/{level}] {msg}"),
    }
}

/// Why a call was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trip {
    /// The instruction budget ran out.
    Instructions,
    /// The wall-clock budget ran out.
    Time,
}

/// The per-call budget, read by the instruction hook. Only the adapter's VM thread touches it,
/// so every access is Relaxed; atomics (not cells) keep the hook closure `Send` whichever mlua
/// features the workspace turns on.
pub struct Meter {
    epoch: Instant,
    /// Nanoseconds after `epoch` at which the running call must stop; 0 = no call is running,
    /// so Lua code that runs outside a call (it should not) is stopped at once.
    deadline_ns: AtomicU64,
    used: AtomicU64,
    limit: AtomicU64,
    /// 0 = not tripped, 1 = instructions, 2 = time.
    tripped: AtomicU8,
}

impl Default for Meter {
    fn default() -> Self {
        Self::new()
    }
}

impl Meter {
    /// A meter with no call running.
    pub fn new() -> Self {
        Self {
            epoch: Instant::now(),
            deadline_ns: AtomicU64::new(0),
            used: AtomicU64::new(0),
            limit: AtomicU64::new(0),
            tripped: AtomicU8::new(0),
        }
    }

    /// Arms the budget for one call.
    pub fn begin(&self, limits: &AdapterLimits) {
        let deadline = self
            .now_ns()
            .saturating_add(duration_ns(limits.wall))
            .max(1);
        self.deadline_ns.store(deadline, Relaxed);
        self.used.store(0, Relaxed);
        self.limit.store(limits.instructions, Relaxed);
        self.tripped.store(0, Relaxed);
    }

    /// Disarms the budget; returns what tripped during the call, if anything.
    pub fn end(&self) -> Option<Trip> {
        self.deadline_ns.store(0, Relaxed);
        self.tripped()
    }

    /// What tripped in the running or last call, if anything.
    pub fn tripped(&self) -> Option<Trip> {
        match self.tripped.load(Relaxed) {
            1 => Some(Trip::Instructions),
            2 => Some(Trip::Time),
            _ => None,
        }
    }

    fn now_ns(&self) -> u64 {
        duration_ns(self.epoch.elapsed())
    }

    fn on_hook(&self) -> mlua::Result<VmState> {
        let used = self.used.fetch_add(u64::from(HOOK_EVERY), Relaxed) + u64::from(HOOK_EVERY);
        let deadline = self.deadline_ns.load(Relaxed);
        let trip = if deadline == 0 || self.now_ns() >= deadline {
            Some(Trip::Time)
        } else if used > self.limit.load(Relaxed) {
            Some(Trip::Instructions)
        } else {
            None
        };
        match trip {
            None => Ok(VmState::Continue),
            Some(trip) => {
                // Keep the first reason; later hooks only re-raise.
                let code = if trip == Trip::Instructions { 1 } else { 2 };
                let _ = self.tripped.compare_exchange(0, code, Relaxed, Relaxed);
                Err(mlua::Error::runtime(match trip {
                    Trip::Instructions => "script call exceeded its instruction budget",
                    Trip::Time => "script call exceeded its time budget",
                }))
            }
        }
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

fn root(e: &mlua::Error) -> &mlua::Error {
    match e {
        mlua::Error::CallbackError { cause, .. } => root(cause),
        other => other,
    }
}

/// Whether `e` is the state running out of its memory limit.
pub fn is_memory(e: &mlua::Error) -> bool {
    match root(e) {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::RuntimeError(m) => m.contains("not enough memory"),
        _ => false,
    }
}

/// The script's own message (`file.lua:12: what went wrong`), without the traceback.
pub fn describe(e: &mlua::Error) -> String {
    let text = match root(e) {
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::SyntaxError { message, .. } => format!("syntax error: {message}"),
        other => other.to_string(),
    };
    let text = text.split("\nstack traceback:").next().unwrap_or_default();
    text.trim().to_string()
}
