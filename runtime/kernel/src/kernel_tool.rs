//! Registering a tool the kernel itself serves (memory, graph, knowledge): one place for what
//! such a tool declares, so every one of them reads the same way in the registry.

use hearth_stages::{CallContext, HandlerError, ToolDef, ToolRegistry};
use serde_json::Value;

/// The string argument `name`, as given; `InvalidArguments` when it is absent or blank.
pub(crate) fn required_str<'a>(args: &'a Value, name: &str) -> Result<&'a str, HandlerError> {
    args[name]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| HandlerError::InvalidArguments(format!("`{name}` is required")))
}

/// What a kernel tool declares.
pub(crate) struct KernelTool<'a> {
    /// Its owner's name in the registry (`memory`, `knowledge`).
    pub plugin: &'a str,
    /// The tool's name.
    pub name: &'a str,
    /// What the model is told it does.
    pub description: &'a str,
    /// Its JSON schema.
    pub parameters: Value,
    /// Whether calls may run beside others of the same batch.
    pub parallel_safe: bool,
}

/// Registers `tool` with `handler`, cancelled-before-start checked first. A tool's result is
/// never recalled into memory (`no_memory`): it is memory already. A refusal is logged.
pub(crate) fn register(
    tools: &ToolRegistry,
    tool: KernelTool<'_>,
    handler: impl Fn(&CallContext, &Value) -> Result<Value, HandlerError> + Send + Sync + 'static,
) {
    let def = ToolDef {
        name: tool.name.into(),
        plugin: tool.plugin.into(),
        description: tool.description.into(),
        parameters: tool.parameters,
        no_memory: true,
        parallel_safe: tool.parallel_safe,
        ..ToolDef::default()
    };
    let registered = tools.register(def, move |call: &CallContext, args: &Value| {
        call.check()?;
        handler(call, args)
    });
    if let Err(e) = registered {
        tracing::error!("{} tool {}: {e}", tool.plugin, tool.name);
    }
}
