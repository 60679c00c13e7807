//! What the store keeps of one turn, found and rewritten: the rows a forgotten fact's words
//! are taken out of (see `ColdContext::redact`).
//!
//! A turn lives in up to three tables: the window (`events`, its row named by the turn's id,
//! or by `cold:<id>` when a cold item was recalled back into it), cold context (`cold`, the
//! event's JSON carrying the turn's id) and the journal (`journal`, the input's request id is
//! the turn's id). Rewriting a row keeps its place, time and access counts; only the words and
//! what is derived from them change, so the vectors of a rewritten cold entry are dropped here
//! and written again by the caller, which holds the models.

use rusqlite::{OptionalExtension, params};

use super::cold::{COLD_COLUMNS, cold_from_row};
use super::events::{EVENT_COLUMNS, event_from_row};
use super::{
    ColdEntry, EventRecord, RECALLED_PREFIX, SqlContext, Store, StoreError, StoreReader,
    StoredEvent, to_json,
};
use crate::ContextEvent;
use crate::whole_word::replace_whole_word;

impl StoreReader {
    /// The cold entries of one turn: those whose event carries `turn_id` (its input archived
    /// alone, then with its reply), and `cold_item` when given. Oldest first. A lookup by the
    /// `cold_by_turn` index.
    pub fn cold_of_turn(
        &self,
        turn_id: &str,
        cold_item: Option<i64>,
    ) -> Result<Vec<ColdEntry>, StoreError> {
        const OP: &str = "cold_of_turn";
        let path = &self.path;
        let mut out = Vec::new();
        if let Some(id) = cold_item {
            out.extend(self.cold_get(id)?);
        }
        if !turn_id.is_empty() {
            let mut stmt = self
                .conn
                .prepare_cached(&format!(
                    "SELECT {COLD_COLUMNS} FROM cold WHERE json_extract(event, '$.id') = ?1"
                ))
                .ctx(OP, path)?;
            let mut rows = stmt.query([turn_id]).ctx(OP, path)?;
            while let Some(row) = rows.next().ctx(OP, path)? {
                let entry = cold_from_row(OP, path, row)?;
                if Some(entry.id) != cold_item {
                    out.push(entry);
                }
            }
        }
        out.sort_by_key(|e| e.id);
        Ok(out)
    }

    /// The turns whose reply memory showed any of `ids` (`r12`, `c45`: see
    /// `ContextEvent::shown`), each once, in id order, from the window and cold context (by the
    /// `cold_shown` index there).
    pub fn turns_shown(&self, ids: &[String]) -> Result<Vec<String>, StoreError> {
        const OP: &str = "turns_shown";
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = to_json(OP, &self.path, &ids)?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT turn FROM ( \
                 SELECT json_extract(c.event, '$.id') AS turn FROM cold_shown s \
                 JOIN cold c ON c.id = s.cold_id \
                 WHERE s.shown IN (SELECT value FROM json_each(?1)) \
                 UNION SELECT e.event_id FROM events e, json_each(e.shown) j \
                 WHERE e.shown <> '[]' AND j.value IN (SELECT value FROM json_each(?1))) \
                 WHERE turn IS NOT NULL AND turn <> '' AND NOT turn GLOB ?2 ORDER BY turn",
            )
            .ctx(OP, &self.path)?;
        // A copy recalled into the window is named after its cold entry, which names the turn.
        let copies = format!("{RECALLED_PREFIX}*");
        stmt.query_map(params![wanted, copies], |r| r.get(0))
            .ctx(OP, &self.path)?
            .collect::<Result<Vec<_>, _>>()
            .ctx(OP, &self.path)
    }

    /// The window events of one turn: named `turn_id`, or copies recalled from one of
    /// `cold_ids`. In window order.
    pub fn events_of_turn(
        &self,
        turn_id: &str,
        cold_ids: &[i64],
    ) -> Result<Vec<StoredEvent>, StoreError> {
        const OP: &str = "events_of_turn";
        let path = &self.path;
        let mut names: Vec<String> = cold_ids
            .iter()
            .map(|id| format!("{RECALLED_PREFIX}{id}"))
            .collect();
        if !turn_id.is_empty() {
            names.push(turn_id.to_owned());
        }
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE event_id = ?1 ORDER BY timestamp_ms, id"
            ))
            .ctx(OP, path)?;
        let mut out = Vec::new();
        for name in &names {
            let mut rows = stmt.query([name]).ctx(OP, path)?;
            while let Some(row) = rows.next().ctx(OP, path)? {
                out.push(event_from_row(OP, path, row)?);
            }
        }
        out.sort_by_key(|e| (e.record.event.timestamp_ms, e.id));
        Ok(out)
    }
}

impl Store {
    /// Zeroes freed pages too while `on` (`secure_delete = ON`: a rewritten row's overflow
    /// pages are overwritten before they join the free list), for a redaction; back to the
    /// store's everyday `FAST` otherwise, which zeroes a deleted row's bytes inside the pages it
    /// writes anyway and so costs no I/O on the turn path (every prune deletes window rows).
    pub fn set_secure_delete(&mut self, on: bool) -> Result<(), StoreError> {
        let (conn, path) = self.conn_mut();
        let mode = if on { "ON" } else { "FAST" };
        conn.pragma_update(None, "secure_delete", mode)
            .ctx("set_secure_delete", path)
    }

    /// Rewrites cold entry `id`'s event, search text and keyword terms (the keyword index
    /// follows by its trigger). Its vectors, of the words it no longer holds, are dropped in
    /// every space; the caller writes new ones. Returns whether the entry exists.
    pub fn cold_rewrite(
        &mut self,
        id: i64,
        event: &ContextEvent,
        text: &str,
        tokens: &str,
    ) -> Result<bool, StoreError> {
        const OP: &str = "cold_rewrite";
        let (conn, path) = self.conn_mut();
        let json = to_json(OP, path, event)?;
        let tx = conn.savepoint().ctx(OP, path)?;
        let n = tx
            .execute(
                "UPDATE cold SET event = ?2, text = ?3, tokens = ?4, dense = NULL, \
                 dense_fp = NULL WHERE id = ?1",
                params![id, json, text, tokens],
            )
            .ctx(OP, path)?;
        tx.execute("DELETE FROM cold_side_vectors WHERE cold_id = ?1", [id])
            .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
        Ok(n == 1)
    }

    /// Deletes window events at a user's request (a forgotten turn), whether their own or
    /// recalled copies; returns how many went. Unknown ids are skipped.
    pub fn events_forget(&mut self, ids: &[i64]) -> Result<usize, StoreError> {
        self.delete_each("events_forget", "DELETE FROM events WHERE id = ?1", ids)
    }

    /// Rewrites window event `id` as `record` (its words, vectors and token estimate); its
    /// place in the window is kept. Returns whether the event exists.
    pub fn event_rewrite(&mut self, id: i64, record: &EventRecord) -> Result<bool, StoreError> {
        const OP: &str = "event_rewrite";
        let (conn, path) = self.conn_mut();
        let e = &record.event;
        let tokens = i64::try_from(record.tokens)
            .map_err(|_| StoreError::data(OP, path, format!("tokens {}", record.tokens)))?;
        let n = conn
            .prepare_cached(
                "UPDATE events SET input = ?2, response = ?3, tools_used = ?4, \
                 tool_results = ?5, dense = ?6, dense_fp = ?7, sparse = ?8, tokens = ?9 \
                 WHERE id = ?1",
            )
            .ctx(OP, path)?
            .execute(params![
                id,
                e.input,
                e.response,
                to_json(OP, path, &e.tools_used)?,
                to_json(OP, path, &e.tool_results)?,
                record.dense.as_ref().map(super::DenseVector::to_blob),
                record.dense.as_ref().map(|d| d.fingerprint.as_str()),
                record.sparse,
                tokens,
            ])
            .ctx(OP, path)?;
        Ok(n == 1)
    }

    /// Replaces every occurrence of `words` by `marker` inside the journal entry of
    /// `request_id` (its input and, once answered, its reply), as JSON holds them. Returns
    /// how many entries changed (0 or 1). Empty `words` change nothing.
    pub fn journal_redact(
        &mut self,
        request_id: &str,
        words: &str,
        marker: &str,
    ) -> Result<usize, StoreError> {
        const OP: &str = "journal_redact";
        let (conn, path) = self.conn_mut();
        if words.is_empty() {
            return Ok(0);
        }
        // Both are replaced as JSON string contents, escapes included, so the payload stays
        // valid JSON (its CHECK holds) and a quote or a newline in the words still matches.
        let inner = |s: &str| -> Result<String, StoreError> {
            let quoted = to_json(OP, path, s)?;
            Ok(quoted[1..quoted.len() - 1].to_owned())
        };
        let (from, to) = (inner(words)?, inner(marker)?);
        conn.prepare_cached(
            "UPDATE journal SET payload = replace(payload, ?2, ?3), \
             reply = CASE WHEN reply IS NULL THEN NULL ELSE replace(reply, ?2, ?3) END \
             WHERE request_id = ?1 AND (instr(payload, ?2) > 0 OR instr(reply, ?2) > 0)",
        )
        .ctx(OP, path)?
        .execute(params![request_id, from, to])
        .ctx(OP, path)
    }

    /// Replaces `word` by `marker` where it stands as a whole word, in any case, in the reply
    /// of `request_id`'s journal entry (every text the reply's JSON holds), and in its input
    /// too when `in_input`. Returns how many entries changed (0 or 1).
    pub fn journal_redact_word(
        &mut self,
        request_id: &str,
        word: &str,
        marker: &str,
        in_input: bool,
    ) -> Result<usize, StoreError> {
        const OP: &str = "journal_redact_word";
        let (conn, path) = self.conn_mut();
        let row: Option<(String, Option<String>)> = conn
            .prepare_cached("SELECT payload, reply FROM journal WHERE request_id = ?1")
            .ctx(OP, path)?
            .query_row([request_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .ctx(OP, path)?;
        let Some((payload, reply)) = row else {
            return Ok(0);
        };
        let parse = |json: &str| -> Result<serde_json::Value, StoreError> {
            serde_json::from_str(json)
                .map_err(|e| StoreError::data(OP, path, format!("journal entry: {e}")))
        };
        let mut payload = parse(&payload)?;
        let mut reply = reply.as_deref().map(parse).transpose()?;
        let input_changed = in_input && replace_in_texts(&mut payload, word, marker);
        let reply_changed = reply
            .as_mut()
            .is_some_and(|r| replace_in_texts(r, word, marker));
        if !input_changed && !reply_changed {
            return Ok(0);
        }
        let reply = reply.map(|r| to_json(OP, path, &r)).transpose()?;
        conn.prepare_cached("UPDATE journal SET payload = ?2, reply = ?3 WHERE request_id = ?1")
            .ctx(OP, path)?
            .execute(params![request_id, to_json(OP, path, &payload)?, reply])
            .ctx(OP, path)
    }
}

/// Replaces `word` as a whole word in every string of `value`; whether any changed.
fn replace_in_texts(value: &mut serde_json::Value, word: &str, marker: &str) -> bool {
    match value {
        serde_json::Value::String(text) => match replace_whole_word(text, word, marker) {
            Some(new) => {
                *text = new;
                true
            }
            None => false,
        },
        serde_json::Value::Array(items) => items.iter_mut().fold(false, |changed, v| {
            replace_in_texts(v, word, marker) | changed
        }),
        serde_json::Value::Object(fields) => fields.values_mut().fold(false, |changed, v| {
            replace_in_texts(v, word, marker) | changed
        }),
        _ => false,
    }
}
