//! What the host needs of the kernel beyond the stage tables: publishing lifecycle events and
//! injecting a plugin's inputs. The daemon implements it over its kernel handle.

use hearth_rpc::Priority;
use serde_json::Value;

/// The kernel as the plugin host sees it.
pub trait KernelPort: Send + Sync + 'static {
    /// Publishes event `kind` (`plugin_crashed`, …) with `payload`.
    fn publish(&self, kind: &str, payload: &Value);

    /// Injects `text` from `plugin` on `channel`: an interrupt at `priority` (already clamped
    /// to L3 for external plugins) or a plain input.
    fn inject(
        &self,
        plugin: &str,
        channel: &str,
        text: &str,
        interrupt: bool,
        priority: Option<Priority>,
    ) -> Result<(), String>;
}

/// No kernel behind the host: events go to the log, injection is refused.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKernel;

impl KernelPort for NoKernel {
    fn publish(&self, kind: &str, payload: &Value) {
        tracing::info!(event = kind, %payload, "plugin event");
    }

    fn inject(
        &self,
        plugin: &str,
        _channel: &str,
        _text: &str,
        _interrupt: bool,
        _priority: Option<Priority>,
    ) -> Result<(), String> {
        Err(format!(
            "plugin {plugin}: no kernel accepts injected inputs here"
        ))
    }
}
