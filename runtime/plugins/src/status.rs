//! What `hearth status` and `hearth plugin list` show of each plugin.

use serde::Serialize;

/// Where a supervised child is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PluginState {
    /// Installed and enabled, not started yet (or stopped on request).
    Stopped,
    /// Disabled by the user; not started.
    Disabled,
    /// Spawned; the handshake and start are under way.
    Starting,
    /// Started: its tools, stages and channels are live.
    Running,
    /// Crashed; starts again after `in_ms`.
    Restarting {
        /// Milliseconds until the restart.
        in_ms: u64,
    },
    /// Crashed too often; restarts stopped until a reload or an enable.
    GaveUp {
        /// Crashes within the window.
        crashes: usize,
    },
    /// Could not be started (spawn, handshake, init or start failed); not restarted.
    Failed,
}

/// One plugin's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginStatus {
    /// The plugin's name.
    pub name: String,
    /// Its state.
    #[serde(flatten)]
    pub state: PluginState,
    /// The running process, if any.
    pub pid: Option<u32>,
    /// Crashes within the restart window.
    pub crashes: usize,
    /// Restarts since the daemon started (or the last reload).
    pub restarts: u64,
    /// The last crash or start failure, in words.
    pub last_error: Option<String>,
}

impl PluginStatus {
    /// A plugin that has not run yet.
    pub fn new(name: &str, state: PluginState) -> PluginStatus {
        PluginStatus {
            name: name.to_owned(),
            state,
            pid: None,
            crashes: 0,
            restarts: 0,
            last_error: None,
        }
    }
}
