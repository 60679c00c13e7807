//! The knowledge base tools (SPEC §8.2): `knowledge_search`, `knowledge_create`,
//! `knowledge_list`, `knowledge_read` and `knowledge_delete` over `<data_dir>/knowledge/`
//! (`<name>/content.md` files the user may also edit by hand) and its index
//! `<data_dir>/knowledge.db`.
//!
//! The [`KnowledgeBase`] is the index file's one owner; the kernel holds it behind one mutex
//! that only these tools take, on the tool pool's threads, so a long write (a large document
//! being embedded) never holds the store's owner or the kernel's worker. It opens on the first
//! call, with the recall model once that has loaded; opened before, it is reopened when the
//! model arrives and the documents gain their vectors then.

use crate::dense_slot::DenseSlot;
use crate::kernel_tool::{self, KernelTool};
use hearth_knowledge::{KnowledgeBase, KnowledgeError, render_hits, tree};
use hearth_stages::{HandlerError, ToolRegistry};
use parking_lot::Mutex;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// Results `knowledge_search` gives when the call does not say (SPEC §8.2).
const DEFAULT_TOP_K: u64 = 5;
/// Characters of a document `knowledge_read` returns per call; `offset` pages on.
const READ_CHARS: usize = 16_000;

/// Where the knowledge base lives.
#[derive(Clone, Debug)]
pub struct KnowledgeSettings {
    /// The documents' directory (`<data_dir>/knowledge`).
    pub root: PathBuf,
    /// The derived index (`<data_dir>/knowledge.db`).
    pub index: PathBuf,
}

/// The open knowledge base and whether it has the recall model.
struct Open {
    base: KnowledgeBase,
    dense: bool,
}

/// The tools' shared state: the settings, the model slot and the base once open.
struct Knowledge {
    settings: KnowledgeSettings,
    dense: DenseSlot,
    open: Mutex<Option<Open>>,
}

impl Knowledge {
    /// Runs `op` on the base, opening (or reopening with the model) first.
    fn with<T>(
        &self,
        op: impl FnOnce(&mut KnowledgeBase) -> Result<T, KnowledgeError>,
    ) -> Result<T, HandlerError> {
        let mut open = self.open.lock();
        let model = self.dense.get();
        if open.as_ref().is_none_or(|o| !o.dense && model.is_some()) {
            *open = None;
            let dense = model.is_some();
            let base = KnowledgeBase::open(&self.settings.root, &self.settings.index, model)
                .map_err(|e| HandlerError::Unavailable(format!("knowledge base: {e}")))?;
            if let Some(aside) = base.moved_aside() {
                tracing::warn!(path = %aside.display(), "knowledge index was damaged; rebuilt from the files");
            }
            *open = Some(Open { base, dense });
        }
        let base = &mut open.as_mut().expect("opened above").base;
        op(base).map_err(handler_error)
    }
}

/// A caller's mistake is `invalid_arguments`; the file system, SQLite or the model `failed`.
fn handler_error(e: KnowledgeError) -> HandlerError {
    match e {
        KnowledgeError::InvalidName { .. }
        | KnowledgeError::InvalidArguments(_)
        | KnowledgeError::NotFound { .. }
        | KnowledgeError::Exists { .. }
        | KnowledgeError::TooLarge { .. } => HandlerError::InvalidArguments(e.to_string()),
        other => HandlerError::Failed(other.to_string()),
    }
}

/// A required text argument, kept as written (a document's content is not trimmed).
fn text(args: &Value, name: &str) -> Result<String, HandlerError> {
    kernel_tool::required_str(args, name).map(str::to_owned)
}

type Handler = fn(&Knowledge, &Value) -> Result<Value, HandlerError>;

/// Registers the knowledge tools over `settings`; vectors come from `dense` once it is filled.
pub fn register(tools: &ToolRegistry, settings: KnowledgeSettings, dense: DenseSlot) {
    let shared = Arc::new(Knowledge {
        settings,
        dense,
        open: Mutex::new(None),
    });
    let name_param = json!({"type": "string", "description": "The document's name, e.g. recipes/bread (categories are folders)"});
    let specs: [(&str, &str, Value, Handler, bool); 5] = [
        (
            "knowledge_search",
            "Search the user's knowledge base (their own documents and notes) by meaning and keywords.",
            json!({"type": "object", "properties": {
                "query": {"type": "string"},
                "top_k": {"type": "integer", "description": "How many documents (default 5)"},
                "hits": {"type": "boolean", "description": "Also answer each hit's name, category, passage and score (default false)"}
            }, "required": ["query"]}),
            |k, a| {
                let query = text(a, "query")?;
                let top = a["top_k"].as_u64().unwrap_or(DEFAULT_TOP_K).clamp(1, 20) as usize;
                let hits = k.with(|kb| kb.search(&query, top))?;
                let text = if hits.is_empty() {
                    "No document matches.".into()
                } else {
                    render_hits(&hits)
                };
                if a["hits"] != true {
                    return Ok(Value::String(text));
                }
                let hits: Vec<Value> = hits
                    .iter()
                    .map(|h| {
                        json!({"name": h.name, "category": h.category,
                               "passage": h.snippet, "score": h.score})
                    })
                    .collect();
                Ok(json!({"text": text, "hits": hits}))
            },
            true,
        ),
        (
            "knowledge_create",
            "Write a document into the knowledge base (markdown). An existing one is replaced only with replace: true.",
            json!({"type": "object", "properties": {
                "name": name_param.clone(),
                "content": {"type": "string", "description": "Markdown text"},
                "replace": {"type": "boolean", "description": "Overwrite an existing document (default false)"}
            }, "required": ["name", "content"]}),
            |k, a| {
                let name = text(a, "name")?;
                let content = text(a, "content")?;
                let replace = a["replace"].as_bool().unwrap_or(false);
                let created = k.with(|kb| kb.create(&name, &content, replace))?;
                Ok(json!({"name": created.name, "replaced": created.replaced}))
            },
            false,
        ),
        (
            "knowledge_list",
            "List the knowledge base's documents as a tree of categories (or, with flat: true, as a list of names).",
            json!({"type": "object", "properties": {
                "flat": {"type": "boolean", "description": "A list of full names instead of the tree (default false)"}
            }}),
            |k, a| {
                let docs = k.with(|kb| kb.list())?;
                let skipped: Vec<Value> = docs
                    .iter()
                    .filter_map(|d| {
                        d.skipped
                            .as_ref()
                            .map(|why| json!({"name": d.name, "skipped": why}))
                    })
                    .collect();
                if a["flat"].as_bool().unwrap_or(false) {
                    let names: Vec<&str> = docs.iter().map(|d| d.name.as_str()).collect();
                    return Ok(
                        json!({"names": names, "documents": docs.len(), "skipped": skipped}),
                    );
                }
                Ok(json!({"tree": tree(&docs), "documents": docs.len(), "skipped": skipped}))
            },
            true,
        ),
        (
            "knowledge_read",
            "Read a knowledge base document by name (long ones in pages: pass offset to go on).",
            json!({"type": "object", "properties": {
                "name": name_param.clone(),
                "offset": {"type": "integer", "description": "Character to start at (default 0)"}
            }, "required": ["name"]}),
            |k, a| {
                let name = text(a, "name")?;
                let offset = a["offset"].as_u64().unwrap_or(0) as usize;
                let content = k.with(|kb| kb.read(&name))?;
                let total = content.chars().count();
                let page: String = content.chars().skip(offset).take(READ_CHARS).collect();
                let next = (offset + READ_CHARS < total).then_some(offset + READ_CHARS);
                Ok(json!({"name": name, "content": page, "chars": total, "next_offset": next}))
            },
            true,
        ),
        (
            "knowledge_delete",
            "Delete a knowledge base document by name.",
            json!({"type": "object", "properties": {"name": name_param}, "required": ["name"]}),
            |k, a| {
                let name = text(a, "name")?;
                k.with(|kb| kb.delete(&name))?;
                tracing::info!(target: "audit", %name, "knowledge document deleted");
                Ok(json!({"deleted": name}))
            },
            false,
        ),
    ];
    for (name, description, parameters, handler, parallel_safe) in specs {
        let k = shared.clone();
        let tool = KernelTool {
            plugin: "knowledge",
            name,
            description,
            parameters,
            parallel_safe,
        };
        kernel_tool::register(tools, tool, move |_, args| handler(&k, args));
    }
}
