//! The `hearth memory` control requests: the graph memory and the media store, reached through
//! the memory service like the model's tools, so `graph.db` and `media.db` keep their one owner.

use super::ControlError;
use hearth_kernel::graph_service::GraphRequest;
use hearth_kernel::memory_service::MemoryService;
use serde_json::Value;

/// Facts `search` returns when the request names no count.
const DEFAULT_SEARCH_K: usize = 10;

/// Runs one `hearth memory` action.
pub(super) fn memory(
    service: Option<&MemoryService>,
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
                "unknown memory action {other:?} (search, show, why, forget, stats, media)"
            )));
        }
    };
    service
        .graph(request)
        .map_err(|e| ControlError::Memory(e.to_string()))
}
