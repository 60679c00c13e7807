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
use crate::recall::cold_context::redact::FORGOTTEN_MARKER;
use crate::{ColdEntry, RECALLED_PREFIX};

/// What forgetting an entry removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForgottenTurn {
    /// The turn the entry belonged to ("" for an entry of no turn, or when nothing existed).
    pub turn: String,
    /// The cold entries removed, the one asked for first; empty when it did not exist.
    pub cold_entries: Vec<i64>,
    /// Window events removed (the turn's own, and copies recalled from its entries).
    pub window_events: usize,
    /// Journal entries whose words were replaced by the marker.
    pub journal_entries: usize,
}

impl ForgottenTurn {
    /// Whether anything was there to forget.
    pub fn forgot_anything(&self) -> bool {
        !self.cold_entries.is_empty() || self.window_events > 0
    }
}

impl ColdContext {
    /// Removes cold entry `id` and the rest of its turn (see the module docs) in the store's
    /// current transaction, bytes zeroed as they are freed.
    pub fn forget_entry(&mut self, id: i64) -> Result<ForgottenTurn, RecallError> {
        self.zeroing(|cold| {
            let Some(entry) = cold.store.cold_get(id)? else {
                return Ok(ForgottenTurn::default());
            };
            let turn = turn_of(&entry.event).to_owned();
            cold.forget_turn_rows(&turn, Some(entry), None)
        })
    }

    /// Removes window event `id` — a turn said too recently to have left the working window —
    /// and the rest of its turn, as [`forget_entry`](Self::forget_entry) does for a cold entry:
    /// a person forgetting what they just said means the exchange, wherever its copies are. A
    /// copy recalled from a cold entry forgets that entry's turn.
    pub fn forget_window_event(&mut self, id: i64) -> Result<ForgottenTurn, RecallError> {
        let Some(event) = self.store.event_get(id)? else {
            return Ok(ForgottenTurn::default());
        };
        if let Some(cold) = recalled_from(&event.record.event) {
            return self.forget_entry(cold);
        }
        self.zeroing(|cold| {
            let turn = turn_of(&event.record.event).to_owned();
            cold.forget_turn_rows(&turn, None, Some(event))
        })
    }

    /// Removes every row turn `turn` left, as [`forget_entry`](Self::forget_entry) does for one
    /// of its entries: a turn taken back while it was still being answered, forgotten once its
    /// reply is in (`Store::journal_forget_when_answered`). Refused the same way while it is
    /// still being answered.
    pub fn forget_turn(&mut self, turn: &str) -> Result<ForgottenTurn, RecallError> {
        if turn.is_empty() {
            return Ok(ForgottenTurn::default());
        }
        self.zeroing(|cold| cold.forget_turn_rows(turn, None, None))
    }

    /// Removes turn `turn`'s cold entries (`entry`, a cold entry asked for, first), its window
    /// events and `event` (a window event asked for), and takes their words out of the turn's
    /// journal entry, whose mark to forget it once answered goes with them. A turn of none
    /// (`""`) is the asked entry or event alone, with the copies recalled from it.
    fn forget_turn_rows(
        &mut self,
        turn: &str,
        entry: Option<ColdEntry>,
        event: Option<StoredEvent>,
    ) -> Result<ForgottenTurn, RecallError> {
        if !turn.is_empty() && self.store.journal_awaits_reply(turn)? {
            return Err(RecallError::InFlight(turn.to_owned()));
        }
        let asked = entry.as_ref().map(|e| e.id);
        let mut entries: Vec<ColdEntry> = entry.into_iter().collect();
        if !turn.is_empty() {
            entries.extend(
                self.store
                    .cold_of_turn(turn, None)?
                    .into_iter()
                    .filter(|e| Some(e.id) != asked),
            );
        }
        let mut out = ForgottenTurn {
            turn: turn.to_owned(),
            cold_entries: entries.iter().map(|e| e.id).collect(),
            ..ForgottenTurn::default()
        };
        // The turn's events, and the copies recalled from its entries (a note's too).
        let mut window = self.store.events_of_turn(turn, &out.cold_entries)?;
        if let Some(event) = event
            && !window.iter().any(|w| w.id == event.id)
        {
            window.push(event);
        }
        if !turn.is_empty() {
            // The twins hold the same input: each text is taken out of the journal once.
            let mut said: Vec<&str> = entries
                .iter()
                .map(|e| &e.event)
                .chain(window.iter().map(|w| &w.record.event))
                .flat_map(|e| [e.input.as_str(), e.response.as_str()])
                .filter(|t| !t.trim().is_empty() && !FORGOTTEN_MARKER.contains(t))
                .collect();
            said.sort_unstable();
            said.dedup();
            let mut changed = 0;
            for text in said {
                changed += self.store.journal_redact(turn, text, FORGOTTEN_MARKER)?;
            }
            // One journal entry per turn, however many of its texts it held.
            out.journal_entries = changed.min(1);
            self.store.journal_clear_forget_mark(turn)?;
        }
        let window: Vec<i64> = window.iter().map(|w| w.id).collect();
        out.window_events = self.store.events_forget(&window)?;
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

/// The turn `event` belongs to: "" for a copy recalled from a cold entry, which is that
/// entry's, not a turn of its own.
fn turn_of(event: &ContextEvent) -> &str {
    if event.id.starts_with(RECALLED_PREFIX) {
        ""
    } else {
        &event.id
    }
}

/// The cold entry a window event was recalled from (`cold:45`), if it is such a copy.
fn recalled_from(event: &ContextEvent) -> Option<i64> {
    event.id.strip_prefix(RECALLED_PREFIX)?.parse().ok()
}
