//! The `hearth memory` control requests: the graph memory, the remembered turns (cold context)
//! and the media store, reached through the memory service like the model's tools, so
//! `memory.db`, `graph.db` and `media.db` keep their one owner.

use super::ControlError;
use hearth_kernel::entry_ref::EntryRef;
pub use hearth_kernel::entry_ref::WINDOW_PREFIX;
use hearth_kernel::graph_service::GraphRequest;
use hearth_kernel::memory_service::MemoryService;
use serde_json::Value;

/// Facts `search` (and entries `recall`) return when the request names no count.
const DEFAULT_SEARCH_K: usize = 10;
pub use hearth_kernel::recalled::ENTRY_PREFIX;

/// Runs one `hearth memory` action.
pub(super) fn memory(
    service: Option<&MemoryService>,
    zone: &hearth_engine::LocalZone,
    action: &str,
    arg: Option<&str>,
    k: Option<usize>,
) -> Result<Value, ControlError> {
    let service =
        service.ok_or_else(|| ControlError::Memory("memory is off in this daemon".into()))?;
    let arg = || {
        arg.map(str::trim)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| ControlError::Invalid(format!("memory {action} needs an argument")))
    };
    if action == "media" {
        let item = service
            .media(arg()?)
            .map_err(|e| ControlError::Memory(e.to_string()))?;
        use base64::Engine;
        return Ok(serde_json::json!({
            "digest": item.item.digest,
            "mime": item.item.mime,
            "kind": item.item.kind,
            "bytes": item.item.bytes,
            "data": base64::engine::general_purpose::STANDARD.encode(&item.data),
        }));
    }
    if action == "recall" {
        let query = arg()?;
        let k = k.unwrap_or(DEFAULT_SEARCH_K).clamp(1, 100);
        // Each with its time as the user reads it, in their zone at that instant.
        let at = |ms: i64| hearth_memory::format_minute(ms, zone.offset_at(ms));
        // The turns not yet moved to cold context first: what was said minutes ago, which a
        // person looking to take something back expects to find.
        let recent = service
            .search_window(query.clone(), k)
            .map_err(|e| ControlError::Memory(e.to_string()))?;
        let mut items: Vec<Value> = recent
            .iter()
            .map(|hit| {
                serde_json::json!({
                    "ref": EntryRef::Window(hit.id).to_string(),
                    "id": hit.id,
                    "recent": true,
                    "at_ms": hit.at_ms,
                    "at": at(hit.at_ms),
                    "text": hit.text,
                })
            })
            .collect();
        let remembered = service
            .search(query, k)
            .map_err(|e| ControlError::Memory(e.to_string()))?;
        items.extend(remembered.iter().map(|item| {
            let mut v = serde_json::to_value(item).unwrap_or_default();
            v["ref"] = EntryRef::Cold(item.id).to_string().into();
            v["at"] = at(item.at_ms).into();
            v
        }));
        return Ok(Value::Array(items));
    }
    // A forget of anything but a fact (`r12`, `e3`) is a remembered turn's.
    let turn_asked = match action {
        "forget" => Some(arg()?).filter(|id| id.parse::<hearth_graph::FactId>().is_err()),
        _ => None,
    };
    if let Some(asked) = turn_asked {
        let entry = EntryRef::parse(&asked).ok_or_else(|| {
            ControlError::Invalid(format!(
                "{asked} names nothing to forget: a fact (r12, e3) or a remembered turn \
                 ({ENTRY_PREFIX}45, or {WINDOW_PREFIX}12 for one still in the working window)"
            ))
        })?;
        return service
            .forget_named(entry, "the CLI")
            .map_err(|e| ControlError::Memory(e.to_string()));
    }
    let request = match action {
        "search" => GraphRequest::Recall {
            query: arg()?,
            k: k.unwrap_or(DEFAULT_SEARCH_K).clamp(1, 100),
            for_model: false,
        },
        "show" | "why" => GraphRequest::Why { id: arg()? },
        "forget" => GraphRequest::Forget { id: arg()? },
        "stats" => GraphRequest::Stats,
        other => {
            return Err(ControlError::Invalid(format!(
                "unknown memory action {other:?} (search, recall, show, why, forget, stats, media)"
            )));
        }
    };
    service
        .graph(request)
        .map_err(|e| ControlError::Memory(e.to_string()))
}
