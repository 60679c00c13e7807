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
