//! The SDK's crate-boundary error.

use hearth_rpc::RpcError;

/// The typed error of every handler a plugin registers (tools, stages, output channels) and of
/// every reverse call: the same type the kernel's in-process handlers return, so a failure keeps
/// its kind (invalid arguments, denied, timed out, cancelled, unavailable, failed) end to end.
pub type ToolError = hearth_rpc::HandlerError;

/// Why [`serve`](crate::serve) ended with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginError {
    /// The kernel offered no protocol version this SDK speaks; the plugin answered with the
    /// error and stopped.
    #[error("plugin {plugin}: {message}")]
    VersionMismatch {
        /// The plugin's name.
        plugin: String,
        /// The answer sent to the kernel.
        message: String,
    },
    /// The control plane failed (the pipe broke, a frame could not be written).
    #[error("plugin {plugin}: {source}")]
    Rpc {
        /// The plugin's name.
        plugin: String,
        /// The underlying error.
        source: RpcError,
    },
}
