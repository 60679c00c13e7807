//! What can go wrong with a Lua plugin as a whole (a call's own failure is its tool's error).

use std::path::PathBuf;

use crate::script::ScriptError;

/// Why a Lua plugin did not start or reload.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LuaPluginError {
    /// The script file could not be read.
    #[error("lua plugin {plugin}: cannot read {}: {source}", path.display())]
    Read {
        /// The plugin.
        plugin: String,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The script did not load: a syntax error, an error at the top level, a budget overrun or
    /// a bad `sdk.tool` declaration.
    #[error("lua plugin {plugin}: {file}: {source}")]
    Load {
        /// The plugin.
        plugin: String,
        /// The script's file name.
        file: String,
        /// What went wrong, typed.
        #[source]
        source: ScriptError,
    },
    /// The plugin's thread ended before it said whether the script loaded.
    #[error("lua plugin {plugin}: the plugin thread ended while loading")]
    ThreadEnded {
        /// The plugin.
        plugin: String,
    },
    /// The plugin's thread could not be started.
    #[error("lua plugin {plugin}: cannot start its thread: {source}")]
    Thread {
        /// The plugin.
        plugin: String,
        /// Why.
        source: std::io::Error,
    },
}
