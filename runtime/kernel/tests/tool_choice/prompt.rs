//! The request a kernel with `n` tools sends for one input, and its size in the default
//! model's tokens (shared by the tool-choice tests and the `tool_schemas` bench).

use hearth_kernel::events::EventBus;
use hearth_kernel::graph::{self, GraphConfig, Registries};
use hearth_kernel::memory_service::MemoryConfig;
use hearth_kernel::tool_choice::TOOL_SEARCH;
use hearth_llm::provider::{ChatRequest, ScriptStep, ScriptedProvider, ToolSpec};
use hearth_memory::recall_bench::ModelTokens;
use hearth_stages::{ToolDef, tool_fn};
use hearth_testkit::tool_set::labelled_tools;
use std::sync::Arc;
use std::time::Duration;

/// Tools the memory service registers itself (`coldcontext_query`, `doc_query`, `doc_commit`).
pub const MEMORY_TOOLS: usize = 3;

/// Registers the first `n` tools of the labelled set.
pub fn register_labelled(registries: &Registries, n: usize) {
    for t in labelled_tools().into_iter().take(n) {
        let def = ToolDef {
            name: t.name.clone(),
            description: t.description.clone(),
            parameters: t.parameters(),
            ..ToolDef::default()
        };
        let name = t.name.clone();
        registries
            .tools
            .register(
                def,
                tool_fn(move |_| Ok(serde_json::json!(format!("{name} done")))),
            )
            .expect("labelled tool registers");
    }
}

/// What a kernel sent, and every schema it could have offered.
pub struct Sent {
    /// The requests, in order.
    pub requests: Vec<ChatRequest>,
    /// Every registered tool but `tool_search`, as a request would carry it.
    pub every_schema: Vec<ToolSpec>,
}

/// The requests a kernel with memory (and so the recall model) and `n` tools in all sends
/// while answering `inputs` with the scripted `steps`.
pub fn requests_for(n: usize, inputs: &[&str], steps: Vec<ScriptStep>) -> Vec<ChatRequest> {
    sent_for(n, inputs, steps).requests
}

/// [`requests_for`] to a model whose window is `window` tokens (0: undeclared, the budget's
/// 32,768).
pub fn requests_in(
    n: usize,
    window: usize,
    inputs: &[&str],
    steps: Vec<ScriptStep>,
) -> Vec<ChatRequest> {
    sent_in(n, window, inputs, steps).requests
}

/// [`requests_for`], with every schema the kernel could have offered.
pub fn sent_for(n: usize, inputs: &[&str], steps: Vec<ScriptStep>) -> Sent {
    sent_in(n, 0, inputs, steps)
}

/// [`sent_for`] to a model whose window is `window` tokens.
pub fn sent_in(n: usize, window: usize, inputs: &[&str], steps: Vec<ScriptStep>) -> Sent {
    let dir = hearth_testkit::fresh_dir("tool-choice");
    let provider = Arc::new(ScriptedProvider::new(steps).with_max_context(window));
    let registries = Registries::default();
    register_labelled(&registries, n.saturating_sub(MEMORY_TOOLS));
    let memory = MemoryConfig {
        max_context_size: 200,
        ..MemoryConfig::at(dir.join("memory.db"))
    };
    let cfg = GraphConfig::unpinned(1);
    let events = EventBus::with_default_ring("hearth");
    let tools = registries.tools.clone();
    let kernel = graph::build_with(
        cfg,
        provider.clone(),
        registries,
        events,
        None,
        Some(memory),
    )
    .expect("kernel builds");
    for input in inputs {
        kernel
            .handle()
            .send_text("cli", input)
            .recv_timeout(Duration::from_secs(120))
            .expect("a reply");
    }
    kernel.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
    let every_schema = tools
        .defs()
        .into_iter()
        .filter(|d| d.name != TOOL_SEARCH)
        .map(|d| ToolSpec {
            name: d.name,
            description: d.description,
            parameters: d.parameters,
        })
        .collect();
    Sent {
        requests: provider.requests(),
        every_schema,
    }
}

/// Prompt tokens of `request` by the default model's tokenizer: every message's text and the
/// tool schemas as the request serialises them (a chat template adds a few per message).
pub fn prompt_tokens(tokens: &ModelTokens, request: &ChatRequest) -> usize {
    let messages: usize = request
        .messages
        .iter()
        .map(|m| tokens.count(&m.content))
        .sum();
    let schemas = serde_json::to_string(&request.tools).expect("schemas serialise");
    messages + tokens.count(&schemas)
}

/// The tokenizer `make setup` installs.
pub fn model_tokens() -> ModelTokens {
    ModelTokens::locate().expect("the default embedding model is installed (make setup)")
}
