//! `skill_load`: the one tool of the skills. Its description lists every skill's name and
//! description (all the prompt carries of them); a call returns a skill's body and the names
//! of its bundled files, or one bundled file as text. It never runs anything.

use crate::Skill;
use hearth_stages::{
    CallContext, HandlerError, StagesError, ToolDef, ToolOwner, ToolRegistry, ToolSource,
};
use serde_json::{Value, json};
use std::path::{Component, Path};

/// The tool's name.
pub const SKILL_LOAD: &str = "skill_load";

/// Bundled files are returned up to this size.
const MAX_FILE_BYTES: u64 = 256 << 10;

fn description(skills: &[Skill]) -> String {
    let list: Vec<String> = skills
        .iter()
        .map(|s| format!("- {}: {}", s.name, s.description))
        .collect();
    format!(
        "Load a skill's instructions before a task it covers. Skills:\n{}",
        list.join("\n")
    )
}

/// Registers `skill_load` over `skills` (owner `skill:skills`); with no skills it registers
/// nothing.
pub fn register_skill_load(tools: &ToolRegistry, skills: Vec<Skill>) -> Result<(), StagesError> {
    if skills.is_empty() {
        return Ok(());
    }
    let def = ToolDef {
        name: SKILL_LOAD.into(),
        description: description(&skills),
        parameters: json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The skill"},
                "file": {"type": "string", "description": "A bundled file to read instead of the instructions"}
            },
            "required": ["name"]
        }),
        no_memory: true,
        parallel_safe: true,
        ..ToolDef::default()
    };
    let handler = move |call: &CallContext, args: &Value| {
        call.check()?;
        let name = args["name"].as_str().unwrap_or_default();
        let skill = skills.iter().find(|s| s.name == name).ok_or_else(|| {
            let known: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
            HandlerError::InvalidArguments(format!(
                "no skill {name:?}; skills: {}",
                known.join(", ")
            ))
        })?;
        match args["file"].as_str().filter(|f| !f.is_empty()) {
            None => {
                Ok(json!({"name": skill.name, "instructions": skill.body, "files": skill.files}))
            }
            Some(file) => read_bundled(skill, file)
                .map(|text| json!({"name": skill.name, "file": file, "text": text})),
        }
    };
    tools.register_owned(
        def,
        ToolOwner::new(ToolSource::Skill, "skills"),
        "skill.read",
        handler,
    )
}

/// A bundled file as text: only a file the skill lists, so no path leaves its folder.
fn read_bundled(skill: &Skill, file: &str) -> Result<String, HandlerError> {
    let inside = Path::new(file)
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    if !inside || !skill.files.iter().any(|f| f == file) {
        return Err(HandlerError::InvalidArguments(format!(
            "skill {} has no file {file:?}; files: {}",
            skill.name,
            skill.files.join(", ")
        )));
    }
    let path = skill.dir.join(file);
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if len > MAX_FILE_BYTES {
        return Err(HandlerError::Failed(format!(
            "{file} is {len} bytes; at most {MAX_FILE_BYTES} are returned"
        )));
    }
    std::fs::read_to_string(&path).map_err(|e| HandlerError::Failed(format!("{file}: {e}")))
}
