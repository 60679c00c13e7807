//! Behaviour tests of hearth-stages, one binary with a module per area.

mod output_dispatch;
mod pipeline_isolation;
mod pipeline_order;
mod pipeline_requests;
mod tool_contract;
mod tool_registry;
mod tool_sources;

use std::time::Duration;

use hearth_stages::CallContext;
use hearth_testkit::within;

/// A kernel call with a deadline far beyond any test's.
pub fn call() -> CallContext {
    CallContext::kernel(Duration::from_secs(60))
}
