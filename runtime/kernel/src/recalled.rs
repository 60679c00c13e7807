//! The record of what recall put in front of the model for one turn, and why: each cold item's
//! id, its scores and when it happened. It travels in the turn's frame (so a preempted or
//! restarted turn keeps it) and is journaled with the reply, so "what was recalled for this
//! turn" is answered from the journal for any past turn, without a table of its own.

use hearth_memory::Recalled;
use serde::{Deserialize, Serialize};

/// How a remembered entry's id is written, beside a fact's `r12` and an event's `e3`.
pub const ENTRY_PREFIX: &str = "c";

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

/// The reply as the journal keeps it: each recalled item's id, scores and time, without its
/// text. The text stays in cold context under the id and is read back when a past turn is shown
/// ([`resolve_texts`]), so the journal does not grow by a copy of every recalled memory per turn,
/// and a memory the user forgets does not linger in the journal.
pub fn journal_form(reply: &mut serde_json::Value) {
    if let Some(items) = reply
        .get_mut("recalled")
        .and_then(serde_json::Value::as_array_mut)
    {
        for item in items {
            if let Some(item) = item.as_object_mut() {
                item.remove("text");
            }
        }
    }
}

/// Fills in the text of each journaled item in `items` (a `recalled` array) from `text_of` (the
/// cold entry's text by id): the first characters as the record keeps them, or `"forgotten":
/// true` when the entry is gone. Items journaled with their text keep it.
pub fn resolve_texts<E>(
    items: &mut serde_json::Value,
    mut text_of: impl FnMut(i64) -> Result<Option<String>, E>,
) -> Result<(), E> {
    let Some(items) = items.as_array_mut() else {
        return Ok(());
    };
    for item in items {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        if item.contains_key("text") {
            continue;
        }
        let Some(id) = item.get("id").and_then(serde_json::Value::as_i64) else {
            continue;
        };
        match text_of(id)? {
            Some(text) => {
                item.insert(
                    "text".into(),
                    text.chars().take(TEXT_CHARS).collect::<String>().into(),
                );
            }
            None => {
                item.insert("text".into(), "".into());
                item.insert("forgotten".into(), true.into());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_journal_keeps_ids_and_scores_and_texts_come_back_from_cold_context() {
        let mut reply = json!({"content": "hi", "recalled": [
            {"id": 7, "score": 0.5, "at_ms": 1, "text": "the car is on level two"},
            {"id": 9, "score": 0.4, "at_ms": 2, "text": "a forgotten thing"},
        ]});
        journal_form(&mut reply);
        assert_eq!(
            reply,
            json!({"content": "hi", "recalled": [
                {"id": 7, "score": 0.5, "at_ms": 1},
                {"id": 9, "score": 0.4, "at_ms": 2},
            ]})
        );
        let mut items = reply["recalled"].clone();
        let long = "x".repeat(500);
        resolve_texts::<()>(&mut items, |id| {
            Ok((id == 7).then(|| format!("the car is on level two {long}")))
        })
        .expect("resolved");
        assert_eq!(
            items[0]["text"].as_str().map(|t| t.chars().count()),
            Some(TEXT_CHARS)
        );
        assert!(
            items[0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("the car"))
        );
        assert_eq!(items[0].get("forgotten"), None);
        assert_eq!(items[1]["forgotten"], json!(true));
        assert_eq!(items[1]["text"], json!(""));
        // An older row journaled with its text is shown as it was; a lookup error is passed on.
        let mut old = json!([{"id": 3, "text": "kept"}, {"id": 4}]);
        let err = resolve_texts(&mut old, |id| if id == 4 { Err("io") } else { Ok(None) });
        assert_eq!(err, Err("io"));
        assert_eq!(old[0]["text"], json!("kept"));
    }
}
