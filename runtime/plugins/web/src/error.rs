//! The web channel's one error type: what failed, with the setting or route it concerns.

use std::io;

/// Why the web channel could not start or serve a request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebError {
    /// The listening address is taken or not allowed.
    #[error(
        "cannot listen on {addr} (setting plugin.web.bind): {source}; another program holds the \
         port, or choose another with `hearth settings set plugin.web.bind HOST:PORT`"
    )]
    Bind {
        /// The address from the setting.
        addr: String,
        /// What the kernel said.
        source: io::Error,
    },
    /// `plugin.web.bind` is not `HOST:PORT`.
    #[error("setting plugin.web.bind is {value:?}, not HOST:PORT (for example 127.0.0.1:8080)")]
    BadBind {
        /// The value found.
        value: String,
    },
    /// A non-loopback address without a password would expose the agent to the network.
    #[error(
        "refusing to listen on {addr} without a password: anyone on the network could talk to \
         the agent and change its settings. Start once on 127.0.0.1 and set a password on the \
         page, or set plugin.web.password, then bind to {addr}"
    )]
    OpenWithoutPassword {
        /// The address from the setting.
        addr: String,
    },
    /// The kernel refused or failed a call.
    #[error("{0}")]
    Kernel(#[from] hearth_plugin::ToolError),
    /// The async runtime could not be built.
    #[error("the HTTP runtime: {0}")]
    Runtime(io::Error),
}
