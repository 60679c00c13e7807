//! The words of forgotten facts: what the memory store still keeps of the turns a forgotten fact
//! was said in, noted for it to take out.
//!
//! A fact's sentence also lives, word for word, in the turn the user said it in: in the memory
//! store's window, its cold context and its journal. Forgetting the fact from the graph alone
//! would leave recall free to bring the sentence back on the next turn. So a forget notes each
//! of the fact's sentences that no remaining fact comes from, with the turn and cold item it
//! was said in (`unsaid`, written in the forget's own transaction); the memory store's owner
//! takes those words out of its rows and, once that is committed, marks them done here. A
//! sentence another fact still comes from stays: it is that fact's provenance, and the forget
//! says which facts keep it.

use std::path::Path;

use rusqlite::{Connection, params};

use super::GraphStore;
use super::model::FactId;
use super::select::fact_ids;
use crate::GraphError;
use crate::error::SqlContext;

/// Where a forgotten fact's sentence was said, read before its rows go.
pub(crate) struct Said {
    pub(crate) sentence_id: i64,
    pub(crate) sentence: String,
    pub(crate) cold_item: Option<i64>,
    pub(crate) turn_id: String,
}

/// Words of a forgotten fact still to be taken out of the turn they were said in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsaid {
    /// The row's id, for [`GraphStore::unsaid_done`].
    pub id: i64,
    /// The sentence, verbatim as the turn holds it.
    pub sentence: String,
    /// The turn it was said in (the input's request id).
    pub turn_id: String,
    /// The cold item it was distilled from, when it was.
    pub cold_item: Option<i64>,
}

/// A forgotten fact's sentence that another fact still comes from, so it stays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StillSaid {
    /// The sentence.
    pub sentence: String,
    /// The facts it is still the source of.
    pub facts: Vec<FactId>,
}

impl GraphStore {
    /// The words of forgotten facts not yet taken out of the memory store, oldest first.
    pub fn unsaid(&self) -> Result<Vec<Unsaid>, GraphError> {
        const OP: &str = "unsaid";
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, sentence, turn_id, cold_item FROM unsaid ORDER BY id")
            .ctx(OP, &self.path)?;
        stmt.query_map([], |r| {
            Ok(Unsaid {
                id: r.get(0)?,
                sentence: r.get(1)?,
                turn_id: r.get(2)?,
                cold_item: r.get(3)?,
            })
        })
        .ctx(OP, &self.path)?
        .collect::<Result<_, _>>()
        .ctx(OP, &self.path)
    }

    /// Marks words as taken out of the memory store (its commit holding that is known);
    /// returns how many rows went. Unknown ids are ignored: done twice is done. The rows'
    /// words then go from the graph's files as a forget's do (zeroed pages, WAL truncated).
    pub fn unsaid_done(&mut self, ids: &[i64]) -> Result<usize, GraphError> {
        const OP: &str = "unsaid_done";
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let mut gone = 0;
        {
            let mut stmt = tx
                .prepare_cached("DELETE FROM unsaid WHERE id = ?1")
                .ctx(OP, &self.path)?;
            for id in ids {
                gone += stmt.execute([id]).ctx(OP, &self.path)?;
            }
        }
        tx.commit().ctx(OP, &self.path)?;
        if gone > 0 {
            self.truncate_wal();
        }
        Ok(gone)
    }
}

/// After a forget's rows are deleted: notes each sentence of `said` no fact holds any more as
/// unsaid in the turns it was said in, and reports the others with the facts that keep them.
pub(crate) fn note_unsaid(
    conn: &Connection,
    path: &Path,
    said: &[Said],
    now: i64,
) -> Result<(Vec<Unsaid>, Vec<StillSaid>), GraphError> {
    const OP: &str = "note_unsaid";
    let mut unsaid = Vec::new();
    let mut still: Vec<StillSaid> = Vec::new();
    let mut insert = conn
        .prepare_cached(
            "INSERT INTO unsaid (sentence, turn_id, cold_item, forgotten_ms) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING RETURNING id",
        )
        .ctx(OP, path)?;
    let mut existing = conn
        .prepare_cached(
            "SELECT id FROM unsaid WHERE sentence = ?1 AND turn_id = ?2 \
             AND ifnull(cold_item, -1) = ifnull(?3, -1)",
        )
        .ctx(OP, path)?;
    for s in said {
        if s.sentence.trim().is_empty() || still.iter().any(|k| k.sentence == s.sentence) {
            continue;
        }
        let facts = holders(conn, path, s.sentence_id)?;
        if !facts.is_empty() {
            still.push(StillSaid {
                sentence: s.sentence.clone(),
                facts,
            });
            continue;
        }
        let id: i64 = match insert
            .query_row(params![s.sentence, s.turn_id, s.cold_item, now], |r| {
                r.get(0)
            }) {
            Ok(id) => id,
            Err(rusqlite::Error::QueryReturnedNoRows) => existing
                .query_row(params![s.sentence, s.turn_id, s.cold_item], |r| r.get(0))
                .ctx(OP, path)?,
            Err(e) => return Err(e).ctx(OP, path),
        };
        if unsaid.iter().all(|u: &Unsaid| u.id != id) {
            unsaid.push(Unsaid {
                id,
                sentence: s.sentence.clone(),
                turn_id: s.turn_id.clone(),
                cold_item: s.cold_item,
            });
        }
    }
    Ok((unsaid, still))
}

/// The facts sentence `sentence_id` is still a source of (none once the sweep deleted it).
fn holders(conn: &Connection, path: &Path, sentence_id: i64) -> Result<Vec<FactId>, GraphError> {
    fact_ids(
        conn,
        path,
        "note_unsaid",
        "SELECT 'r', relation_id FROM provenance WHERE sentence_id = ?1 \
         UNION SELECT 'e', id FROM events WHERE sentence_id = ?1 ORDER BY 1 DESC, 2",
        sentence_id,
    )
}
