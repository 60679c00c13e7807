//! Behaviour tests of hearth-stages, one binary with a module per area.

mod output_dispatch;
mod pipeline_isolation;
mod pipeline_order;
mod pipeline_requests;
mod tool_contract;
mod tool_registry;
mod tool_sources;

use std::time::Duration;

use hearth_stages::{CallContext, ToolDef, ToolHandler, tool_fn};
use hearth_testkit::within;
use serde_json::Value;

/// A tool declaration with only a name.
pub fn def(name: &str) -> ToolDef {
    ToolDef {
        name: name.into(),
        ..ToolDef::default()
    }
}

/// A tool that answers `v` whatever it is asked.
pub fn answer(v: Value) -> impl ToolHandler {
    tool_fn(move |_: &Value| Ok(v.clone()))
}

/// A kernel call with a deadline far beyond any test's.
pub fn call() -> CallContext {
    CallContext::kernel(Duration::from_secs(60))
}
