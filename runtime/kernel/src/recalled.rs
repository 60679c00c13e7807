//! The record of what recall put in front of the model for one turn, and why: each cold item's
//! id, its scores and when it happened. It travels in the turn's frame (so a preempted or
//! restarted turn keeps it) and is journaled with the reply, so "what was recalled for this
//! turn" is answered from the journal for any past turn, without a table of its own.

use hearth_memory::Recalled;
use serde::{Deserialize, Serialize};

/// Characters of an item's text kept in the record (enough to recognise it; the item itself
/// stays in cold context under its id).
const TEXT_CHARS: usize = 200;

/// One cold-context item injected into a turn's prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecalledItem {
    /// Cold entry id (what `memory.forget` takes).
    pub id: i64,
    /// The fused recall score; comparable within one turn only.
    pub score: f64,
    /// Cosine to the input in the dense space ("by meaning"), when both had a vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
    /// BM25 score ("by keyword"), when the input's words matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<f64>,
    /// When the remembered event happened, ms since the epoch.
    pub at_ms: i64,
    /// The start of the text it is searched by.
    pub text: String,
}

impl From<&Recalled> for RecalledItem {
    fn from(hit: &Recalled) -> Self {
        Self {
            id: hit.id,
            score: hit.score,
            cosine: hit.dense_cosine,
            keyword: hit.keyword_score,
            at_ms: hit.event.timestamp_ms,
            text: hit.text.chars().take(TEXT_CHARS).collect(),
        }
    }
}
