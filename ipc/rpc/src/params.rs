//! Param and result shapes of the lifecycle, invoke and registration methods, shared by the
//! kernel's host and the SDK so the two cannot drift apart.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call_context::WireContext;

/// `plugin.init` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InitParams {
    /// The name the plugin runs under.
    pub name: String,
    /// The plugin's section of the kernel config (an object, or null).
    pub config: Value,
}

/// `tool.invoke` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolInvoke {
    /// The registered tool name.
    pub name: String,
    /// The model's arguments object.
    pub args: Value,
    /// The call's context.
    pub ctx: WireContext,
}

/// `tool.invoke` and `output.invoke` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InvokeResult {
    /// The handler's value.
    pub result: Value,
}

/// `stage.invoke` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageInvoke {
    /// The stage name (`pre_action`, …).
    pub stage: String,
    /// The stage context as a JSON object; the handler returns its edited form.
    pub context: Value,
    /// The call's context.
    pub ctx: WireContext,
}

/// `stage.invoke` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageResult {
    /// The stage context after the handler ran.
    pub context: Value,
}

/// `output.invoke` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutputInvoke {
    /// The registered channel name.
    pub channel: String,
    /// What to send (`{text, blocks?, …}`).
    pub args: Value,
    /// The call's context.
    pub ctx: WireContext,
}

/// `tool.register` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolRegister {
    /// The function name offered to the model.
    pub name: String,
    /// The tool definition (`description`, `parameters`, `parallel_safe`, …); the kernel forces
    /// `plugin` to the registering plugin.
    pub def: Value,
}

/// `stage.register` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageRegister {
    /// The stage name.
    pub stage: String,
    /// `"global"` (default) or `"own_tools"`.
    pub scope: String,
    /// Higher runs earlier.
    pub priority: i32,
}

/// `output.register` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutputRegister {
    /// The channel name.
    pub name: String,
    /// What it can send (`["text"]`, `["text","image"]`, …).
    pub caps: Vec<String>,
    /// One line for the model and the user.
    pub desc: String,
    /// The channel definition (`no_memory`, policies).
    pub def: Value,
}

/// `input.register` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InputRegister {
    /// The channel name.
    pub name: String,
    /// The channel definition (`no_memory`, …).
    pub def: Value,
}

/// `log` notification params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogParams {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    /// The line.
    pub message: String,
}
