//! Hearth's behaviour tests: one integration binary, one module per `<area>_<behaviour>`.
//! Every test runs under a watchdog so a broken invariant fails instead of hanging.

#[path = "e2e/support.rs"]
mod support;

#[path = "e2e/kernel_budget.rs"]
mod kernel_budget;
#[path = "e2e/kernel_cooldown.rs"]
mod kernel_cooldown;
#[path = "e2e/kernel_handler_contract.rs"]
mod kernel_handler_contract;
#[path = "e2e/kernel_invariants.rs"]
mod kernel_invariants;
#[path = "e2e/kernel_language.rs"]
mod kernel_language;
#[path = "e2e/kernel_memory_candidate.rs"]
mod kernel_memory_candidate;
#[path = "e2e/kernel_preemption.rs"]
mod kernel_preemption;
#[path = "e2e/kernel_shutdown.rs"]
mod kernel_shutdown;
#[path = "e2e/kernel_skips.rs"]
mod kernel_skips;
#[path = "e2e/kernel_stop.rs"]
mod kernel_stop;
#[path = "e2e/kernel_tool_loop.rs"]
mod kernel_tool_loop;
