//! Media a tool's result brings (SPEC §3.5: a plugin's tool blocks; an MCP server's image or
//! audio content): stored in the media store like an input's, and replaced in the result by
//! their marker lines, so the base64 of a screenshot never reaches the prompt as text, nor
//! memory. The turn shows the stored images to a model that takes them in a message of their
//! own (see `turn::tool_memory`).
//!
//! A result carries media as content blocks in the chat form (`image_url` / `audio_url` /
//! `file_url` with a data URL, or `{type: "media", data, mime}`): the whole result a list of
//! blocks, or an object whose `content` or `media_blocks` is one. An item that cannot be stored
//! (too large, not base64, the disk full) becomes a line saying so: the tool's result stands
//! without it.

use crate::durable::Durable;
use crate::durable::media::{MediaRefusal, is_inline};
use crate::input_media::{MediaRef, media_ref};
use serde_json::{Value, json};

/// `result` with its inline media stored through `store` and replaced by marker lines (a
/// result of text blocks alone becomes their text), and the stored items in order. A result
/// without inline media comes back as it was.
pub fn keep_tool_media(store: Option<&Durable>, mut result: Value) -> (Value, Vec<MediaRef>) {
    let Some(blocks) = blocks_of(&mut result) else {
        return (result, Vec::new());
    };
    if !blocks.iter().any(is_inline) {
        return (result, Vec::new());
    }
    let taken = std::mem::take(blocks);
    let kept = match store {
        Some(store) => store.keep_media(taken),
        None => Err(MediaRefusal::Unavailable("no media store is open")),
    };
    let mut refs = Vec::new();
    *blocks = match kept {
        // Each stored item's block becomes its marker line; any other block stays as it was.
        Ok(rewritten) => rewritten
            .into_iter()
            .map(|block| match media_ref(&block) {
                Some(item) => {
                    let marker = json!({"type": "text", "text": item.marker()});
                    refs.push(item);
                    marker
                }
                None => block,
            })
            .collect(),
        Err(why) => refused(&why),
    };
    (collapse(result), refs)
}

/// The content blocks of a result, where it has them.
fn blocks_of(result: &mut Value) -> Option<&mut Vec<Value>> {
    match result {
        Value::Array(blocks) => Some(blocks),
        Value::Object(map) => ["content", "media_blocks"]
            .into_iter()
            .find(|key| matches!(map.get(*key), Some(Value::Array(_))))
            .and_then(|key| map.get_mut(key))
            .and_then(Value::as_array_mut),
        _ => None,
    }
}

/// The blocks of a result whose media could not be stored: one line saying why.
fn refused(why: &MediaRefusal) -> Vec<Value> {
    vec![json!({"type": "text", "text": format!("[the tool's media were not kept: {why}]")})]
}

/// A list of text blocks as their text, one per line; any other result as it is.
fn collapse(result: Value) -> Value {
    let Value::Array(blocks) = &result else {
        return result;
    };
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| {
            (b.get("type").and_then(Value::as_str) == Some("text"))
                .then(|| b.get("text").and_then(Value::as_str).unwrap_or(""))
        })
        .collect();
    match texts {
        Some(texts) => Value::String(texts.join("\n")),
        None => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventBus;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;

    fn png_block() -> Value {
        let data = STANDARD.encode(b"\x89PNG a screenshot");
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}})
    }

    #[test]
    fn a_results_images_are_stored_and_shown_as_markers() {
        let dir = tempfile::tempdir().expect("dir");
        let (store, _) = Durable::open(
            &dir.path().join("memory.db"),
            EventBus::with_default_ring("t"),
        )
        .expect("store");
        let result = json!([{"type": "text", "text": "the desktop:"}, png_block()]);
        let (shown, refs) = keep_tool_media(Some(&store), result);
        assert_eq!(refs.len(), 1);
        assert_eq!(
            refs[0].digest,
            hearth_media::digest_of(b"\x89PNG a screenshot")
        );
        assert_eq!(refs[0].kind, "image");
        assert_eq!(shown, json!(format!("the desktop:\n{}", refs[0].marker())));
        let media = hearth_media::MediaStore::open(dir.path().join("media")).expect("media");
        assert_eq!(
            media.get(&refs[0].digest).expect("kept"),
            b"\x89PNG a screenshot"
        );

        // An MCP result with structured content keeps its shape; only the media change.
        let mcp = json!({"content": [png_block()], "structured": {"w": 1}});
        let (shown, refs) = keep_tool_media(Some(&store), mcp);
        assert_eq!(shown["structured"], json!({"w": 1}));
        assert_eq!(shown["content"][0]["text"], refs[0].marker());
        assert!(!shown.to_string().contains("base64"));
    }

    #[test]
    fn a_result_without_inline_media_is_left_alone() {
        for plain in [
            json!("text"),
            json!({"rolled": 4}),
            json!([{"type": "text", "text": "a"}, {"type": "image_url", "image_url": "https://x.invalid/a.png"}]),
        ] {
            assert_eq!(keep_tool_media(None, plain.clone()), (plain, Vec::new()));
        }
    }

    #[test]
    fn media_that_cannot_be_kept_become_a_line_saying_why() {
        let (shown, refs) = keep_tool_media(None, json!([png_block()]));
        assert!(refs.is_empty());
        assert_eq!(
            shown,
            json!("[the tool's media were not kept: no media store is open]")
        );
        let dir = tempfile::tempdir().expect("dir");
        let (store, _) = Durable::open(
            &dir.path().join("memory.db"),
            EventBus::with_default_ring("t"),
        )
        .expect("store");
        let bad = json!([{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}]);
        let (shown, _) = keep_tool_media(Some(&store), bad);
        let text = shown.as_str().expect("a line");
        assert!(text.contains("media item 1: not base64"), "{text}");
    }
}
