//! The media an input brought, as a turn sees them: references into the media store, written
//! by the store owner when it accepted the input (see `durable::media`). Each becomes one
//! marker line after the input's text — in what the model is shown and in what memory keeps —
//! so a turn, its recall and its distilled facts say that an image was sent and which one. The
//! kernel writes the markers, never the model: a marker names a digest the store holds.

use serde_json::{Map, Value};

/// One stored item an input brought.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaRef {
    /// Its content address (lower-case hex sha256).
    pub digest: String,
    /// Its MIME type.
    pub mime: String,
    /// `image`, `audio`, `video` or `other`.
    pub kind: String,
    /// Its size.
    pub bytes: u64,
}

impl MediaRef {
    /// The reference a message carries to show the item to the model.
    pub fn part(&self) -> hearth_llm::provider::MediaPart {
        hearth_llm::provider::MediaPart {
            digest: self.digest.clone(),
            mime: self.mime.clone(),
        }
    }

    /// The marker line: `[image image/png, 34 KB, sha256:ab12cd34ef56]` (the digest cut to
    /// [`hearth_media::MIN_DIGEST_PREFIX`] characters, as `memory show` and the media tools accept it).
    pub fn marker(&self) -> String {
        format!(
            "[{} {}, {}, sha256:{}]",
            self.kind,
            self.mime,
            human_size(self.bytes),
            &self.digest[..self.digest.len().min(hearth_media::MIN_DIGEST_PREFIX)]
        )
    }
}

/// The stored items of `payload.media_blocks`, in order; blocks that are not stored items (a
/// URL kept as it came, a text part) are not media the store holds and are left out.
pub fn media_refs(payload: &Map<String, Value>) -> Vec<MediaRef> {
    let Some(Value::Array(blocks)) = payload.get("media_blocks") else {
        return Vec::new();
    };
    blocks.iter().filter_map(media_ref).collect()
}

/// The stored item a `{type: "media", digest, …}` block references; `None` for any other
/// block.
pub fn media_ref(b: &Value) -> Option<MediaRef> {
    if b.get("type").and_then(Value::as_str) != Some("media") {
        return None;
    }
    let digest = b.get("digest")?.as_str()?;
    hearth_media::is_valid_digest(digest).then(|| MediaRef {
        digest: digest.to_owned(),
        mime: b
            .get("mime")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        kind: b
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("other")
            .to_owned(),
        bytes: b.get("bytes").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// `text` followed by one marker line per item (just the markers when `text` is blank).
pub fn with_markers(text: &str, media: &[MediaRef]) -> String {
    let mut out = text.trim_end().to_owned();
    for item in media {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&item.marker());
    }
    out
}

/// `34 KB`, `2.5 MB`: what a person reads, not exact.
fn human_size(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{} KB", (b + 512) / 1024),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stored_items_become_marker_lines_after_the_text() {
        let digest = "ab".repeat(32);
        let payload = json!({"media_blocks": [
            {"type": "media", "digest": digest, "mime": "image/png", "kind": "image", "bytes": 34_000},
            {"type": "image_url", "image_url": "https://example.invalid/x.png"},
            {"type": "media", "digest": "not-a-digest", "mime": "image/png"},
            {"type": "media", "digest": "cd".repeat(32), "mime": "audio/ogg", "kind": "audio", "bytes": 2_621_440},
        ]});
        let refs = media_refs(payload.as_object().expect("object"));
        assert_eq!(refs.len(), 2, "only stored items with a valid digest");
        assert_eq!(
            with_markers("what is this? ", &refs),
            "what is this?\n[image image/png, 33 KB, sha256:abababababab]\n\
             [audio audio/ogg, 2.5 MB, sha256:cdcdcdcdcdcd]"
        );
        assert_eq!(
            with_markers("", &refs[..1]),
            "[image image/png, 33 KB, sha256:abababababab]"
        );
        assert_eq!(with_markers("hi", &[]), "hi");
        assert!(media_refs(json!({"content": "x"}).as_object().expect("o")).is_empty());
        assert_eq!(human_size(900), "900 B");
    }
}
