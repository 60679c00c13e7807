//! Media an input brings (images, audio, files) go into the content-addressed media store
//! before the input is journaled, so an acknowledged input's media are as durable as its text
//! and the journal, the turn and memory carry a small reference instead of megabytes of base64.
//!
//! The store owner does it, at acceptance: it is the one writer of `media.db` (opened on the
//! first input that brings media). An input may bring media as
//! - `payload.media_blocks`: content blocks in the chat form, `{"type": "image_url",
//!   "image_url": {"url": "data:image/png;base64,…"}}` (or `audio_url`, or the URL as a plain
//!   string), as channels and plugins send them;
//! - `payload.data` with `payload.mime`: one base64 item, the form of an `image` or `audio` input
//!   (`data` without `mime` is some other field and left alone).
//!
//! Each inline item becomes `{"type": "media", "digest", "mime", "kind", "bytes"}` in
//! `payload.media_blocks`; a block that points elsewhere (an `https://` URL) is kept as it is,
//! never fetched. An item that cannot be stored — not base64, empty, over the size limit, too
//! many of them, the disk full — refuses the input with the reason, before anything is
//! journaled: an input is accepted whole or not at all.

use std::path::{Path, PathBuf};

use crate::error::MemoryError;
use crate::input_media::MediaRef;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hearth_media::{MediaError, MediaKind, MediaMeta, MediaStore};
use serde_json::{Map, Value, json};

/// Largest item an input may bring, decoded.
pub const MAX_MEDIA_BYTES: usize = 16 * 1024 * 1024;

/// Most items one input may bring.
pub const MAX_MEDIA_BLOCKS: usize = 8;

/// The media directory beside a store file: `<data_dir>/media`.
pub(crate) fn media_dir(store: &Path) -> PathBuf {
    store
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("media")
}

/// Why an input's media could not be stored: the input is refused whole, with this reason.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MediaRefusal {
    /// `media_blocks` is not a list.
    #[error("media_blocks must be a list of content blocks")]
    NotAList,
    /// More than [`MAX_MEDIA_BLOCKS`] blocks.
    #[error("{0} media items in one input; at most {MAX_MEDIA_BLOCKS} are taken")]
    TooMany(usize),
    /// Item `n` (from 1) is not a storable item.
    #[error("media item {n}: {why}")]
    Item {
        /// Its place among the input's blocks, from 1.
        n: usize,
        /// What is wrong with its bytes.
        why: BadItem,
    },
    /// The media store could not be opened.
    #[error("the media store could not be opened: {0}")]
    Open(MediaError),
    /// No store could take them: none is open, or its owner has stopped.
    #[error("{0}")]
    Unavailable(&'static str),
    /// The store refused item `n` (from 1): a full disk, a failing file.
    #[error("media item {n} could not be stored: {source}")]
    Store {
        /// Its place among the input's blocks, from 1.
        n: usize,
        /// The store's error.
        source: MediaError,
    },
}

/// What is wrong with an inline item's bytes.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BadItem {
    /// Its text does not decode.
    #[error("not base64 ({0})")]
    NotBase64(String),
    /// It decodes to nothing.
    #[error("empty")]
    Empty,
    /// It decodes to more than [`MAX_MEDIA_BYTES`].
    #[error("larger than {} MiB", MAX_MEDIA_BYTES / (1024 * 1024))]
    TooLarge,
}

/// The store owner's side of the media store.
pub(super) struct MediaIntake {
    dir: PathBuf,
    store: Option<MediaStore>,
}

impl MediaIntake {
    /// Media go to `dir` (opened on first use).
    pub(super) fn new(dir: PathBuf) -> Self {
        Self { dir, store: None }
    }

    /// Stores every inline item `payload` brings and rewrites it to reference the stored
    /// item. Returns how many were stored; `Err` says why the input cannot be accepted (its
    /// payload is then left without its media: a refused input is not kept). The blocks are
    /// moved out of the payload, never copied: they may hold 24 MiB of base64.
    pub(super) fn take(&mut self, payload: &mut Map<String, Value>) -> Result<usize, MediaRefusal> {
        let mut blocks: Vec<Value> = match payload.get_mut("media_blocks") {
            None | Some(Value::Null) => Vec::new(),
            // Rewritten below; left empty if the input is refused.
            Some(Value::Array(blocks)) => std::mem::take(blocks),
            Some(_) => return Err(MediaRefusal::NotAList),
        };
        // `data` is a common name: it is media only beside a MIME type.
        if let (Some(Value::String(_)), Some(Value::String(mime))) =
            (payload.get("data"), payload.get("mime"))
        {
            let mime = mime.clone();
            let data = payload.remove("data").expect("looked up above");
            blocks.push(json!({"type": "media", "mime": mime, "data": data}));
        }
        if blocks.is_empty() {
            return Ok(0);
        }
        if blocks.len() > MAX_MEDIA_BLOCKS {
            return Err(MediaRefusal::TooMany(blocks.len()));
        }
        let mut stored = 0;
        let mut out = Vec::with_capacity(blocks.len());
        for (i, block) in blocks.into_iter().enumerate() {
            let n = i + 1;
            let Some((mime, encoded)) = inline_item(&block) else {
                // A reference to elsewhere, or a block of another kind: kept as it came.
                out.push(block);
                continue;
            };
            let bytes = decode(encoded).map_err(|why| MediaRefusal::Item { n, why })?;
            let store = self.open().map_err(MediaRefusal::Open)?;
            let meta = MediaMeta {
                mime: mime.clone(),
                ..MediaMeta::default()
            };
            let item = store
                .put(&bytes, &meta)
                .map_err(|source| MediaRefusal::Store { n, source })?;
            let kind = MediaKind::from_mime(&mime).as_str();
            out.push(json!({
                "type": "media",
                "digest": item.digest,
                "mime": mime,
                "kind": kind,
                "bytes": item.bytes,
            }));
            stored += 1;
        }
        payload.insert("media_blocks".into(), Value::Array(out));
        Ok(stored)
    }

    /// [`take`](Self::take) over bare content blocks (a tool's result): `blocks` with every
    /// inline item stored and referenced.
    pub(super) fn keep(&mut self, blocks: Vec<Value>) -> Result<Vec<Value>, MediaRefusal> {
        let mut payload = Map::new();
        payload.insert("media_blocks".into(), Value::Array(blocks));
        self.take(&mut payload)?;
        match payload.remove("media_blocks") {
            Some(Value::Array(blocks)) => Ok(blocks),
            _ => Ok(Vec::new()),
        }
    }

    /// The stored items `names` name (full digests or the prefixes markers show), in order;
    /// `Err` names the first that the store does not hold, or holds more than once.
    pub(super) fn refs(&mut self, names: &[String]) -> Result<Vec<MediaRef>, MemoryError> {
        if !self.dir.join(hearth_media::DB_FILE).exists() {
            return Err(MemoryError::NoMediaStored(
                names.first().cloned().unwrap_or_default(),
            ));
        }
        let store = self.open()?;
        names
            .iter()
            .map(|name| {
                let digest = store.resolve(name)?;
                let info = store.meta(&digest)?;
                Ok(MediaRef {
                    digest,
                    mime: info.mime,
                    kind: info.kind.as_str().to_owned(),
                    bytes: info.bytes,
                })
            })
            .collect()
    }

    /// Where the media store keeps its files: a reader reads an item's blob there on its own
    /// thread ([`hearth_media::read_blob`]), never on the store owner's.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    fn open(&mut self) -> Result<&mut MediaStore, MediaError> {
        if self.store.is_none() {
            self.store = Some(MediaStore::open(&self.dir)?);
        }
        Ok(self.store.as_mut().expect("opened above"))
    }
}

/// Whether `block` carries a media item inline (a data URL, or `data` beside `type: media`).
pub(crate) fn is_inline(block: &Value) -> bool {
    inline_item(block).is_some()
}

/// The MIME type and base64 text of a block that carries its item inline, `None` for any
/// other block.
fn inline_item(block: &Value) -> Option<(String, &str)> {
    if let (Some("media"), Some(data)) = (
        block.get("type").and_then(Value::as_str),
        block.get("data").and_then(Value::as_str),
    ) {
        let mime = block
            .get("mime")
            .and_then(Value::as_str)
            .unwrap_or("application/octet-stream");
        return Some((mime.trim().to_ascii_lowercase(), data));
    }
    let url = ["image_url", "audio_url", "file_url"]
        .iter()
        .find_map(|key| {
            let v = block.get(*key)?;
            v.get("url").and_then(Value::as_str).or(v.as_str())
        })?;
    let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
    let mime = head.strip_suffix(";base64")?;
    let mime = if mime.is_empty() {
        "application/octet-stream"
    } else {
        mime
    };
    Some((mime.trim().to_ascii_lowercase(), data))
}

/// The bytes of base64 `text` (whitespace allowed), or why not.
fn decode(text: &str) -> Result<Vec<u8>, BadItem> {
    // Copied only when there is whitespace to drop: a data URL up to 24 MiB usually has none.
    let compact: std::borrow::Cow<'_, str> = if text.bytes().any(|b| b.is_ascii_whitespace()) {
        text.chars().filter(|c| !c.is_ascii_whitespace()).collect()
    } else {
        text.into()
    };
    // The decoded size is known before decoding: refuse a giant without allocating it.
    if compact.len() / 4 * 3 > MAX_MEDIA_BYTES + 3 {
        return Err(BadItem::TooLarge);
    }
    let bytes = STANDARD
        .decode(compact.as_bytes())
        .map_err(|e| BadItem::NotBase64(e.to_string()))?;
    if bytes.is_empty() {
        return Err(BadItem::Empty);
    }
    if bytes.len() > MAX_MEDIA_BYTES {
        return Err(BadItem::TooLarge);
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(v: Value) -> Map<String, Value> {
        v.as_object().expect("object").clone()
    }

    #[test]
    fn inline_items_are_stored_and_referenced_by_digest() {
        let dir = tempfile::tempdir().expect("dir");
        let mut intake = MediaIntake::new(dir.path().join("media"));
        let png = STANDARD.encode(b"\x89PNG not really");
        let mut p = payload(json!({
            "content": "look",
            "media_blocks": [
                {"type": "image_url", "image_url": {"url": format!("data:image/PNG;base64,{png}")}},
                {"type": "image_url", "image_url": "https://example.invalid/cat.jpg"},
                {"type": "text", "text": "kept"},
            ],
            "data": STANDARD.encode(b"RIFF....WAVE"),
            "mime": "audio/wav",
        }));
        assert_eq!(intake.take(&mut p).expect("stored"), 2);
        assert!(!p.contains_key("data"), "the base64 is not journaled");
        let blocks = p["media_blocks"].as_array().expect("blocks");
        assert_eq!(blocks.len(), 4);
        assert_eq!(blocks[0]["type"], "media");
        assert_eq!(blocks[0]["mime"], "image/png");
        assert_eq!(blocks[0]["kind"], "image");
        assert_eq!(blocks[0]["bytes"], 15);
        let digest = blocks[0]["digest"].as_str().expect("digest");
        assert_eq!(digest, hearth_media::digest_of(b"\x89PNG not really"));
        assert_eq!(blocks[1]["image_url"], "https://example.invalid/cat.jpg");
        assert_eq!(blocks[2]["text"], "kept");
        assert_eq!(blocks[3]["kind"], "audio");
        let store = MediaStore::open(dir.path().join("media")).expect("reopen");
        assert_eq!(store.get(digest).expect("stored"), b"\x89PNG not really");
        // A `data` field without a MIME type is not media.
        let mut other = payload(json!({"content": "hi", "data": "not base64 at all"}));
        assert_eq!(intake.take(&mut other).expect("nothing to store"), 0);
        assert_eq!(other["data"], "not base64 at all");
        // Nothing to take: the payload is left alone and no store is opened.
        let empty = tempfile::tempdir().expect("dir");
        let mut none = MediaIntake::new(empty.path().join("media"));
        let mut plain = payload(json!({"content": "hi"}));
        assert_eq!(none.take(&mut plain).expect("nothing to store"), 0);
        assert_eq!(plain, payload(json!({"content": "hi"})));
        assert!(!empty.path().join("media").exists());
    }

    #[test]
    fn an_item_that_cannot_be_stored_refuses_the_input_with_the_reason() {
        let dir = tempfile::tempdir().expect("dir");
        let mut intake = MediaIntake::new(dir.path().join("media"));
        let mut take = |v: Value| intake.take(&mut payload(v)).expect_err("refused");
        let ok = STANDARD.encode(b"fine");
        let err = take(json!({"media_blocks": [
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{ok}")}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@not base64@@@"}},
        ]}));
        assert!(
            matches!(
                err,
                MediaRefusal::Item {
                    n: 2,
                    why: BadItem::NotBase64(_)
                }
            ),
            "{err:?}"
        );
        assert!(
            err.to_string().starts_with("media item 2: not base64"),
            "{err}"
        );
        let err = take(json!({"media_blocks": [{"type": "image_url",
            "image_url": {"url": "data:image/png;base64,"}}]}));
        assert!(
            matches!(
                err,
                MediaRefusal::Item {
                    n: 1,
                    why: BadItem::Empty
                }
            ),
            "{err:?}"
        );
        let many: Vec<Value> = (0..9)
            .map(|_| json!({"type": "text", "text": "x"}))
            .collect();
        let err = take(json!({"media_blocks": many}));
        assert!(matches!(err, MediaRefusal::TooMany(9)), "{err:?}");
        assert!(err.to_string().contains("at most 8"), "{err}");
        let err = take(json!({"media_blocks": "data:..."}));
        assert!(matches!(err, MediaRefusal::NotAList), "{err:?}");
        // Not base64 at its end: only the size check before decoding can name the size.
        let giant = "A".repeat((MAX_MEDIA_BYTES + 1024) / 3 * 4) + "!";
        let err = take(json!({"data": giant, "mime": "image/png"}));
        assert!(
            matches!(
                err,
                MediaRefusal::Item {
                    n: 1,
                    why: BadItem::TooLarge
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("larger than 16 MiB"), "{err}");
        // A store that cannot be opened (a file where its directory goes) refuses, saying so.
        let blocked = tempfile::tempdir().expect("dir");
        std::fs::write(blocked.path().join("media"), b"not a directory").expect("file");
        let mut intake = MediaIntake::new(blocked.path().join("media"));
        let err = intake
            .take(&mut payload(json!({"data": ok, "mime": "image/png"})))
            .expect_err("no store");
        assert!(matches!(err, MediaRefusal::Open(_)), "{err:?}");
        assert!(err.to_string().contains("could not be opened"), "{err}");
    }
}
