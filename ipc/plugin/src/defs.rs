//! What a plugin declares when it registers a tool, a stage handler or a channel.

use serde::Serialize;
use serde_json::{Value, json};

/// A tool as the model and the kernel see it (the SPEC §6.9 `ToolDef`, minus the in-process
/// cleaner function).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    /// The function name offered to the model (`^[a-zA-Z0-9_-]{1,64}$`); unique across plugins.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
    /// May run concurrently with the other tools of a batch.
    pub parallel_safe: bool,
    /// Forces the whole batch to run serially.
    pub serial: bool,
    /// The kernel may cancel it while it runs (the handler polls
    /// [`CallContext::is_cancelled`](crate::CallContext::is_cancelled)).
    pub cancellable: bool,
    /// Its output never becomes a memory candidate.
    pub no_memory: bool,
    /// Its output prunes the kernel's working window, as the query (`context_policy:
    /// "prune"`).
    #[serde(rename = "context_policy", serialize_with = "prune_or_none")]
    pub prunes_context: bool,
    /// Its output recalls related memory into the prompt (`recall_policy: "auto"`).
    #[serde(rename = "recall_policy", serialize_with = "auto_or_none")]
    pub recalls_memory: bool,
}

/// `context_policy` on the wire.
fn prune_or_none<S: serde::Serializer>(set: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *set { "prune" } else { "none" })
}

/// `recall_policy` on the wire.
fn auto_or_none<S: serde::Serializer>(set: &bool, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(if *set { "auto" } else { "none" })
}

impl ToolDef {
    /// A tool taking an arguments object with no declared properties.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object", "properties": {}}),
            parallel_safe: false,
            serial: false,
            cancellable: false,
            no_memory: false,
            prunes_context: false,
            recalls_memory: false,
        }
    }

    /// Sets the JSON schema of the arguments.
    pub fn parameters(mut self, schema: Value) -> ToolDef {
        self.parameters = schema;
        self
    }

    /// Marks the tool safe to run beside others of its batch.
    pub fn parallel_safe(mut self) -> ToolDef {
        self.parallel_safe = true;
        self
    }

    /// Marks the tool cancellable.
    pub fn cancellable(mut self) -> ToolDef {
        self.cancellable = true;
        self
    }

    /// Its output prunes the working window as the query (for a tool whose result changes
    /// what the conversation is about, such as opening a document).
    pub fn prunes_context(mut self) -> ToolDef {
        self.prunes_context = true;
        self
    }

    /// Its output recalls related memories into the prompt (for a tool whose result names
    /// people, places or things the user may have talked about).
    pub fn recalls_memory(mut self) -> ToolDef {
        self.recalls_memory = true;
        self
    }
}

/// Where and in what order a stage handler runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSpec {
    /// One of the seven stage names (`pre_action`, `after_toolcall`, …).
    pub stage: String,
    /// `"global"` or `"own_tools"`.
    pub scope: String,
    /// Higher runs earlier.
    pub priority: i32,
}

impl StageSpec {
    /// Global scope, priority 0.
    pub fn new(stage: impl Into<String>) -> StageSpec {
        StageSpec {
            stage: stage.into(),
            scope: "global".to_owned(),
            priority: 0,
        }
    }

    /// Only this plugin's own tool calls (on before_toolcall / after_toolcall).
    pub fn own_tools(mut self) -> StageSpec {
        self.scope = "own_tools".to_owned();
        self
    }

    /// Sets the priority.
    pub fn priority(mut self, priority: i32) -> StageSpec {
        self.priority = priority;
        self
    }
}

/// An output channel: where replies can be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputChannel {
    /// The channel name.
    pub name: String,
    /// What it can carry (`"text"`, `"image"`, `"audio"`, …); at least one.
    pub caps: Vec<String>,
    /// One line for the model and the user.
    pub description: String,
    /// Replies sent through it never become memory candidates.
    pub no_memory: bool,
}

impl OutputChannel {
    /// A text-only channel.
    pub fn text(name: impl Into<String>, description: impl Into<String>) -> OutputChannel {
        OutputChannel {
            name: name.into(),
            caps: vec!["text".to_owned()],
            description: description.into(),
            no_memory: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memory policies go out under the names and values the host's registry reads.
    #[test]
    fn memory_policies_go_out_as_the_host_reads_them() {
        let plain = serde_json::to_value(ToolDef::new("a", "b")).expect("serialises");
        assert_eq!(
            (&plain["context_policy"], &plain["recall_policy"]),
            (&json!("none"), &json!("none"))
        );
        let both = ToolDef::new("a", "b").prunes_context().recalls_memory();
        let wire = serde_json::to_value(both).expect("serialises");
        assert_eq!(
            (&wire["context_policy"], &wire["recall_policy"]),
            (&json!("prune"), &json!("auto"))
        );
        assert!(wire.get("prunes_context").is_none() && wire.get("recalls_memory").is_none());
    }
}
