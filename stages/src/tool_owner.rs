//! Who offers a tool, what it may touch, and which tools the model must not be offered.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolSource {
    /// Compiled into the daemon.
    Builtin,
    /// A process plugin.
    Plugin,
    /// An MCP server.
    Mcp,
    /// A Lua script plugin.
    Lua,
    /// A SKILL.md skill.
    Skill,
}

impl ToolSource {
    /// The word used in owner keys (`mcp:fs`) and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolSource::Builtin => "builtin",
            ToolSource::Plugin => "plugin",
            ToolSource::Mcp => "mcp",
            ToolSource::Lua => "lua",
            ToolSource::Skill => "skill",
        }
    }
}

/// The owner of a tool: a source and the name within it (`mcp` server `fs`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolOwner {
    /// The kind of owner.
    pub source: ToolSource,
    /// The plugin's, server's or skill's name; empty for built-ins.
    pub name: String,
}

impl ToolOwner {
    /// A built-in tool's owner.
    pub fn builtin() -> ToolOwner {
        ToolOwner::new(ToolSource::Builtin, "")
    }

    /// An owner of `source` named `name`.
    pub fn new(source: ToolSource, name: &str) -> ToolOwner {
        ToolOwner {
            source,
            name: name.to_owned(),
        }
    }

    /// `builtin`, `plugin:weather`, `mcp:fs`: how a policy names the owner.
    pub fn key(&self) -> String {
        if self.name.is_empty() {
            self.source.as_str().to_owned()
        } else {
            format!("{}:{}", self.source.as_str(), self.name)
        }
    }
}

impl fmt::Display for ToolOwner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.source, self.name.as_str()) {
            (ToolSource::Builtin, _) => f.write_str("the built-in tools"),
            (ToolSource::Plugin, n) => write!(f, "plugin {n}"),
            (ToolSource::Mcp, n) => write!(f, "mcp server {n}"),
            (ToolSource::Lua, n) => write!(f, "lua plugin {n}"),
            (ToolSource::Skill, n) => write!(f, "skill {n}"),
        }
    }
}

/// Which tools are kept from the model: by tool name or owner key (`disabled`), or by the
/// capability they are marked with (`denied`). A kept-back tool is neither offered nor run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolPolicy {
    /// Tool names (`fs_write_file`) or owner keys (`mcp:fs`, `plugin:weather`, `builtin`).
    pub disabled: BTreeSet<String>,
    /// Capabilities (`mcp.write`, `network`) no tool marked with may be offered.
    pub denied: BTreeSet<String>,
}

impl ToolPolicy {
    /// Why a tool is kept back, or `None` when it may be offered.
    pub fn refusal(&self, name: &str, owner: &ToolOwner, capability: &str) -> Option<String> {
        if self.disabled.contains(name) {
            return Some(format!("tool {name} is disabled"));
        }
        let key = owner.key();
        if self.disabled.contains(&key) {
            return Some(format!("tool {name} belongs to {owner}, which is disabled"));
        }
        if self.denied.contains(capability) {
            return Some(format!(
                "tool {name} needs capability {capability}, which is denied"
            ));
        }
        None
    }
}
