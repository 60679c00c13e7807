//! Hearth's media store: the images, audio and files a user sends, kept as content-addressed
//! blobs so that each becomes a first-class memory block.
//!
//! A blob is addressed by the lower-case hex sha256 of its bytes and lives at
//! `<dir>/blobs/<first 2 hex>/<remaining 62 hex>`; its metadata (kind, MIME type, size,
//! dimensions, description) and optional vector are a row of `<dir>/media.db`. Storing the
//! same bytes twice keeps one blob and only fills in metadata still missing. Every read
//! re-hashes the blob, so damage on disk is an error and never wrong content. Writes go
//! through a temporary file, fsync and rename, so a crash leaves nothing a later `put` cannot
//! repair.
//!
//! It does not decide what to store or link: the kernel ties items to cold-context entries and
//! graph facts, and computes vectors with whatever image model is configured.
//!
//! ```
//! use hearth_media::{MediaKind, MediaMeta, MediaStore};
//! let dir = tempfile::tempdir().unwrap();
//! let mut media = MediaStore::open(dir.path().join("media")).unwrap();
//! let meta = MediaMeta { mime: "image/png".into(), ..MediaMeta::default() };
//! let stored = media.put(b"not really a png", &meta).unwrap();
//! assert!(stored.new);
//! assert_eq!(media.get(&stored.digest).unwrap(), b"not really a png");
//!
//! // The same bytes again: no second blob, and a description is filled in since none was known.
//! let described = MediaMeta { description: "a test pattern".into(), ..meta };
//! assert!(!media.put(b"not really a png", &described).unwrap().new);
//! let info = media.meta(&stored.digest).unwrap();
//! assert_eq!((info.kind, info.description.as_str()), (MediaKind::Image, "a test pattern"));
//! ```
#![warn(missing_docs)]
#![deny(unsafe_code)]

mod blob;
mod digest;
mod error;
mod kind;
mod model;
mod schema;
mod store;
mod vector;
mod verify;

pub use digest::{DIGEST_LEN, digest_of, is_valid_digest};
pub use error::MediaError;
pub use kind::MediaKind;
pub use model::{MediaInfo, MediaMeta, Stored, VerifyReport};
pub use schema::{MEDIA_APPLICATION_ID, MEDIA_SCHEMA_VERSION};
pub use store::{
    BLOBS_DIR, DB_FILE, DEFAULT_MAX_BYTES, MEDIA_BUSY_TIMEOUT, MIN_DIGEST_PREFIX, MediaStore,
    read_blob,
};

/// Milliseconds since the Unix epoch by the system clock: when Hearth recorded something.
pub(crate) use hearth_engine::now_ms;
