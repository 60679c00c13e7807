//! Hearth's L3 memory: a temporal, correctable knowledge graph distilled from cold context.
//!
//! This crate owns one SQLite file of entities, relations and dated events. Relations are
//! bi-temporal: `valid_from`/`valid_to` say when a fact held in the world, `recorded`/
//! `superseded` when Hearth learned or replaced it. Asserting an open fact again merges into it;
//! a new value of a single-valued predicate closes the old one; a correction supersedes it;
//! every relation keeps the sentences, cold items and turns it came from. Forgetting by id
//! leaves a tombstone so re-distillation never brings the fact back, and a purge whose
//! criteria match nothing is refused. Recall fuses FTS5 over jieba tokens with dense vectors
//! of the current embedder and walks an indexed, bounded BFS of depth 2.
//!
//! Scenes (`src/scene/`) tie facts to the situations they were said in: declared ones the
//! caller names, emergent ones the graph finds in recurring situation fingerprints, with
//! hierarchical keys recalled by prefix and refs that fade when a scene is not entered.
//!
//! It does not decide when to distill or what to inject into a prompt: the kernel calls
//! [`GraphStore::distill_items`] on its tick and [`GraphStore::recall`] per turn.
//!
//! ```
//! use hearth_graph::{ColdItem, FactStatus, GraphStore};
//! let dir = tempfile::tempdir().unwrap();
//! let mut graph = GraphStore::open(dir.path().join("graph.db")).unwrap();
//! let day = 86_400_000;
//! let said = |id: i64, ms: i64, text: &str| ColdItem {
//!     id, turn_id: format!("t{id}"), said_ms: ms, text: text.into(), utc_offset_secs: 0,
//! };
//! graph.distill_items(&[said(1, 1_700_000_000_000, "I live in Porto.")]).unwrap();
//! graph.distill_items(&[said(2, 1_700_000_000_000 + 30 * day, "I moved to Lisbon last week.")]).unwrap();
//! let hits = graph.recall("where do I live", 1_700_000_000_000 + 31 * day, 5).unwrap();
//! let lisbon = hits.iter().find(|h| h.object == "Lisbon").unwrap();
//! let porto = hits.iter().find(|h| h.object == "Porto").unwrap();
//! assert_eq!((lisbon.status, porto.status), (FactStatus::Current, FactStatus::Past));
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod distill;
pub mod distill_bench;
mod error;
mod merge_review;
mod name;
mod person;
mod recall;
mod scene;
mod store;

pub use distill::{
    ColdItem, DistillReport, Distiller, ItemState, MODEL_BATCH, ModelOutcome, RULE_TICK_MS,
    ResolvedDate, RuleDistiller, USER, model_prompt, parse_model_answer, resolve_date,
};
pub use error::GraphError;
pub use merge_review::{MergeDecision, MergeReview, merge_prompt, parse_merge_answer};
pub use name::{MAX_NAME_CHARS, MAX_PREDICATE_LEN, validate_name};
pub use person::{Link, MAX_NETWORK_DEPTH, PERSON_KIND, Person, predicate_from_words};
pub use recall::{FactHit, RecallLimits};
pub use scene::{
    DEFAULT_REF_FLOOR, DEFAULT_SCENE_RECALL_LIMIT, JOIN_THRESHOLD, LEARNED_KINDS, MAX_EVIDENCE,
    MAX_FEATURES, MAX_SCENE_KEY_BYTES, MAX_TOPICS, MAX_TURN_SCENES, MIN_EVIDENCE, Peer,
    RECALL_THRESHOLD, SceneDecay, SceneEntity, SceneEntry, SceneFeature, SceneInfo, SceneOrigin,
    SceneRecall, TurnSituation, channel_scene, fingerprint as scene_fingerprint, key_features,
    kind_weight, normalize_scene_key, part_of_day, scene_matches, scene_similarity, tool_scene,
    topic_keywords, turn_features,
};
pub use store::{
    EventSpec, Fact, FactId, FactMode, FactSource, FactStatus, Forgotten, GRAPH_APPLICATION_ID,
    GRAPH_BUSY_TIMEOUT, GRAPH_SCHEMA_VERSION, GraphStats, GraphStore, MergeCandidate, Provenance,
    PurgeCriteria, RelationParts, ReviewItem, ShownIn, SourceSentence, Statement, StillSaid,
    TellReport, Unsaid, bigram_jaccard,
};
