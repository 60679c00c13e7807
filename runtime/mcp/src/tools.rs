//! A server's tools in the tool registry: prefixed names, owner and capability marks, and the
//! handler that calls the server.

use std::time::Duration;

use hearth_stages::{HandlerError, MAX_FUNCTION_NAME_LEN, ToolDef, valid_function_name};
use serde_json::{Value, json};

use crate::McpError;
use crate::client::RemoteTool;
use crate::content::map_call_result;

/// How long a tool call may run when neither the task nor the entry sets a limit.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// The capability of a tool the server marks read-only.
pub const CAP_READ: &str = "mcp.read";
/// The capability of every other tool (it may change something).
pub const CAP_WRITE: &str = "mcp.write";

/// The registry name of `server`'s tool `tool`: `<server>_<tool>`, with characters the model
/// APIs refuse (`.`, `/`) turned into `_`. `None` when it would not fit in 64 characters.
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    let cleaned: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{server}_{cleaned}");
    (name.len() <= MAX_FUNCTION_NAME_LEN && valid_function_name(&name)).then_some(name)
}

/// A remote tool as a registry definition and its capability.
pub(crate) fn definition(server: &str, tool: &RemoteTool) -> Option<(ToolDef, &'static str)> {
    let name = tool_name(server, &tool.name)?;
    let read_only = tool.annotations["readOnlyHint"].as_bool() == Some(true);
    let parameters = if tool.input_schema.is_object() {
        tool.input_schema.clone()
    } else {
        json!({"type": "object", "properties": {}})
    };
    let def = ToolDef {
        name,
        plugin: server.to_owned(),
        description: tool.description.clone(),
        parameters,
        parallel_safe: read_only,
        cancellable: true,
        ..ToolDef::default()
    };
    Some((def, if read_only { CAP_READ } else { CAP_WRITE }))
}

/// A call's outcome as the tool's result or typed error.
pub(crate) fn into_result(outcome: Result<Value, McpError>) -> Result<Value, HandlerError> {
    match outcome {
        Ok(result) => map_call_result(&result),
        Err(McpError::Cancelled { .. }) => Err(HandlerError::Cancelled),
        Err(McpError::TimedOut { .. }) => Err(HandlerError::TimedOut),
        Err(e @ McpError::Closed { .. }) => Err(HandlerError::Unavailable(format!(
            "{e}; it is restarted by its supervisor, try again shortly"
        ))),
        Err(e @ McpError::Connect { .. }) => Err(HandlerError::Unavailable(e.to_string())),
        Err(McpError::Remote {
            code: -32602,
            message,
            ..
        }) => Err(HandlerError::InvalidArguments(message)),
        Err(e) => Err(HandlerError::Failed(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_and_cleaned_or_refused() {
        assert_eq!(
            tool_name("fs", "read_file").as_deref(),
            Some("fs_read_file")
        );
        assert_eq!(tool_name("ev", "get-sum").as_deref(), Some("ev_get-sum"));
        assert_eq!(tool_name("x", "a.b/c").as_deref(), Some("x_a_b_c"));
        assert_eq!(tool_name("x", &"y".repeat(70)), None);
    }

    #[test]
    fn read_only_tools_are_marked_and_may_run_in_parallel() {
        let tool = RemoteTool {
            name: "read".into(),
            description: "reads".into(),
            input_schema: Value::Null,
            annotations: json!({"readOnlyHint": true}),
        };
        let (def, cap) = definition("fs", &tool).expect("fits");
        assert_eq!(cap, CAP_READ);
        assert!(def.parallel_safe && def.cancellable);
        assert_eq!(def.parameters["type"], "object");
        let write = RemoteTool {
            annotations: Value::Null,
            ..tool
        };
        assert_eq!(definition("fs", &write).expect("fits").1, CAP_WRITE);
    }
}
