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
//!
//! The agent's reply in the same turn often repeats the value the user told ("I live in Porto"
//! → "Lovely, Porto is a great city"), and recall would bring that back just the same. So the
//! value of a forgotten relation is noted too: taken out of that turn's replies as a whole word,
//! even while the sentence stays as another fact's source — and out of the user's words too
//! when the fact was told in the model's words (committed with a tool, no cold item). Not when
//! another fact told in the same turn has the same value: the reply may be repeating that one.

use std::path::Path;

use hearth_memory::RedactionScope;
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
    /// The fact's value, which the turn may hold in other words than the sentence (a
    /// relation's object).
    pub(crate) echo: Option<String>,
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
    /// Where in the turn the words go: a sentence verbatim; or the fact's value as a whole
    /// word, from the replies (which may repeat it), or from the whole turn when the fact was
    /// told in other words than the turn's (committed by the model).
    pub scope: RedactionScope,
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
            .prepare_cached("SELECT id, sentence, turn_id, cold_item, echo FROM unsaid ORDER BY id")
            .ctx(OP, &self.path)?;
        stmt.query_map([], |r| {
            Ok(Unsaid {
                id: r.get(0)?,
                sentence: r.get(1)?,
                turn_id: r.get(2)?,
                cold_item: r.get(3)?,
                scope: scope_from_column(r.get(4)?),
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
/// unsaid in the turns it was said in, with the value the reply may have echoed, and reports
/// the other sentences with the facts that keep them.
pub(crate) fn note_unsaid(
    conn: &Connection,
    path: &Path,
    said: &[Said],
    now: i64,
) -> Result<(Vec<Unsaid>, Vec<StillSaid>), GraphError> {
    let mut unsaid: Vec<Unsaid> = Vec::new();
    let mut still: Vec<StillSaid> = Vec::new();
    for s in said {
        let mut note = |words: &str, scope: RedactionScope| -> Result<(), GraphError> {
            let id = note_row(conn, path, words, s, scope, now)?;
            if unsaid.iter().all(|u| u.id != id) {
                unsaid.push(Unsaid {
                    id,
                    sentence: words.to_owned(),
                    turn_id: s.turn_id.clone(),
                    cold_item: s.cold_item,
                    scope,
                });
            }
            Ok(())
        };
        // The value goes even while the sentence stays as another fact's source: once that
        // fact goes too, the sentence does, and the reply must not keep the value. A fact told
        // directly (no cold item: the model committed it) was told in the model's words, which
        // the turn need not hold: its value goes from the user's words too.
        if let Some(value) = s.echo.as_deref().filter(|v| !v.trim().is_empty())
            && !still_told_in_turn(conn, path, value, &s.turn_id)?
        {
            let scope = match s.cold_item {
                Some(_) => RedactionScope::InReplies,
                None => RedactionScope::InTurn,
            };
            note(value, scope)?;
        }
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
        note(&s.sentence, RedactionScope::Verbatim)?;
    }
    Ok((unsaid, still))
}

/// After a forget: notes `value` for the replies of each turn of `turns` (turns whose reply
/// memory showed the fact), except where a fact still held was told with the same value.
pub(crate) fn note_shown(
    conn: &Connection,
    path: &Path,
    value: &str,
    turns: &[String],
    now: i64,
) -> Result<Vec<Unsaid>, GraphError> {
    let mut noted = Vec::new();
    if value.trim().is_empty() {
        return Ok(noted);
    }
    for turn in turns.iter().filter(|t| !t.is_empty()) {
        if still_told_in_turn(conn, path, value, turn)? {
            continue;
        }
        let shown = Said {
            sentence_id: 0,
            sentence: String::new(),
            cold_item: None,
            turn_id: turn.clone(),
            echo: None,
        };
        let id = note_row(conn, path, value, &shown, RedactionScope::InReplies, now)?;
        if noted.iter().all(|u: &Unsaid| u.id != id) {
            noted.push(Unsaid {
                id,
                sentence: value.to_owned(),
                turn_id: turn.clone(),
                cold_item: None,
                scope: RedactionScope::InReplies,
            });
        }
    }
    Ok(noted)
}

/// Writes one unsaid row (or finds the one already there); its id.
fn note_row(
    conn: &Connection,
    path: &Path,
    words: &str,
    said: &Said,
    scope: RedactionScope,
    now: i64,
) -> Result<i64, GraphError> {
    let echo = scope_column(scope);
    const OP: &str = "note_unsaid";
    let inserted = conn
        .prepare_cached(
            "INSERT INTO unsaid (sentence, turn_id, cold_item, echo, forgotten_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING RETURNING id",
        )
        .ctx(OP, path)?
        .query_row(
            params![words, said.turn_id, said.cold_item, echo, now],
            |r| r.get(0),
        );
    match inserted {
        Ok(id) => Ok(id),
        Err(rusqlite::Error::QueryReturnedNoRows) => conn
            .prepare_cached(
                "SELECT id FROM unsaid WHERE sentence = ?1 AND turn_id = ?2 \
                 AND ifnull(cold_item, -1) = ifnull(?3, -1) AND echo = ?4",
            )
            .ctx(OP, path)?
            .query_row(params![words, said.turn_id, said.cold_item, echo], |r| {
                r.get(0)
            })
            .ctx(OP, path),
        Err(e) => Err(e).ctx(OP, path),
    }
}

/// `unsaid.echo` for `scope`.
fn scope_column(scope: RedactionScope) -> i64 {
    match scope {
        RedactionScope::Verbatim => 0,
        RedactionScope::InReplies => 1,
        RedactionScope::InTurn => 2,
    }
}

/// The scope `unsaid.echo` holds (its CHECK admits 0, 1 and 2 only).
fn scope_from_column(echo: i64) -> RedactionScope {
    match echo {
        1 => RedactionScope::InReplies,
        2 => RedactionScope::InTurn,
        _ => RedactionScope::Verbatim,
    }
}

/// Whether a fact still held was told in `turn_id` with `value` as its value: the turn's reply
/// may be repeating that one.
fn still_told_in_turn(
    conn: &Connection,
    path: &Path,
    value: &str,
    turn_id: &str,
) -> Result<bool, GraphError> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM provenance p JOIN relations r ON r.id = p.relation_id \
         JOIN entities e ON e.id = r.object_id WHERE p.turn_id = ?1 AND e.name = ?2 COLLATE NOCASE)",
    )
    .ctx("note_unsaid", path)?
    .query_row(params![turn_id, value], |r| r.get(0))
    .ctx("note_unsaid", path)
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
