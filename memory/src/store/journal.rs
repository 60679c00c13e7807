//! The `journal` table: every accepted input and its one terminal reply, keyed by request id.
//! Both writes are committed and synced before the method returns, so the runtime acknowledges
//! an input only once it survives a crash, and emits a reply only once it is recorded.
//! After a restart, `journal_pending` lists the inputs that still owe a reply.

use std::path::Path;

use rusqlite::{ErrorCode, OptionalExtension, Row, params};
use serde_json::Value;

use super::error::{SqlContext, StoreError};
use super::{Store, StoreReader};

/// One journaled input, with its reply once there is one.
#[derive(Clone, Debug, PartialEq)]
pub struct JournalEntry {
    /// The input's request id; the journal holds each one once.
    pub request_id: String,
    /// The channel the input arrived on.
    pub source: String,
    /// What the input is (`input`, `interrupt`, `self`, …), as the runtime names it.
    pub kind: String,
    /// The input as accepted, as JSON the runtime writes and reads back.
    pub payload: Value,
    /// When the input was accepted, in Unix milliseconds.
    pub accepted_ms: i64,
    /// The terminal reply; `None` while the input still owes one.
    pub reply: Option<Value>,
    /// When the reply was recorded, in Unix milliseconds; `None` while `reply` is.
    pub replied_ms: Option<i64>,
    /// The trust the ingress gave the input (`kernel`, `local` or `external`); `external` for
    /// inputs journaled before the trust was recorded.
    pub trust: String,
}

/// What recording a reply found on its journal entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Replied {
    /// A person took the turn back while it was being answered: forget it now.
    pub forget_when_answered: bool,
}

const JOURNAL_COLUMNS: &str =
    "request_id, source, kind, payload, accepted_ms, reply, replied_ms, trust";

fn entry_from_row(
    op: &'static str,
    path: &Path,
    row: &Row<'_>,
) -> Result<JournalEntry, StoreError> {
    let get = |e| StoreError::sql(op, path, e);
    let payload: String = row.get(3).map_err(get)?;
    let reply: Option<String> = row.get(5).map_err(get)?;
    let parse = |what: &str, s: &str| {
        serde_json::from_str::<Value>(s)
            .map_err(|e| StoreError::data(op, path, format!("{what}: {e}")))
    };
    Ok(JournalEntry {
        request_id: row.get(0).map_err(get)?,
        source: row.get(1).map_err(get)?,
        kind: row.get(2).map_err(get)?,
        payload: parse("payload", &payload)?,
        accepted_ms: row.get(4).map_err(get)?,
        reply: reply.as_deref().map(|r| parse("reply", r)).transpose()?,
        replied_ms: row.get(6).map_err(get)?,
        trust: row.get(7).map_err(get)?,
    })
}

impl Store {
    /// Records an accepted input of an external caller: [`Store::journal_accept_with_trust`] with
    /// `external`, the trust that grants nothing.
    pub fn journal_accept(
        &mut self,
        request_id: &str,
        source: &str,
        kind: &str,
        payload: &Value,
        accepted_ms: i64,
    ) -> Result<(), StoreError> {
        self.journal_accept_with_trust(request_id, source, kind, "external", payload, accepted_ms)
    }

    /// Records an accepted input with the trust the ingress gave it (`kernel`, `local` or
    /// `external`; anything else is refused by the table's check). When this returns `Ok`, the
    /// entry is committed and the WAL is fsynced: the caller may acknowledge the input. A request
    /// id already in the journal is refused with [`StoreError::DuplicateRequest`] and the first
    /// entry is kept.
    pub fn journal_accept_with_trust(
        &mut self,
        request_id: &str,
        source: &str,
        kind: &str,
        trust: &str,
        payload: &Value,
        accepted_ms: i64,
    ) -> Result<(), StoreError> {
        const OP: &str = "journal_accept";
        let (conn, path) = self.conn_mut();
        let payload = super::to_json(OP, path, payload)?;
        let tx = conn.savepoint().ctx(OP, path)?;
        let inserted = tx
            .prepare_cached(
                "INSERT INTO journal (request_id, source, kind, payload, accepted_ms, trust) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .ctx(OP, path)?
            .execute(params![
                request_id,
                source,
                kind,
                payload,
                accepted_ms,
                trust
            ]);
        match inserted {
            Ok(_) => {}
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation) => {
                let exists: bool = tx
                    .query_row(
                        "SELECT EXISTS (SELECT 1 FROM journal WHERE request_id = ?1)",
                        [request_id],
                        |r| r.get(0),
                    )
                    .ctx(OP, path)?;
                if exists {
                    return Err(StoreError::DuplicateRequest {
                        op: OP,
                        path: path.to_path_buf(),
                        request_id: request_id.to_owned(),
                    });
                }
                return Err(StoreError::sql(OP, path, e));
            }
            Err(e) => return Err(StoreError::sql(OP, path, e)),
        }
        tx.commit().ctx(OP, path)
    }

    /// Records the one terminal reply of an accepted input; committed and fsynced before it
    /// returns, so the reply may be emitted after. Fails with [`StoreError::UnknownRequest`] for
    /// an id never accepted and [`StoreError::AlreadyReplied`] for a second reply (which leaves
    /// the first untouched). Says whether the turn was marked to be forgotten once answered
    /// ([`journal_forget_when_answered`](Self::journal_forget_when_answered)), read by the same
    /// statement: the reply's caller forgets it then, with no second query on every reply.
    pub fn journal_reply(
        &mut self,
        request_id: &str,
        reply: &Value,
        replied_ms: i64,
    ) -> Result<Replied, StoreError> {
        const OP: &str = "journal_reply";
        let (conn, path) = self.conn_mut();
        let reply = super::to_json(OP, path, reply)?;
        let tx = conn.savepoint().ctx(OP, path)?;
        let marked: Option<bool> = tx
            .prepare_cached(
                "UPDATE journal SET reply = ?2, replied_ms = ?3 \
                 WHERE request_id = ?1 AND reply IS NULL RETURNING forget_when_answered",
            )
            .ctx(OP, path)?
            .query_row(params![request_id, reply, replied_ms], |r| r.get(0))
            .optional()
            .ctx(OP, path)?;
        let Some(forget_when_answered) = marked else {
            let exists: bool = tx
                .query_row(
                    "SELECT EXISTS (SELECT 1 FROM journal WHERE request_id = ?1)",
                    [request_id],
                    |r| r.get(0),
                )
                .ctx(OP, path)?;
            let (op, path, request_id) = (OP, path.to_path_buf(), request_id.to_owned());
            return Err(if exists {
                StoreError::AlreadyReplied {
                    op,
                    path,
                    request_id,
                }
            } else {
                StoreError::UnknownRequest {
                    op,
                    path,
                    request_id,
                }
            });
        };
        tx.commit().ctx(OP, path)?;
        Ok(Replied {
            forget_when_answered,
        })
    }

    /// Deletes replied entries accepted before `before_ms`, except the newest `keep` of each
    /// source: the journal's job ends with the reply (the conversation itself lives in the
    /// window and cold context), and what a channel shows of its history is its newest entries.
    /// Entries without a reply are never deleted. Returns how many were removed.
    pub fn journal_trim(&mut self, before_ms: i64, keep: usize) -> Result<usize, StoreError> {
        const OP: &str = "journal_trim";
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        let (conn, path) = self.conn_mut();
        let tx = conn.savepoint().ctx(OP, path)?;
        let n = tx
            .execute(
                "DELETE FROM journal WHERE seq IN (SELECT seq FROM (SELECT seq, accepted_ms, \
                 reply IS NOT NULL AS replied, row_number() OVER \
                 (PARTITION BY source ORDER BY seq DESC) AS newest FROM journal) \
                 WHERE replied AND accepted_ms < ?1 AND newest > ?2)",
                params![before_ms, keep],
            )
            .ctx(OP, path)?;
        tx.commit().ctx(OP, path)?;
        Ok(n)
    }
}

impl StoreReader {
    /// Accepted inputs that have no reply yet, in acceptance order: the work to resume after a
    /// crash.
    pub fn journal_pending(&self) -> Result<Vec<JournalEntry>, StoreError> {
        const OP: &str = "journal_pending";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {JOURNAL_COLUMNS} FROM journal WHERE reply IS NULL ORDER BY seq"
            ))
            .ctx(OP, path)?;
        let mut rows = stmt.query([]).ctx(OP, path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().ctx(OP, path)? {
            out.push(entry_from_row(OP, path, row)?);
        }
        Ok(out)
    }

    /// The newest `limit` entries from `source`, oldest first (a channel's history as the
    /// journal holds it, so it survives a restart of the daemon or of the channel).
    pub fn journal_recent(
        &self,
        source: &str,
        limit: usize,
    ) -> Result<Vec<JournalEntry>, StoreError> {
        const OP: &str = "journal_recent";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {JOURNAL_COLUMNS} FROM journal WHERE source = ?1 \
                 ORDER BY seq DESC LIMIT +?2"
            ))
            .ctx(OP, path)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut rows = stmt.query(params![source, limit]).ctx(OP, path)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().ctx(OP, path)? {
            out.push(entry_from_row(OP, path, row)?);
        }
        out.reverse();
        Ok(out)
    }

    /// Whether request `request_id` is journaled and still owes its reply, read without its
    /// payload (a pasted document can be most of the row).
    pub fn journal_awaits_reply(&self, request_id: &str) -> Result<bool, StoreError> {
        const OP: &str = "journal_awaits_reply";
        self.conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM journal WHERE request_id = ?1 AND reply IS NULL)",
            )
            .ctx(OP, &self.path)?
            .query_row([request_id], |r| r.get(0))
            .ctx(OP, &self.path)
    }

    /// One journal entry by request id.
    pub fn journal_get(&self, request_id: &str) -> Result<Option<JournalEntry>, StoreError> {
        const OP: &str = "journal_get";
        let path = &self.path;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {JOURNAL_COLUMNS} FROM journal WHERE request_id = ?1"
            ))
            .ctx(OP, path)?;
        let mut rows = stmt.query([request_id]).ctx(OP, path)?;
        match rows.next().ctx(OP, path)? {
            Some(row) => Ok(Some(entry_from_row(OP, path, row)?)),
            None => Ok(None),
        }
    }
}
