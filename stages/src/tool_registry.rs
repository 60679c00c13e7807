//! The kernel's table of plugin tools (the original's StageHost tool half).

use std::collections::HashMap;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::Value;

use crate::runner::panic_message;
use crate::{CallContext, HandlerError, StagesError, ToolDef, ToolHandler, valid_function_name};

/// A tool as stored: its declaration and its code.
#[derive(Clone)]
pub struct RegisteredTool {
    /// What the model is told and how the kernel treats the tool.
    pub def: ToolDef,
    /// The code.
    pub handler: Arc<dyn ToolHandler>,
}

impl RegisteredTool {
    /// Whether a stop cancels this tool instead of waiting for it (`ToolDef::cancellable`).
    pub fn cancellable(&self) -> bool {
        self.def.cancellable
    }
}

impl fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("def", &self.def)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Table {
    /// Names in registration order (what `defs` lists and the model sees).
    order: Vec<String>,
    tools: HashMap<String, RegisteredTool>,
}

/// Every plugin tool, by name. Safe to share between plugin threads and the turn engine.
///
/// Calls never hold the table lock, so a slow tool does not stall registration or other calls.
#[derive(Default)]
pub struct ToolRegistry {
    table: RwLock<Table>,
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.table.read().order).finish()
    }
}

/// The owner implied by a tool name: the text before the first `_`, or `""` when there is none.
pub fn infer_plugin(tool_name: &str) -> &str {
    tool_name.split_once('_').map_or("", |(plugin, _)| plugin)
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Add a tool. Names are global: a second tool of the same name is refused (the first stays).
    ///
    /// An empty `def.plugin` is inferred from the name (`weather_now` → `weather`; a name without
    /// `_` → `""`). A name that breaks `^[a-zA-Z0-9_-]{1,64}$` is refused, since offering it would
    /// make the upstream reject every request.
    pub fn register(&self, mut def: ToolDef, handler: impl ToolHandler) -> Result<(), StagesError> {
        if !valid_function_name(&def.name) {
            return Err(StagesError::InvalidToolName { name: def.name });
        }
        if def.plugin.is_empty() {
            def.plugin = infer_plugin(&def.name).to_owned();
        }
        let mut table = self.table.write();
        if table.tools.contains_key(&def.name) {
            return Err(StagesError::DuplicateTool { name: def.name });
        }
        table.order.push(def.name.clone());
        let name = def.name.clone();
        let handler: Arc<dyn ToolHandler> = Arc::new(handler);
        table.tools.insert(name, RegisteredTool { def, handler });
        Ok(())
    }

    /// Remove one tool; false when there was none of that name.
    pub fn unregister(&self, name: &str) -> bool {
        let mut table = self.table.write();
        if table.tools.remove(name).is_some() {
            table.order.retain(|n| n != name);
            true
        } else {
            false
        }
    }

    /// Remove every tool of `plugin`; returns how many were removed.
    pub fn unregister_plugin(&self, plugin: &str) -> usize {
        let mut table = self.table.write();
        let before = table.tools.len();
        table.tools.retain(|_, t| t.def.plugin != plugin);
        let Table { order, tools } = &mut *table;
        order.retain(|n| tools.contains_key(n));
        before - table.tools.len()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<RegisteredTool> {
        self.table.read().tools.get(name).cloned()
    }

    /// Whether a tool named `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        self.table.read().tools.contains_key(name)
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.table.read().tools.len()
    }

    /// Whether there is no tool.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every definition, in registration order.
    pub fn defs(&self) -> Vec<ToolDef> {
        let table = self.table.read();
        table
            .order
            .iter()
            .filter_map(|n| table.tools.get(n).map(|t| t.def.clone()))
            .collect()
    }

    /// The plugin that owns tool `name`.
    pub fn plugin_of(&self, name: &str) -> Option<String> {
        self.table
            .read()
            .tools
            .get(name)
            .map(|t| t.def.plugin.clone())
    }

    /// Call tool `name` for `call`. An unknown name is `Unavailable("tool <name> not found in any
    /// plugin")`; a panic in the tool is `Failed("tool <name> handler panic: <msg>")`; a call
    /// already cancelled or past its deadline does not start the tool.
    pub fn execute(
        &self,
        call: &CallContext,
        name: &str,
        args: &Value,
    ) -> Result<Value, HandlerError> {
        let handler = match self.table.read().tools.get(name) {
            Some(t) => Arc::clone(&t.handler),
            None => {
                return Err(HandlerError::Unavailable(format!(
                    "tool {name} not found in any plugin"
                )));
            }
        };
        call.check()?;
        match panic::catch_unwind(AssertUnwindSafe(|| handler.call(call, args))) {
            Ok(result) => result,
            Err(payload) => {
                let msg = panic_message(payload.as_ref());
                tracing::error!(tool = name, "tool handler panicked: {msg}");
                Err(HandlerError::Failed(format!(
                    "tool {name} handler panic: {msg}"
                )))
            }
        }
    }
}
