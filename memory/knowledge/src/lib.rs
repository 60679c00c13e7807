//! Hearth's knowledge base: documents the user (or the model, through tools) writes, searched
//! by keywords and by meaning.
//!
//! A document is a directory under the root holding a `content.md`; its name is that
//! directory's path (`recipes/bread`), and the directories above it are its categories. The
//! files are the truth, and the user may edit them with any editor while the daemon runs. The
//! crate keeps a derived index in one SQLite file: each passage's search tokens (FTS5 over the
//! shared Chinese/English tokenizer of [`hearth_memory`]) and, with an embedder, its dense
//! vector. Every operation first syncs the index with the files, which costs one `stat` per
//! document when nothing changed. The index can always be rebuilt from the files, so a damaged
//! one is moved aside and rebuilt rather than refused. See `memory/knowledge/DESIGN.md`.
//!
//! ```
//! use hearth_knowledge::{KnowledgeBase, tree};
//!
//! let dir = tempfile::tempdir()?;
//! let root = dir.path().join("knowledge");
//! let mut kb = KnowledgeBase::open(&root, &dir.path().join("knowledge.db"), None)?;
//! kb.create("recipes/bread", "Sourdough: flour, water, salt and a starter.", false)?;
//! kb.create("travel", "我喜欢去杭州看西湖。", false)?;
//!
//! let hits = kb.search("sourdough starter", 5)?;
//! assert_eq!(hits[0].name, "recipes/bread");
//! assert_eq!(hits[0].category, "recipes");
//! assert_eq!(kb.search("西湖", 5)?[0].name, "travel");
//!
//! // A document edited on disk is re-indexed on the next operation.
//! std::fs::write(root.join("travel/content.md"), "Rome in spring.")?;
//! assert!(kb.search("西湖", 5)?.is_empty());
//!
//! assert_eq!(tree(&kb.list()?), "recipes/\n  bread\ntravel\n");
//! kb.delete("recipes/bread")?;
//! assert_eq!(kb.read("travel")?, "Rome in spring.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod base;
pub mod bench;
mod docs;
mod error;
mod index;
mod indexer;
mod limits;
mod name;
mod search;
mod snippet;
mod sync;
mod tree;
mod vector;
mod walk;

pub use base::KnowledgeBase;
pub use docs::{Created, DocInfo};
pub use error::KnowledgeError;
pub use index::{KNOWLEDGE_APPLICATION_ID, KNOWLEDGE_SCHEMA_VERSION};
pub use limits::{
    DEFAULT_MIN_COSINE, MAX_DOCUMENT_BYTES, MAX_DOCUMENTS, MAX_NAME_BYTES, MAX_NAME_SEGMENTS,
    MAX_SEGMENT_CHARS, MAX_WALK_DEPTH, PASSAGE_CHARS, SNIPPET_CHARS,
};
pub use name::{CONTENT_FILE, category_of, validate_name};
pub use search::{KnowledgeHit, render_hits};
pub use sync::SyncReport;
pub use tree::tree;
pub use walk::Skipped;
