//! Turns a person took back while they were still being answered (`journal.forget_when_answered`,
//! migration 10). Forgetting such a turn at once would not last — its reply, journaled when it
//! ends, brings its words back — so its journal row is marked instead and the turn is forgotten
//! in the group that journals the reply. The mark lives in the store, so a crash between the
//! request and the reply loses nothing: the input runs again and its reply still finds it.

use rusqlite::params;

use super::error::{SqlContext, StoreError};
use super::{Store, StoreReader};

impl Store {
    /// Marks turn `request_id` to be forgotten once answered. False, and nothing written, when
    /// the journal holds no entry still owing its reply by that id.
    pub fn journal_forget_when_answered(&mut self, request_id: &str) -> Result<bool, StoreError> {
        self.set_forget_mark(
            "journal_forget_when_answered",
            "UPDATE journal SET forget_when_answered = 1 WHERE request_id = ?1 AND reply IS NULL",
            request_id,
        )
    }

    /// Clears turn `request_id`'s mark, once it is forgotten; whether it was marked.
    pub fn journal_clear_forget_mark(&mut self, request_id: &str) -> Result<bool, StoreError> {
        self.set_forget_mark(
            "journal_clear_forget_mark",
            "UPDATE journal SET forget_when_answered = 0 \
             WHERE request_id = ?1 AND forget_when_answered = 1",
            request_id,
        )
    }

    fn set_forget_mark(
        &mut self,
        op: &'static str,
        sql: &str,
        request_id: &str,
    ) -> Result<bool, StoreError> {
        // One statement: atomic on its own, and inside the owner's group when there is one.
        let (conn, path) = self.conn_mut();
        let changed = conn
            .prepare_cached(sql)
            .ctx(op, path)?
            .execute(params![request_id])
            .ctx(op, path)?;
        Ok(changed == 1)
    }
}

impl StoreReader {
    /// Whether turn `request_id` is marked to be forgotten once answered.
    pub fn journal_forgets_when_answered(&self, request_id: &str) -> Result<bool, StoreError> {
        const OP: &str = "journal_forgets_when_answered";
        self.conn
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM journal \
                 WHERE request_id = ?1 AND forget_when_answered = 1)",
            )
            .ctx(OP, &self.path)?
            .query_row([request_id], |r| r.get(0))
            .ctx(OP, &self.path)
    }

    /// The answered turns still marked, in acceptance order: forgets a crash or a memory
    /// service that was not running left undone.
    pub fn journal_answered_to_forget(&self) -> Result<Vec<String>, StoreError> {
        const OP: &str = "journal_answered_to_forget";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT request_id FROM journal \
                 WHERE forget_when_answered = 1 AND reply IS NOT NULL ORDER BY seq",
            )
            .ctx(OP, &self.path)?;
        let rows = stmt.query_map([], |r| r.get(0)).ctx(OP, &self.path)?;
        rows.collect::<Result<_, _>>().ctx(OP, &self.path)
    }
}
