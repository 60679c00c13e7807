//! What the socket may ask of the daemon beyond the kernel: the daemon implements [`Control`];
//! a request it refuses is a [`ControlError`], whose text the client sees.

use crate::daemon::SettingsOp;
use hearth_kernel::ingress::KernelHandle;
use hearth_llm::provider::SourceConfig;
use serde_json::Value;

/// What the socket may ask of the daemon beyond the kernel itself. Every answer the client
/// sees as an `error` line is a [`ControlError`]; its `Display` is that line's text.
pub trait Control: Send + Sync + 'static {
    /// The kernel requests are submitted to.
    fn kernel(&self) -> &KernelHandle;
    /// Scheduler snapshot, providers and their availability.
    fn status(&self) -> Value;
    /// The configured sources and their state.
    fn sources(&self) -> Value;
    /// Adds (and saves) a source; the answer says what was done.
    fn add_source(&self, source: SourceConfig) -> Result<String, ControlError>;
    /// Removes (and saves) a source.
    fn remove_source(&self, name: &str) -> Result<String, ControlError>;
    /// Sends a short test request through a source.
    fn test_source(&self, name: &str) -> Result<String, ControlError>;
    /// A `hearth plugin` action; `name` is the plugin (or the directory, for `install`).
    fn plugin(&self, action: &str, name: Option<&str>) -> Result<Value, ControlError>;
    /// A `hearth memory` action on the graph memory; `arg` is the query or the fact id. A
    /// controller without memory answers that it has none.
    fn memory(
        &self,
        action: &str,
        arg: Option<&str>,
        k: Option<usize>,
    ) -> Result<Value, ControlError> {
        let _ = (arg, k);
        Err(ControlError::Memory(format!(
            "memory {action}: this server has no memory"
        )))
    }

    /// A `hearth mcp` request to the running daemon (`sync`).
    fn mcp(&self, action: &str) -> Result<Value, ControlError> {
        Err(ControlError::Invalid(format!(
            "mcp {action}: this server runs no MCP servers"
        )))
    }

    /// A `hearth settings` request.
    fn settings(&self, op: SettingsOp) -> Result<Value, ControlError> {
        let _ = op;
        Err(ControlError::Invalid(
            "this daemon has no settings registry".into(),
        ))
    }
}

/// Why a control request failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ControlError {
    /// A source could not be added, removed or tested (the message names it and why).
    #[error(transparent)]
    Source(#[from] crate::daemon::SourceError),
    /// A plugin action failed.
    #[error(transparent)]
    Plugin(#[from] hearth_plugin_host::PluginError),
    /// A settings request was refused (the message names the key and why).
    #[error(transparent)]
    Settings(#[from] crate::daemon::SettingsServiceError),
    /// The request itself is wrong: a missing name, an unknown action.
    #[error("{0}")]
    Invalid(String),
    /// The graph memory refused or failed a request (the message says why).
    #[error("{0}")]
    Memory(String),
}

impl ControlError {
    /// The kind a plugin's call is answered with: the request's own fault (a bad name, key or
    /// value) is invalid arguments, a setting the caller may not change is denied, anything
    /// else a failure.
    pub fn kind(&self) -> hearth_rpc::ErrorKind {
        use crate::daemon::SettingsServiceError as S;
        use hearth_plugin_host::PluginError as P;
        use hearth_rpc::ErrorKind;
        use hearth_settings::SettingsError as E;
        match self {
            ControlError::Invalid(_)
            | ControlError::Plugin(P::NotInstalled { .. })
            | ControlError::Settings(S::Invalid(_))
            | ControlError::Settings(S::Settings(E::BadKey { .. } | E::WrongType { .. })) => {
                ErrorKind::InvalidArguments
            }
            ControlError::Settings(S::Settings(E::Denied { .. })) => ErrorKind::Denied,
            _ => ErrorKind::Failed,
        }
    }
}
