//! The values that go into and come out of the store.

use crate::MediaKind;

/// What the caller knows about a blob when storing it. Every field may be left empty: a later
/// `put` of the same bytes fills in what is still empty, and never overwrites what is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MediaMeta {
    /// The MIME type (`image/png`); stored trimmed and lower-case. Decides the [`MediaKind`].
    pub mime: String,
    /// A text description (a caption, a transcript summary).
    pub description: String,
    /// Who wrote the description: a model's name, `user`, a tool.
    pub described_by: String,
    /// Width in pixels, for images and video.
    pub width: Option<u32>,
    /// Height in pixels, for images and video.
    pub height: Option<u32>,
}

/// The outcome of a `put`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The content address: lower-case hex sha256 of the bytes.
    pub digest: String,
    /// The size in bytes.
    pub bytes: u64,
    /// Whether the store had no row for this content before (a blob left without a row by a
    /// crash counts as new: its row is what makes it an item).
    pub new: bool,
}

/// Everything the store knows about one item.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaInfo {
    /// The content address.
    pub digest: String,
    /// The kind, from the MIME type.
    pub kind: MediaKind,
    /// The MIME type, or empty when never given.
    pub mime: String,
    /// The size in bytes.
    pub bytes: u64,
    /// Width in pixels, when known.
    pub width: Option<u32>,
    /// Height in pixels, when known.
    pub height: Option<u32>,
    /// The description, or empty.
    pub description: String,
    /// Who wrote the description, or empty.
    pub described_by: String,
    /// When it was first stored, in milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// When it was last stored again, in milliseconds since the Unix epoch.
    pub last_seen_ms: i64,
    /// The fingerprint of its vector's embedding space and the vector's dimension, if it has one.
    pub vector: Option<(String, usize)>,
}

/// What [`MediaStore::verify_all`](crate::MediaStore::verify_all) found. It only reports:
/// deciding what to do about a damaged item is the owner's call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Items whose blob was read and hashed.
    pub checked: usize,
    /// Bytes of the intact items.
    pub bytes: u64,
    /// Digests whose blob no longer hashes to its digest (or has the wrong size).
    pub corrupted: Vec<String>,
    /// Digests whose row exists but whose blob file does not.
    pub missing: Vec<String>,
    /// Blob files without a row (left by a crash between writing a blob and its row, or
    /// during a delete); a `put` of the same bytes adopts them.
    pub orphans: Vec<String>,
}

impl VerifyReport {
    /// Whether every item is intact and nothing is left over.
    pub fn is_clean(&self) -> bool {
        self.corrupted.is_empty() && self.missing.is_empty() && self.orphans.is_empty()
    }
}
