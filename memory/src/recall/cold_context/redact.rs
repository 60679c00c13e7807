//! Words taken out of what memory keeps of a turn: the window, cold context and the journal.
//!
//! When the user has a fact forgotten, the sentence it came from must not come back through
//! recall on the next turn. Each row of the turn that holds the words is rewritten in place
//! with [`FORGOTTEN_MARKER`] where they stood — the rest of the turn (what else was said, the
//! reply) stays, and so do its time and place — and everything derived from its words is
//! derived again: the search text, the keyword terms, the vectors of every space, the window
//! event's token estimate. Running a redaction twice changes nothing the second time.

use super::*;
use crate::whole_word::replace_whole_word;

/// What stands where forgotten words were.
pub const FORGOTTEN_MARKER: &str = "[forgotten]";

/// Words to take out of what memory keeps of one turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redaction {
    /// The turn they were said in (the input's request id; empty when it had none).
    pub turn_id: String,
    /// The cold item they were read from, when known (a note has no turn id).
    pub cold_item: Option<i64>,
    /// The words: a sentence verbatim as the turn holds it, or a value (see `scope`).
    pub words: String,
    /// Where in the turn the words are taken out, and how they are matched.
    pub scope: RedactionScope,
}

/// Where in a turn a redaction's words are taken out, and how they are matched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RedactionScope {
    /// A sentence, verbatim, wherever the turn holds it (its input and its replies).
    #[default]
    Verbatim,
    /// A forgotten fact's value as the agent's reply repeated it in its own words: taken out
    /// of the turn's replies alone, wherever it stands as a whole word in any case. The user's
    /// own words are left to the sentence's redaction.
    InReplies,
    /// A forgotten fact's value told in other words than the turn's (a fact the model
    /// committed from what the user said): taken out of the whole turn, input and replies,
    /// wherever it stands as a whole word in any case.
    InTurn,
}

/// The rows a redaction rewrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Redacted {
    /// Cold entries rewritten, by id.
    pub cold_entries: Vec<i64>,
    /// Window events rewritten.
    pub window_events: usize,
    /// Journal entries rewritten.
    pub journal_entries: usize,
}

impl ColdContext {
    /// Takes each redaction's words out of every row memory keeps of its turn, in the store's
    /// current transaction (the caller's commit makes it durable). Rows that do not hold the
    /// words are left as they are. The rewritten cold entries get vectors of their new text in
    /// every space, never keeping a vector of the words they no longer hold: when a model fails,
    /// they are found by keywords until its [`backfill`](Self::backfill) embeds them.
    ///
    /// What a rewrite frees is zeroed (`secure_delete` on meanwhile) and the keyword index
    /// drops the old terms at once (its `secure-delete` option), so once the caller has
    /// committed and checkpointed the WAL ([`Store::checkpoint`]) the words are in no page of
    /// the files either.
    pub fn redact(&mut self, redactions: &[Redaction]) -> Result<Redacted, RecallError> {
        self.zeroing(|cold| cold.redact_rows(redactions))
    }

    /// Runs `write` with freed pages zeroed too (`secure_delete = ON`), then back to the
    /// store's everyday setting whatever `write` returned.
    pub(super) fn zeroing<T>(
        &mut self,
        write: impl FnOnce(&mut Self) -> Result<T, RecallError>,
    ) -> Result<T, RecallError> {
        self.store.set_secure_delete(true)?;
        let result = write(self);
        let off = self.store.set_secure_delete(false);
        let out = result?;
        off?;
        Ok(out)
    }

    fn redact_rows(&mut self, redactions: &[Redaction]) -> Result<Redacted, RecallError> {
        let mut out = Redacted::default();
        let mut rewritten: Vec<(i64, String, EntryMeta)> = Vec::new();
        // Words the marker itself holds would be found again in it: never redacted twice.
        let sayable =
            |r: &&Redaction| !r.words.trim().is_empty() && !FORGOTTEN_MARKER.contains(&r.words);
        for r in redactions.iter().filter(sayable) {
            let entries = self.store.cold_of_turn(&r.turn_id, r.cold_item)?;
            let cold_ids: Vec<i64> = entries.iter().map(|e| e.id).collect();
            for entry in entries {
                let mut event = entry.event;
                if !unsay(&mut event, r) {
                    continue;
                }
                let text = self.text_for(&event);
                self.store
                    .cold_rewrite(entry.id, &event, &text, &index_tokens(&text))?;
                for space in [&mut self.dense, &mut self.companion].into_iter().flatten() {
                    if let Some(index) = space.index.as_mut() {
                        index.remove(entry.id);
                    }
                }
                let meta = EntryMeta::new(event.timestamp_ms, &event.source);
                rewritten.retain(|(id, ..)| *id != entry.id);
                rewritten.push((entry.id, text, meta));
                if !out.cold_entries.contains(&entry.id) {
                    out.cold_entries.push(entry.id);
                }
            }
            for stored in self.store.events_of_turn(&r.turn_id, &cold_ids)? {
                let mut event = stored.record.event;
                if !unsay(&mut event, r) {
                    continue;
                }
                if let Some(record) = self.prepare(vec![event]).pop()
                    && self.store.event_rewrite(stored.id, &record)?
                {
                    out.window_events += 1;
                }
            }
            if !r.turn_id.is_empty() {
                out.journal_entries += match r.scope {
                    RedactionScope::Verbatim => {
                        self.store
                            .journal_redact(&r.turn_id, &r.words, FORGOTTEN_MARKER)?
                    }
                    RedactionScope::InReplies | RedactionScope::InTurn => {
                        self.store.journal_redact_word(
                            &r.turn_id,
                            &r.words,
                            FORGOTTEN_MARKER,
                            r.scope == RedactionScope::InTurn,
                        )?
                    }
                };
            }
        }
        self.embed_rewritten(rewritten)?;
        Ok(out)
    }

    /// Vectors of the rewritten entries' new text, in the main space and the companion's; what
    /// a model could not embed is left to the back-fill.
    fn embed_rewritten(
        &mut self,
        entries: Vec<(i64, String, EntryMeta)>,
    ) -> Result<(), RecallError> {
        let entries: Vec<_> = entries.into_iter().filter(|e| !e.1.is_empty()).collect();
        let Some(first) = entries.iter().map(|e| e.0).min() else {
            return Ok(());
        };
        for column in [VectorColumn::Main, VectorColumn::Side] {
            if self.write_vectors(column, entries.clone())? < entries.len() {
                // The back-fill walks forward from its cursor: what was missed is behind it.
                self.backfill_again_from(column, first);
            }
        }
        Ok(())
    }
}

/// Takes `r`'s words out of what `event` says, where its scope says; whether it held them.
fn unsay(event: &mut ContextEvent, r: &Redaction) -> bool {
    let mut changed = false;
    for (said, is_input) in [(&mut event.input, true), (&mut event.response, false)] {
        let new = match r.scope {
            RedactionScope::Verbatim => said
                .contains(&r.words)
                .then(|| said.replace(&r.words, FORGOTTEN_MARKER)),
            RedactionScope::InReplies if is_input => None,
            RedactionScope::InReplies | RedactionScope::InTurn => {
                replace_whole_word(said, &r.words, FORGOTTEN_MARKER)
            }
        };
        if let Some(new) = new {
            *said = new;
            changed = true;
        }
    }
    changed
}
