//! A remembered entry removed at a user's request: the whole turn it belongs to.
//!
//! One turn is kept as up to two cold entries (its input archived alone, then with its reply)
//! plus, until a prune moves it, its event in the window, and its journal entry. A person
//! forgetting "that memory" means the exchange: forgetting one entry and leaving its twin — or
//! the window's copy, archived and shown again a few turns later — would bring it back. So the
//! turn's every cold entry and window event go (with the copies recalled from them), its words
//! leave its journal entry, and the indexes forget it. An entry with no turn (a note, an event a
//! plugin kept) goes alone.

use super::*;
use crate::RECALLED_PREFIX;
use crate::recall::cold_context::redact::FORGOTTEN_MARKER;

/// What forgetting an entry removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForgottenTurn {
    /// The cold entries removed, the one asked for first; empty when it did not exist.
    pub cold_entries: Vec<i64>,
    /// Window events removed (the turn's own, and copies recalled from its entries).
    pub window_events: usize,
    /// Journal entries whose words were replaced by the marker.
    pub journal_entries: usize,
}

impl ColdContext {
    /// Removes cold entry `id` and the rest of its turn (see the module docs) in the store's
    /// current transaction, bytes zeroed as they are freed.
    pub fn forget_entry(&mut self, id: i64) -> Result<ForgottenTurn, RecallError> {
        self.zeroing(|cold| cold.forget_turn_rows(id))
    }

    fn forget_turn_rows(&mut self, id: i64) -> Result<ForgottenTurn, RecallError> {
        let mut out = ForgottenTurn::default();
        let Some(entry) = self.store.cold_get(id)? else {
            return Ok(out);
        };
        let turn = match entry.event.id.as_str() {
            t if t.starts_with(RECALLED_PREFIX) => "",
            t => t,
        }
        .to_owned();
        let mut entries = vec![entry];
        if !turn.is_empty() {
            entries.extend(
                self.store
                    .cold_of_turn(&turn, None)?
                    .into_iter()
                    .filter(|e| e.id != id),
            );
        }
        out.cold_entries = entries.iter().map(|e| e.id).collect();
        let window: Vec<i64> = self
            .store
            .events_of_turn(&turn, &out.cold_entries)?
            .iter()
            .map(|e| e.id)
            .collect();
        out.window_events = self.store.events_forget(&window)?;
        if !turn.is_empty() {
            // The twins hold the same input: each text is taken out of the journal once.
            let mut said: Vec<&str> = entries
                .iter()
                .flat_map(|e| [e.event.input.as_str(), e.event.response.as_str()])
                .filter(|t| !t.trim().is_empty() && !FORGOTTEN_MARKER.contains(t))
                .collect();
            said.sort_unstable();
            said.dedup();
            let mut changed = 0;
            for text in said {
                changed += self.store.journal_redact(&turn, text, FORGOTTEN_MARKER)?;
            }
            // One journal entry per turn, however many of its texts it held.
            out.journal_entries = changed.min(1);
        }
        self.store.cold_remove(&out.cold_entries)?;
        for space in [&mut self.dense, &mut self.companion].into_iter().flatten() {
            if let Some(index) = space.index.as_mut() {
                for id in &out.cold_entries {
                    index.remove(*id);
                }
            }
        }
        Ok(out)
    }
}
