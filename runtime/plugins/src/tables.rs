//! The kernel tables a plugin registers into.

use std::sync::Arc;

use hearth_stages::{OutputChannels, StagePipeline, ToolRegistry};

/// The kernel tables a plugin registers into.
#[derive(Clone, Default)]
pub struct Tables {
    /// Tools the model may call.
    pub tools: Arc<ToolRegistry>,
    /// Stage handlers.
    pub stages: Arc<StagePipeline>,
    /// Output channels.
    pub outputs: Arc<OutputChannels>,
}
