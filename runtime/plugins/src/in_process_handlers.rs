//! What a plugin that runs in the daemon's process (a Lua script) serves: the last hop of a
//! stage or output call, where a process's would be its pipe.

use hearth_stages::{CallContext, HandlerError};
use serde_json::Value;

/// The handlers of a plugin that runs in the daemon's process.
pub trait InProcess: Send + Sync + 'static {
    /// Runs the plugin's handler of stage `stage` on `context` (the stage context as JSON) and
    /// answers the edited context.
    fn stage(&self, call: &CallContext, stage: &str, context: Value)
    -> Result<Value, HandlerError>;

    /// Delivers `message` (`{text, type, meta}`) to the plugin's output channel `channel` and
    /// answers the channel's own result.
    fn output(
        &self,
        call: &CallContext,
        channel: &str,
        message: Value,
    ) -> Result<Value, HandlerError>;
}
