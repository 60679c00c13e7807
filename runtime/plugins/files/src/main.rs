//! `files`: read, list, search and write files inside the directories the user allowed in the
//! plugin's config (`roots`), as a plugin process. Nothing outside them is reachable: `..` is
//! refused, absolute paths must lie inside a root, and every open resolves beneath its root in
//! the kernel (`openat2` with `RESOLVE_BENEATH`), so a symlink pointing out (or swapped in after
//! a look) is refused. Large reads travel through the exchange arena (the SDK does that).

#![forbid(unsafe_code)]

mod beneath;
mod ops;
mod roots;

use std::process::ExitCode;
use std::sync::Arc;

use hearth_plugin::{Plugin, Registrar, ToolDef, ToolError, Value, json};
use roots::Roots;

#[derive(Default)]
struct FilesPlugin {
    config: Value,
}

fn path_arg(args: &Value) -> Result<&str, ToolError> {
    args["path"]
        .as_str()
        .ok_or_else(|| ToolError::invalid_arguments("path must be a string"))
}

impl Plugin for FilesPlugin {
    fn name(&self) -> &str {
        "files"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    fn init(&mut self, config: &Value) -> Result<(), ToolError> {
        self.config = config.clone();
        Ok(())
    }

    fn start(&mut self, reg: &mut Registrar<'_>) -> Result<(), ToolError> {
        // The config's roots, else the `plugin.files.roots` setting (`hearth settings`).
        let mut config = self.config.clone();
        if config["roots"].is_null() {
            let roots = reg.host().settings_get("roots")?;
            if roots.is_null() {
                return Err(ToolError::invalid_arguments(
                    "files: no allowed directory: set config.roots or the setting \
                     plugin.files.roots (a list of paths, or {\"path\", \"write\"} objects)",
                ));
            }
            if !config.is_object() {
                config = json!({});
            }
            config["roots"] = roots;
        }
        let roots = Arc::new(Roots::from_config(&config).map_err(ToolError::invalid_arguments)?);
        let where_ = roots.listed();
        let r = Arc::clone(&roots);
        reg.tool(
            ToolDef::new("files_read", format!("Read a text file inside the allowed directories ({where_}). Long files are read in windows: pass offset (and length) to continue.")).parameters(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Absolute, or relative to the first allowed directory"},
                    "offset": {"type": "integer", "description": "Byte to start at (default 0)"},
                    "length": {"type": "integer", "description": "Bytes to read at most"}
                },
                "required": ["path"]
            })).parallel_safe(),
            move |_, args| {
                let target = r.resolve(path_arg(&args)?)?;
                let offset = args["offset"].as_u64().unwrap_or(0);
                ops::read(&target, offset, args["length"].as_u64(), r.max_read)
            },
        )?;
        let r = Arc::clone(&roots);
        reg.tool(
            ToolDef::new("files_list", format!("List a directory inside the allowed directories ({where_}).")).parameters(json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Default: the first allowed directory"}}
            })).parallel_safe(),
            move |_, args| {
                let target = r.resolve(args["path"].as_str().unwrap_or("."))?;
                ops::list(&target)
            },
        )?;
        let r = Arc::clone(&roots);
        reg.tool(
            ToolDef::new("files_search", format!("Find files under a directory ({where_}) whose name or lines contain a text, ignoring case.")).parameters(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "path": {"type": "string", "description": "Directory to search (default: the first allowed one)"},
                    "max_results": {"type": "integer", "description": "Default 50"}
                },
                "required": ["query"]
            })).parallel_safe(),
            move |_, args| {
                let query = args["query"]
                    .as_str()
                    .ok_or_else(|| ToolError::invalid_arguments("query must be a string"))?;
                let target = r.resolve(args["path"].as_str().unwrap_or("."))?;
                let max = args["max_results"].as_u64().unwrap_or(50).clamp(1, 1000) as usize;
                ops::search(&target, query, max, r.max_read)
            },
        )?;
        let r = roots;
        reg.tool(
            ToolDef::new("files_write", format!("Write (or append to) a text file inside an allowed directory that permits writing ({where_}).")).parameters(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "append": {"type": "boolean", "description": "Add to the end instead of replacing (default false)"}
                },
                "required": ["path", "content"]
            })),
            move |_, args| {
                let content = args["content"]
                    .as_str()
                    .ok_or_else(|| ToolError::invalid_arguments("content must be a string"))?;
                let target = r.resolve(path_arg(&args)?)?;
                let append = args["append"].as_bool().unwrap_or(false);
                ops::write(&target, content, append)
            },
        )?;
        Ok(())
    }
}

fn main() -> ExitCode {
    hearth_plugin::run(FilesPlugin::default())
}
