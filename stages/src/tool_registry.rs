//! The kernel's one table of tools from every source (built-in, process plugins, MCP servers,
//! Lua, skills): names unique across all of them, each tool marked with its owner and
//! capability, and a [`ToolPolicy`] that keeps disabled or denied tools from the model.

use std::collections::HashMap;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::Value;

use crate::runner::panic_message;
use crate::{
    CallContext, HandlerError, StagesError, ToolDef, ToolHandler, ToolOwner, ToolPolicy,
    ToolSource, valid_function_name,
};

/// The capability of a tool registered without one.
pub const DEFAULT_CAPABILITY: &str = "tool";

/// A tool as stored: its declaration and its code.
#[derive(Clone)]
pub struct RegisteredTool {
    /// What the model is told and how the kernel treats the tool.
    pub def: ToolDef,
    /// The code.
    pub handler: Arc<dyn ToolHandler>,
    /// Who offers it.
    pub owner: ToolOwner,
    /// What it may touch (`mcp.read`, `mcp.write`, `tool`); a policy can deny it.
    pub capability: String,
}

/// One tool as listed for people (`hearth mcp list`, status): its name, owner and capability,
/// and why the model is not offered it, if it is not.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ToolEntry {
    /// The tool's name.
    pub name: String,
    /// Its owner (`mcp:fs`).
    pub owner: String,
    /// Its capability.
    pub capability: String,
    /// `None` when offered; otherwise the policy's reason.
    pub withheld: Option<String>,
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
            .field("owner", &self.owner)
            .field("capability", &self.capability)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Table {
    /// Names in registration order (what `defs` lists and the model sees).
    order: Vec<String>,
    tools: HashMap<String, RegisteredTool>,
    policy: ToolPolicy,
}

impl Table {
    fn refusal(&self, tool: &RegisteredTool) -> Option<String> {
        self.policy
            .refusal(&tool.def.name, &tool.owner, &tool.capability)
    }
}

fn insert(
    table: &mut Table,
    mut def: ToolDef,
    owner: ToolOwner,
    capability: &str,
    handler: Arc<dyn ToolHandler>,
) -> Result<(), StagesError> {
    if !valid_function_name(&def.name) {
        return Err(StagesError::InvalidToolName { name: def.name });
    }
    if def.plugin.is_empty() {
        def.plugin = owner.name.clone();
    }
    if let Some(existing) = table.tools.get(&def.name) {
        return Err(StagesError::DuplicateTool {
            existing: existing.owner.to_string(),
            incoming: owner.to_string(),
            name: def.name,
        });
    }
    table.order.push(def.name.clone());
    let name = def.name.clone();
    let tool = RegisteredTool {
        def,
        handler,
        owner,
        capability: capability.to_owned(),
    };
    table.tools.insert(name, tool);
    Ok(())
}

/// Every tool, by name. Safe to share between plugin threads and the turn engine.
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

    /// Add a plugin's tool (its owner is `plugin:<def.plugin>`). Names are global: a second
    /// tool of the same name is refused (the first stays).
    ///
    /// An empty `def.plugin` is inferred from the name (`weather_now` → `weather`; a name without
    /// `_` → `""`). A name that breaks `^[a-zA-Z0-9_-]{1,64}$` is refused, since offering it would
    /// make the upstream reject every request.
    pub fn register(&self, mut def: ToolDef, handler: impl ToolHandler) -> Result<(), StagesError> {
        if def.plugin.is_empty() {
            def.plugin = infer_plugin(&def.name).to_owned();
        }
        let owner = ToolOwner::new(ToolSource::Plugin, &def.plugin);
        self.register_owned(def, owner, DEFAULT_CAPABILITY, handler)
    }

    /// Add a tool of `owner`, marked with `capability`. The same rules as [`Self::register`];
    /// a collision names both owners. An empty `def.plugin` becomes the owner's name.
    pub fn register_owned(
        &self,
        def: ToolDef,
        owner: ToolOwner,
        capability: &str,
        handler: impl ToolHandler,
    ) -> Result<(), StagesError> {
        let handler: Arc<dyn ToolHandler> = Arc::new(handler);
        insert(&mut self.table.write(), def, owner, capability, handler)
    }

    /// Replaces every tool of `owner` with `tools` in one step, so a caller never sees the
    /// owner's tools half gone (an MCP server's list change). Returns the tools refused, by the
    /// same rules as [`Self::register_owned`]; the others are in.
    pub fn replace_owned(
        &self,
        owner: &ToolOwner,
        tools: Vec<(ToolDef, String, Arc<dyn ToolHandler>)>,
    ) -> Vec<StagesError> {
        let mut table = self.table.write();
        table.tools.retain(|_, t| t.owner != *owner);
        let Table {
            order, tools: live, ..
        } = &mut *table;
        order.retain(|n| live.contains_key(n));
        tools
            .into_iter()
            .filter_map(|(def, capability, handler)| {
                insert(&mut table, def, owner.clone(), &capability, handler).err()
            })
            .collect()
    }

    /// Replaces the policy; it applies to the next offer and the next call.
    pub fn set_policy(&self, policy: ToolPolicy) {
        self.table.write().policy = policy;
    }

    /// The policy in force.
    pub fn policy(&self) -> ToolPolicy {
        self.table.read().policy.clone()
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

    /// Remove every tool of process plugin `plugin`; returns how many were removed.
    pub fn unregister_plugin(&self, plugin: &str) -> usize {
        self.unregister_where(|t| t.owner.source == ToolSource::Plugin && t.def.plugin == plugin)
    }

    /// Remove every tool of `owner`; returns how many were removed.
    pub fn unregister_owner(&self, owner: &ToolOwner) -> usize {
        self.unregister_where(|t| t.owner == *owner)
    }

    fn unregister_where(&self, gone: impl Fn(&RegisteredTool) -> bool) -> usize {
        let mut table = self.table.write();
        let before = table.tools.len();
        table.tools.retain(|_, t| !gone(t));
        let Table { order, tools, .. } = &mut *table;
        order.retain(|n| tools.contains_key(n));
        before - table.tools.len()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<RegisteredTool> {
        self.table.read().tools.get(name).cloned()
    }

    /// `look` applied to the tool named `name`, under the registry's read lock: a flag of its
    /// definition without the copy of the whole tool (its schema) that [`get`](Self::get)
    /// makes. `None` when there is no such tool.
    pub fn inspect<T>(&self, name: &str, look: impl FnOnce(&RegisteredTool) -> T) -> Option<T> {
        self.table.read().tools.get(name).map(look)
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

    /// Every definition the model may be offered, in registration order: a tool the policy
    /// disables or denies is left out.
    pub fn defs(&self) -> Vec<ToolDef> {
        self.offered().into_iter().map(|(def, _)| def).collect()
    }

    /// What [`Self::defs`] lists, each with its owner (the kernel offers built-ins always).
    pub fn offered(&self) -> Vec<(ToolDef, ToolOwner)> {
        let table = self.table.read();
        table
            .order
            .iter()
            .filter_map(|n| table.tools.get(n))
            .filter(|t| table.refusal(t).is_none())
            .map(|t| (t.def.clone(), t.owner.clone()))
            .collect()
    }

    /// Every tool with its owner, capability and whether it is withheld, in registration order.
    pub fn entries(&self) -> Vec<ToolEntry> {
        let table = self.table.read();
        table
            .order
            .iter()
            .filter_map(|n| table.tools.get(n))
            .map(|t| ToolEntry {
                name: t.def.name.clone(),
                owner: t.owner.key(),
                capability: t.capability.clone(),
                withheld: table.refusal(t),
            })
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
    /// plugin")`; a tool the policy withholds is `Denied` (the model may have guessed its name);
    /// a panic in the tool is `Failed("tool <name> handler panic: <msg>")`; a call already
    /// cancelled or past its deadline does not start the tool.
    pub fn execute(
        &self,
        call: &CallContext,
        name: &str,
        args: &Value,
    ) -> Result<Value, HandlerError> {
        let table = self.table.read();
        let handler = match table.tools.get(name) {
            Some(t) => match table.refusal(t) {
                Some(reason) => return Err(HandlerError::Denied(reason)),
                None => Arc::clone(&t.handler),
            },
            None => {
                return Err(HandlerError::Unavailable(format!(
                    "tool {name} not found in any plugin"
                )));
            }
        };
        drop(table);
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
