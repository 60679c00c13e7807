//! What a tool is: its declaration for the model and the code behind it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CallContext, HandlerError};

/// Whether a tool's output triggers a pruning pass over the context window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextPolicy {
    /// The original's empty string.
    #[default]
    #[serde(alias = "")]
    None,
    /// Prune with the cleaned tool output as the query.
    Prune,
}

/// Whether a tool's output triggers an automatic memory recall.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecallPolicy {
    /// The original's empty string.
    #[default]
    #[serde(alias = "")]
    None,
    /// Recall with the cleaned tool output as the query.
    Auto,
}

/// A tool's declaration: what the model is told, and how the kernel must treat it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolDef {
    /// The function name offered to the model; unique across plugins.
    pub name: String,
    /// The owning plugin; inferred from the name when empty (see `ToolRegistry::register`).
    pub plugin: String,
    /// What the tool does, as the model is told.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    /// The tool's output never becomes a memory candidate.
    pub no_memory: bool,
    /// How the tool's output enters the conversation window.
    pub context_policy: ContextPolicy,
    /// How recalled memory treats the tool's output.
    pub recall_policy: RecallPolicy,
    /// May run concurrently with the other tools of a batch.
    pub parallel_safe: bool,
    /// Forces the whole batch to run serially; wins over `parallel_safe`.
    pub serial: bool,
    /// The tool watches `CallContext::is_cancelled` and returns soon after a stop, so a stop
    /// cancels it and does not wait for it; a tool that does not declare this runs to its end.
    pub cancellable: bool,
}

/// The code behind a tool.
pub trait ToolHandler: Send + Sync + 'static {
    /// `args` is the model's arguments object; the `Ok` value is the tool's raw result. `call`
    /// carries the task, the caller's trust, the stop and the deadline the kernel waits until.
    fn call(&self, call: &CallContext, args: &Value) -> Result<Value, HandlerError>;
}

impl<F> ToolHandler for F
where
    F: Fn(&CallContext, &Value) -> Result<Value, HandlerError> + Send + Sync + 'static,
{
    fn call(&self, call: &CallContext, args: &Value) -> Result<Value, HandlerError> {
        self(call, args)
    }
}

/// A tool handler from a closure that needs no call context and fails with a message.
pub fn tool_fn<F>(f: F) -> impl ToolHandler
where
    F: Fn(&Value) -> Result<Value, String> + Send + Sync + 'static,
{
    move |_: &CallContext, args: &Value| f(args).map_err(HandlerError::Failed)
}

/// Whether a batch of tool calls may run in parallel: every tool `parallel_safe` and none `serial`.
///
/// Serial is the default (an empty batch has nothing to parallelise), and `serial` on any one tool
/// wins over every `parallel_safe`.
pub fn batch_is_parallel(batch: &[&ToolDef]) -> bool {
    !batch.is_empty() && batch.iter().all(|d| d.parallel_safe && !d.serial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn policies_accept_the_original_empty_string() {
        let def: ToolDef = serde_json::from_str(
            r#"{"name":"a","context_policy":"","recall_policy":"auto","parallel_safe":true}"#,
        )
        .expect("valid definition");
        assert_eq!(def.context_policy, ContextPolicy::None);
        assert_eq!(def.recall_policy, RecallPolicy::Auto);
        assert!(def.parallel_safe && !def.serial && !def.cancellable);
        let json = serde_json::to_value(&def).expect("serialises");
        assert_eq!(json["context_policy"], "none");
        assert_eq!(json["recall_policy"], "auto");
    }

    #[test]
    fn batch_edges() {
        assert!(!batch_is_parallel(&[]));
        let safe = ToolDef {
            parallel_safe: true,
            ..ToolDef::default()
        };
        let both = ToolDef {
            parallel_safe: true,
            serial: true,
            ..ToolDef::default()
        };
        assert!(batch_is_parallel(&[&safe, &safe]));
        assert!(!batch_is_parallel(&[&safe, &both]));
        assert!(!batch_is_parallel(&[&safe, &ToolDef::default()]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The truth table: parallel iff non-empty, no tool serial, every tool parallel_safe.
        #[test]
        fn batch_truth_table(flags in proptest::collection::vec((any::<bool>(), any::<bool>()), 0..6)) {
            let defs: Vec<ToolDef> = flags
                .iter()
                .map(|&(parallel_safe, serial)| ToolDef { parallel_safe, serial, ..ToolDef::default() })
                .collect();
            let refs: Vec<&ToolDef> = defs.iter().collect();
            let any_serial = flags.iter().any(|f| f.1);
            let all_safe = flags.iter().all(|f| f.0);
            let expected = !flags.is_empty() && !any_serial && all_safe;
            prop_assert_eq!(batch_is_parallel(&refs), expected);
        }
    }
}
