//! `tool_search`: how the model reaches a tool the request did not carry. It answers with the
//! nearest tools' full schemas; the kernel then offers those tools for the rest of the task.

use super::{ToolDoc, ToolIndex};
use hearth_memory::ToolOutput;
use hearth_stages::{
    CallContext, DEFAULT_CAPABILITY, HandlerError, StagesError, ToolDef, ToolOwner, ToolRegistry,
};
use serde_json::{Value, json};
use std::sync::{Arc, Weak};

/// The search tool's name.
pub const TOOL_SEARCH: &str = "tool_search";

/// How many tools one search returns.
pub const SEARCH_K: usize = 5;

/// The search tool's declaration.
pub fn tool_search_def() -> ToolDef {
    ToolDef {
        name: TOOL_SEARCH.into(),
        description: "Find a tool not listed here: describe the task; returns matching tools, which you can then call.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What the tool should do"}},
            "required": ["query"]
        }),
        no_memory: true,
        parallel_safe: true,
        ..ToolDef::default()
    }
}

/// Registers `tool_search` over `tools` (a built-in); a registry that has one keeps it. The
/// handler holds the registry weakly: the registry owns the handler.
pub fn register_tool_search(
    tools: &Arc<ToolRegistry>,
    index: Arc<ToolIndex>,
) -> Result<(), StagesError> {
    if tools.contains(TOOL_SEARCH) {
        return Ok(());
    }
    let registry: Weak<ToolRegistry> = Arc::downgrade(tools);
    let handler = move |call: &CallContext, args: &Value| {
        let query = args["query"].as_str().unwrap_or_default().trim();
        if query.is_empty() {
            return Err(HandlerError::InvalidArguments("`query` is required".into()));
        }
        let tools = registry
            .upgrade()
            .ok_or_else(|| HandlerError::Unavailable("the tool registry is gone".into()))?;
        call.check()?;
        Ok(search(&tools, &index, query))
    };
    tools.register_owned(
        tool_search_def(),
        ToolOwner::builtin(),
        DEFAULT_CAPABILITY,
        handler,
    )
}

/// The [`SEARCH_K`] offered tools nearest to `query`, with their schemas.
pub fn search(tools: &ToolRegistry, index: &ToolIndex, query: &str) -> Value {
    let defs: Vec<ToolDef> = tools
        .defs()
        .into_iter()
        .filter(|d| d.name != TOOL_SEARCH)
        .collect();
    let docs: Vec<ToolDoc> = defs.iter().map(ToolDoc::of).collect();
    let found: Vec<Value> = index
        .rank(query, &docs)
        .into_iter()
        .take(SEARCH_K)
        .filter_map(|name| defs.iter().find(|d| d.name == name))
        .map(|d| json!({"name": d.name, "description": d.description, "parameters": d.parameters}))
        .collect();
    json!({ "tools": found })
}

/// The names `tool_search` returned in this task, in order.
pub fn found_tools(results: &[ToolOutput]) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.name == TOOL_SEARCH)
        .filter_map(|r| serde_json::from_str::<Value>(&r.output).ok())
        .flat_map(|v| {
            v["tools"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t["name"].as_str().map(str::to_owned))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .collect()
}
