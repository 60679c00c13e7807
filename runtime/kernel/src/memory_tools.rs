//! The memory tools the model can call (SPEC §8.2, with Hearth's cold context): recall by
//! meaning and keywords (`coldcontext_query`, and `doc_query` for prompts written for the
//! original), and `doc_commit` to store a note. Recall never deletes (DESIGN §4.2).

use crate::memory_service::MemoryService;
use hearth_stages::{CallContext, HandlerError, ToolDef, ToolRegistry};
use serde_json::{Value, json};

const DEFAULT_TOP_K: u64 = 3;

/// Registers the memory tools (`coldcontext_query`, `doc_commit`) over `memory`.
pub fn register(tools: &ToolRegistry, memory: &MemoryService) {
    let query_params = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in any words"},
            "top_k": {"type": "integer", "description": "How many memories (default 3)"}
        },
        "required": ["query"]
    });
    for (name, description) in [
        (
            "coldcontext_query",
            "Search long-term memory (past conversations moved out of the working context) by meaning and keywords; found items come back into context at their original time.",
        ),
        (
            "doc_query",
            "Same as coldcontext_query: search long-term memory.",
        ),
    ] {
        let m = memory.clone();
        let def = ToolDef {
            name: name.into(),
            plugin: "memory".into(),
            description: description.into(),
            parameters: query_params.clone(),
            no_memory: true,
            parallel_safe: true,
            ..ToolDef::default()
        };
        let registered = tools.register(def, move |call: &CallContext, args: &Value| {
            let query = args["query"]
                .as_str()
                .unwrap_or_default()
                .trim()
                .to_string();
            if query.is_empty() {
                return Err(HandlerError::InvalidArguments("`query` is required".into()));
            }
            let k = args["top_k"].as_u64().unwrap_or(DEFAULT_TOP_K).clamp(1, 20) as usize;
            call.check()?;
            m.query(query, k)
                .map(Value::String)
                .map_err(HandlerError::Failed)
        });
        if let Err(e) = registered {
            tracing::error!("memory tool {name}: {e}");
        }
    }
    let m = memory.clone();
    let def = ToolDef {
        name: "doc_commit".into(),
        plugin: "memory".into(),
        description: "Store a note in long-term memory (for facts worth keeping).".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "content": {"type": "string"},
                "summary": {"type": "string", "description": "Short title (default: the start of the content)"}
            },
            "required": ["content"]
        }),
        no_memory: true,
        ..ToolDef::default()
    };
    let registered = tools.register(def, move |call: &CallContext, args: &Value| {
        let content = args["content"].as_str().unwrap_or_default().to_string();
        let summary = args["summary"].as_str().unwrap_or_default().to_string();
        call.check()?;
        m.commit(content, summary)
            .map(Value::String)
            .map_err(HandlerError::Failed)
    });
    if let Err(e) = registered {
        tracing::error!("memory tool doc_commit: {e}");
    }
}
