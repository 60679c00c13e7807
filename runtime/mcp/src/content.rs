//! A `tools/call` result as a Hearth tool result: text stays text, images and audio become media
//! blocks (`image_url` / `audio_url` with a data URL, the kernel's content-block form),
//! structured content rides along, and `isError` is the tool's failure.

use hearth_stages::HandlerError;
use serde_json::{Value, json};

/// Maps one `CallToolResult`.
pub fn map_call_result(result: &Value) -> Result<Value, HandlerError> {
    let blocks: Vec<Value> = result["content"]
        .as_array()
        .map(|c| c.iter().map(block).collect())
        .unwrap_or_default();
    let all_text = blocks.iter().all(|b| b["type"] == "text");
    let text = || {
        blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    if result["isError"].as_bool() == Some(true) {
        let message = text();
        return Err(HandlerError::Failed(if message.is_empty() {
            "the tool reported an error".to_owned()
        } else {
            message
        }));
    }
    let content = if all_text {
        Value::String(text())
    } else {
        Value::Array(blocks)
    };
    Ok(match result.get("structuredContent") {
        Some(structured) if !structured.is_null() => {
            json!({"content": content, "structured": structured})
        }
        _ => content,
    })
}

fn data_url(b: &Value) -> String {
    let mime = b["mimeType"].as_str().unwrap_or("application/octet-stream");
    format!("data:{mime};base64,{}", b["data"].as_str().unwrap_or(""))
}

fn text_block(text: impl Into<String>) -> Value {
    json!({"type": "text", "text": text.into()})
}

fn block(b: &Value) -> Value {
    match b["type"].as_str().unwrap_or("") {
        "text" => text_block(b["text"].as_str().unwrap_or("")),
        "image" => json!({"type": "image_url", "image_url": {"url": data_url(b)}}),
        "audio" => json!({"type": "audio_url", "audio_url": {"url": data_url(b)}}),
        "resource_link" => text_block(format!(
            "[resource {}] {}",
            b["name"].as_str().unwrap_or(""),
            b["uri"].as_str().unwrap_or("")
        )),
        "resource" => {
            let r = &b["resource"];
            match r["text"].as_str() {
                Some(t) => text_block(t),
                None => text_block(format!(
                    "[binary resource {} ({})]",
                    r["uri"].as_str().unwrap_or(""),
                    r["mimeType"].as_str().unwrap_or("unknown type")
                )),
            }
        }
        other => text_block(format!("[unsupported content type {other:?}]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_only_is_a_string() {
        let r = json!({"content": [{"type":"text","text":"a"},{"type":"text","text":"b"}]});
        assert_eq!(map_call_result(&r), Ok(json!("a\nb")));
    }

    #[test]
    fn an_image_becomes_a_media_block() {
        let r = json!({"content": [
            {"type":"text","text":"here"},
            {"type":"image","data":"iVBO","mimeType":"image/png"}
        ]});
        let v = map_call_result(&r).expect("a result");
        assert_eq!(v[0], json!({"type":"text","text":"here"}));
        assert_eq!(v[1]["image_url"]["url"], "data:image/png;base64,iVBO");
    }

    #[test]
    fn structured_content_rides_along_and_is_error_fails() {
        let r = json!({"content": [{"type":"text","text":"{}"}], "structuredContent": {"t": 1}});
        assert_eq!(
            map_call_result(&r),
            Ok(json!({"content": "{}", "structured": {"t": 1}}))
        );
        let e = json!({"content": [{"type":"text","text":"no such file"}], "isError": true});
        assert_eq!(
            map_call_result(&e),
            Err(HandlerError::Failed("no such file".into()))
        );
        assert_eq!(
            map_call_result(&json!({"isError": true})),
            Err(HandlerError::Failed("the tool reported an error".into()))
        );
    }
}
