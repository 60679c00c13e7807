//! Scenes: named situations facts belong to, so a turn can recall what was said *there*.
//!
//! A scene is declared (the caller names it: `chan:telegram`, `tool:calendar`,
//! `project:hearth/graph`) or emergent (the graph notices a situation that recurs: the same
//! channel and partner at the same part of the day). Keys are hierarchical (`k` recalls `k` and
//! `k/…`). Relations and their entities are tagged with scenes by weighted refs, set from the
//! fact's confidence and faded by [`GraphStore::decay_scene_refs`] when a scene is not
//! entered. A turn's scenes are noted by turn id ([`GraphStore::note_turn_scenes`]) and the
//! facts later distilled from it are tagged with them. Forgetting a fact removes its refs.
//!
//! [`GraphStore::decay_scene_refs`]: crate::GraphStore::decay_scene_refs
//! [`GraphStore::note_turn_scenes`]: crate::GraphStore::note_turn_scenes

mod decay;
mod emergent;
mod facts;
mod features;
mod key;
mod store;
mod turn_tools;
mod turns;

pub use decay::{DEFAULT_REF_FLOOR, SceneDecay};
pub use emergent::{
    JOIN_THRESHOLD, MAX_EVIDENCE, MIN_EVIDENCE, RECALL_THRESHOLD, SceneEntry, key_features,
};
pub use features::{
    LEARNED_KINDS, MAX_FEATURES, MAX_TOPICS, Peer, SceneFeature, TurnSituation, fingerprint,
    kind_weight, part_of_day, scene_similarity, topic_keywords, turn_features,
};
pub use key::{MAX_SCENE_KEY_BYTES, channel_scene, normalize_scene_key, scene_matches, tool_scene};
pub use store::{DEFAULT_SCENE_RECALL_LIMIT, SceneEntity, SceneInfo, SceneOrigin, SceneRecall};
pub(crate) use store::{drop_relation_refs, move_entity_refs, move_relation_refs};
pub use turns::MAX_TURN_SCENES;
pub(crate) use turns::tag_from_turn;
