//! What the Lua plugin tests share: their scripts, tight limits, and kernel tables with a
//! chosen kernel port behind them. Each test binary uses part of it.
#![allow(dead_code)]

use hearth_llm::adapter::AdapterLimits;
use hearth_lua_plugins::{LuaPlugin, LuaPluginConfig};
use hearth_plugin_host::session::Tables;
use hearth_plugin_host::{InProcessHost, KernelPort, NoKernel, RestartPolicy};
use hearth_rpc::Grants;
use hearth_stages::HandlerError;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Long enough for a debug build on a loaded machine; only a hang reaches it.
pub const WATCHDOG: Duration = Duration::from_secs(60);

/// A script of `tests/scripts`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name)
}

/// Budgets small enough for a hostile script to trip them quickly.
pub fn limits() -> AdapterLimits {
    AdapterLimits {
        memory_bytes: 16 << 20,
        instructions: 20_000_000,
        wall: Duration::from_millis(300),
        // A library call (string.rep, a concatenation) runs without reaching the hook; in a
        // debug build a 16 MiB bomb takes about a second of them.
        grace: Duration::from_secs(5),
    }
}

/// Fresh kernel tables with `port` behind them.
pub fn host_with(port: Arc<dyn KernelPort>) -> InProcessHost {
    InProcessHost {
        tables: Tables::default(),
        port,
        settings: None,
    }
}

/// Fresh kernel tables with no kernel behind them.
pub fn host() -> InProcessHost {
    host_with(Arc::new(NoKernel))
}

/// Starts `entry` as plugin `name` in `host`, granted `grants`.
pub fn start_in(
    host: &InProcessHost,
    name: &str,
    entry: &Path,
    policy: RestartPolicy,
    grants: Grants,
) -> LuaPlugin {
    let cfg = LuaPluginConfig {
        limits: limits(),
        policy,
        reload_poll: Duration::from_millis(20),
        grants,
        ..LuaPluginConfig::new(name, entry)
    };
    LuaPlugin::start(cfg, host).expect("the plugin starts")
}

/// The message of a call that failed; anything else is a test failure.
pub fn failed(result: Result<Value, HandlerError>) -> String {
    match result {
        Err(HandlerError::Failed(m)) => m,
        other => panic!("expected a failure, got {other:?}"),
    }
}
