//! Inputs accepted before a crash that did not fit the ready queue when the kernel resumed them.
//! They wait here, oldest first, and move into the queue as room appears (DESIGN §4.3): an idle
//! daemon answers every one of them without waiting for another restart, and a later input never
//! overtakes an older one, because the kernel's pump drains this before its input edge.

use crate::input::{InputEvent, Trust};
use hearth_memory::JournalEntry;
use serde_json::Value;
use std::collections::VecDeque;

/// Journaled inputs still to be queued, in acceptance order. They stay journal rows until
/// taken, so the rebuilt input (and its payload map) exists only once it may run.
#[derive(Debug, Default)]
pub(super) struct Backlog {
    entries: VecDeque<JournalEntry>,
}

impl Backlog {
    /// Keeps `entries` (already in acceptance order) for later.
    pub(super) fn extend(&mut self, entries: impl IntoIterator<Item = JournalEntry>) {
        self.entries.extend(entries);
    }

    /// How many inputs still wait.
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The oldest waiting input, rebuilt. A row whose payload is not an object cannot have
    /// come from the ingress (it journals objects only): it is logged and left pending.
    pub(super) fn pop(&mut self) -> Option<InputEvent> {
        while let Some(entry) = self.entries.pop_front() {
            let request_id = entry.request_id.clone();
            match rebuild(entry) {
                Some(input) => return Some(input),
                None => {
                    tracing::error!(request = %request_id, "journaled input has no object payload; left pending")
                }
            }
        }
        None
    }
}

/// The input a journal row describes, with the trust the ingress gave it (a row whose trust
/// does not parse grants nothing).
pub(super) fn rebuild(entry: JournalEntry) -> Option<InputEvent> {
    let Value::Object(payload) = entry.payload else {
        return None;
    };
    let trust = entry.trust.parse().unwrap_or(Trust::External);
    Some(
        InputEvent::recovered(entry.request_id, entry.source, payload, entry.accepted_ms)
            .with_trust(trust),
    )
}
