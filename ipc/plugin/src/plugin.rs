//! The contract a plugin implements.

use serde_json::Value;

use crate::error::ToolError;
use crate::registrar::Registrar;

/// A plugin: a name, what it registers when started, and what it releases when stopped.
///
/// The SDK calls these on the connection's threads, one at a time (`init`, `start` and `stop`
/// are serialised); handlers registered in `start` run concurrently and must be `Send + Sync`.
pub trait Plugin: Send + 'static {
    /// The plugin's name; must equal the name in its manifest (the handshake checks it).
    fn name(&self) -> &str;

    /// The plugin's own version, for the kernel's logs.
    fn version(&self) -> &str {
        "0.0.0"
    }

    /// `plugin.init`: the plugin's config section (an object, or null). Construct, do not start.
    fn init(&mut self, config: &Value) -> Result<(), ToolError> {
        let _ = config;
        Ok(())
    }

    /// `plugin.start`: register tools, stage handlers and channels through `reg`.
    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError>;

    /// `plugin.stop`, after the stop handlers registered with [`Registrar::on_stop`] ran (newest
    /// first). Also called when the kernel's end of the pipe closes.
    fn stop(&mut self) {}
}
