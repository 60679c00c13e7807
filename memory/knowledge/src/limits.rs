//! The bounds the knowledge base keeps to, in one place.

/// Largest `content.md` that is indexed or written (1 MiB). Bigger files are listed as skipped.
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 20;

/// Most segments in a name given to [`create`](crate::KnowledgeBase::create).
pub const MAX_NAME_SEGMENTS: usize = 4;

/// Most characters in one segment of a created document's name.
pub const MAX_SEGMENT_CHARS: usize = 64;

/// Most bytes in a created document's name.
pub const MAX_NAME_BYTES: usize = 200;

/// Deepest directory level the walk descends to (and most segments a found document's name
/// has): bounds the walk even through a symlink loop inside the root.
pub const MAX_WALK_DEPTH: usize = 8;

/// Most documents indexed; the walk stops there with a warning, so a root pointed at a huge
/// tree by mistake cannot make every search crawl it.
pub const MAX_DOCUMENTS: usize = 10_000;

/// Characters per passage a document is split into: each passage gets its own vector, short
/// enough for the default model's 256-token window even in Chinese (about one token per
/// character).
pub const PASSAGE_CHARS: usize = 300;

/// Most characters in a hit's snippet.
pub const SNIPPET_CHARS: usize = 200;

/// Default lowest cosine at which a document counts as a dense match; see
/// [`KnowledgeBase::set_min_cosine`](crate::KnowledgeBase::set_min_cosine).
pub const DEFAULT_MIN_COSINE: f32 = 0.3;
