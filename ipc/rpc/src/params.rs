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
    /// The model's arguments object (`null` when they travel in `args_frame`).
    pub args: Value,
    /// The call's context.
    pub ctx: WireContext,
    /// Arguments too large for the pipe: a call frame in the exchange arena holding their JSON,
    /// with room for the result after them (PROTOCOL §9.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_frame: Option<SharedFrame>,
}

/// `tool.invoke` and `output.invoke` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InvokeResult {
    /// The handler's value (`null` when it travels through the arena).
    pub result: Value,
    /// The result's JSON is in an arena block the plugin got from `arena.alloc`; the kernel
    /// reads it, then frees the block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_ref: Option<SharedRef>,
    /// The result's JSON is in the call's `args_frame`, after the arguments, and the frame is
    /// completed (PROTOCOL §9.3).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub result_in_frame: bool,
}

/// A reference into the exchange arena as it travels on the control plane: the wire form of
/// `hearth_ipc::ArenaRef` (PROTOCOL §9.3). Only a claim: the kernel checks every field against
/// its own allocation table before touching a byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SharedRef {
    /// Byte offset from the segment start of the first block.
    pub offset: u32,
    /// Bytes referenced.
    pub len: u32,
    /// The block's generation when the reference was made.
    pub generation: u32,
    /// `1` binary, `2` JSON, `4` expansion block.
    #[serde(default)]
    pub flags: u32,
}

/// A call frame on the wire: the frame's block and how many argument bytes start it; the
/// result goes at the first multiple of 8 after them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SharedFrame {
    /// The whole frame.
    pub frame: SharedRef,
    /// Bytes of arguments at its start.
    pub args_len: u32,
}

/// `arena.alloc` params.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArenaAlloc {
    /// Bytes wanted.
    pub size: u32,
}

/// `arena.alloc` result, and `arena.free` params.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArenaBlock {
    /// The block, owned by the calling plugin until it is freed or handed back in a result.
    #[serde(rename = "ref")]
    pub block: SharedRef,
}

/// `stage.invoke` params: the context inline (`context`), or in the shared stage-context area
/// (`seq`, PROTOCOL §9.4) when the plugin attached the data plane.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageInvoke {
    /// The stage name (`pre_action`, …).
    pub stage: String,
    /// Inline form: the stage context as a JSON object; the handler returns its edited form.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// Area form: the stage sequence number the kernel loaded the context under; the handler
    /// reads the fields from the area and writes there the ones it changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// The call's context.
    pub ctx: WireContext,
}

/// `stage.invoke` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StageResult {
    /// Inline form: the stage context after the handler ran.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// Area form: the names of the fields the handler wrote into the area (`FinalText`,
    /// `Extra.media_type`, …, and `NoMemory` for the flag); only these are applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dirty_fields: Option<Vec<String>>,
    /// Area form: the `seq` of the call, echoed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
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
