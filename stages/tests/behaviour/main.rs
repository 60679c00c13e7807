//! Behaviour tests of hearth-stages, one binary with a module per area.

mod output_dispatch;
mod pipeline_isolation;
mod pipeline_order;
mod tool_registry;

use hearth_testkit::within;
