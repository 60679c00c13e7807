//! Forgetting by id, explaining by id, and purging by criteria that must each match.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use super::entities::{find_entity, sweep_orphans};
use super::model::{FactId, FactStatus};
use super::select::{fact_ids, ids};
use super::unsaid::{Said, StillSaid, Unsaid, note_shown, note_unsaid};
use super::{GraphStore, now_ms};
use crate::GraphError;
use crate::error::SqlContext;
use crate::name::{normal_form, tombstone_key, validate_name, validate_predicate};

/// What `forget` removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forgotten {
    /// The fact's id.
    pub id: FactId,
    /// The fact as it read (`Subject predicate Object`, or the event).
    pub fact: String,
    /// How many source sentences it had.
    pub sources: usize,
    /// Cold items it may never be distilled from again.
    pub cold_items: Vec<i64>,
    /// Its sentences no fact holds any more, with the turns they were said in: what the memory
    /// store is to take out of those turns (see [`GraphStore::unsaid`]).
    pub unsaid: Vec<Unsaid>,
    /// Its sentences another fact still comes from, kept word for word.
    pub still_said: Vec<StillSaid>,
}

/// Why the graph believes a fact: its sources, verbatim.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// The fact's id.
    pub id: FactId,
    /// The fact as it reads.
    pub fact: String,
    /// Whether it holds now.
    pub status: FactStatus,
    /// Superseded by a correction: the id of the fact that replaced it.
    pub superseded_by: Option<FactId>,
    /// Each sentence it came from, oldest first.
    pub sources: Vec<SourceSentence>,
}

/// One sentence a fact came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceSentence {
    /// The sentence, verbatim.
    pub sentence: String,
    /// `asserted`, `ended` or `corrected`.
    pub role: String,
    /// The cold item, when it was distilled.
    pub cold_item: Option<i64>,
    /// The turn it was said in.
    pub turn_id: String,
    /// When it was said (Unix ms).
    pub said_ms: i64,
}

/// Which relations a purge removes: all given criteria must hold. Each given criterion must
/// match something on its own, or the purge is refused: a misspelt name never widens it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeCriteria {
    /// Subject entity (name or alias, compared by normal form).
    pub subject: Option<String>,
    /// Predicate, exactly.
    pub predicate: Option<String>,
    /// Object entity (name or alias).
    pub object: Option<String>,
    /// Relations stated by this cold item.
    pub cold_item: Option<i64>,
}

impl GraphStore {
    /// Removes a fact and its provenance, vectors and search rows, and remembers it as
    /// forgotten for every cold item it came from, so distilling them again never brings it
    /// back. Entities and sentences left unused go too.
    pub fn forget(&mut self, id: FactId) -> Result<Forgotten, GraphError> {
        self.forget_with(id, Words::Unsay)
    }

    /// [`forget`](Self::forget), and the fact's value is noted for the replies of the turns
    /// `shown_in` names: those whose reply memory showed the fact, or a cold item it came
    /// from, and may have repeated it (`ContextEvent::shown`). In the same transaction.
    pub fn forget_shown(
        &mut self,
        id: FactId,
        shown_in: ShownIn<'_>,
    ) -> Result<Forgotten, GraphError> {
        const OP: &str = "forget";
        let now = now_ms();
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let out = forget_noting_shown(&tx, &self.path, id, now, shown_in)?;
        tx.commit().ctx(OP, &self.path)?;
        self.scrub();
        Ok(out)
    }

    /// [`forget`](Self::forget), the words noted as unsaid or kept: a correction replaces a
    /// belief, it does not take back that the user said the old one.
    pub(super) fn forget_with(
        &mut self,
        id: FactId,
        words: Words,
    ) -> Result<Forgotten, GraphError> {
        let now = now_ms();
        let tx = self.conn.transaction().ctx("forget", &self.path)?;
        let out = forget_in(&tx, &self.path, id, now, words)?;
        tx.commit().ctx("forget", &self.path)?;
        self.scrub();
        Ok(out)
    }

    /// Makes what was just deleted unreadable from the files, not only from queries: the
    /// keyword indexes are merged (their old segments still held the forgotten words), and the
    /// WAL is truncated ([`truncate_wal`](Self::truncate_wal)). Deleted pages are zeroed as
    /// they are freed (`secure_delete`, set at open). The deletion itself is committed
    /// already, so a failure here is logged, not returned: the fact is forgotten.
    fn scrub(&mut self) {
        let merged = ["relation_fts", "entity_fts", "event_fts"]
            .iter()
            .try_for_each(|fts| {
                self.conn
                    .execute(
                        &format!("INSERT INTO {fts} ({fts}) VALUES ('optimize')"),
                        [],
                    )
                    .map(drop)
            });
        match merged {
            Ok(()) => self.truncate_wal(),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "graph: scrubbing after a forget failed: {e}")
            }
        }
    }

    /// Checkpoints and truncates the WAL, whose frames hold pages as they were before a
    /// deletion; logged, not returned, as [`scrub`](Self::scrub) explains.
    pub(super) fn truncate_wal(&mut self) {
        let truncated = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                r.get::<_, i64>(0)
            });
        match truncated {
            Ok(0) => {}
            Ok(_) => tracing::warn!(
                path = %self.path.display(),
                "graph: a reader kept the WAL from being truncated after a forget; its old frames go at the next checkpoint"
            ),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "graph: scrubbing after a forget failed: {e}")
            }
        }
    }

    /// The sources of a fact, verbatim.
    pub fn why(&self, id: FactId) -> Result<Provenance, GraphError> {
        const OP: &str = "why";
        let (conn, path) = (&self.conn, self.path.as_path());
        let fact = describe(conn, path, id)?;
        match id {
            FactId::Relation(rid) => {
                let (valid_to, superseded_by): (Option<i64>, Option<i64>) = conn
                    .query_row(
                        "SELECT valid_to_ms, superseded_by FROM relations WHERE id = ?1",
                        [rid],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .ctx(OP, path)?;
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT s.text, p.role, p.cold_item, p.turn_id, p.said_ms FROM provenance p \
                         JOIN sentences s ON s.id = p.sentence_id WHERE p.relation_id = ?1 \
                         ORDER BY p.said_ms, p.id",
                    )
                    .ctx(OP, path)?;
                let sources = stmt
                    .query_map([rid], |r| {
                        Ok(SourceSentence {
                            sentence: r.get(0)?,
                            role: r.get(1)?,
                            cold_item: r.get(2)?,
                            turn_id: r.get(3)?,
                            said_ms: r.get(4)?,
                        })
                    })
                    .ctx(OP, path)?
                    .collect::<Result<Vec<_>, _>>()
                    .ctx(OP, path)?;
                Ok(Provenance {
                    id,
                    fact,
                    status: if valid_to.is_some() || superseded_by.is_some() {
                        FactStatus::Past
                    } else {
                        FactStatus::Current
                    },
                    superseded_by: superseded_by.map(FactId::Relation),
                    sources,
                })
            }
            FactId::Event(eid) => {
                let source = conn
                    .query_row(
                        "SELECT s.text, e.cold_item, e.turn_id, e.said_ms FROM events e \
                         JOIN sentences s ON s.id = e.sentence_id WHERE e.id = ?1",
                        [eid],
                        |r| {
                            Ok(SourceSentence {
                                sentence: r.get(0)?,
                                role: "asserted".to_owned(),
                                cold_item: r.get(1)?,
                                turn_id: r.get(2)?,
                                said_ms: r.get(3)?,
                            })
                        },
                    )
                    .ctx(OP, path)?;
                Ok(Provenance {
                    id,
                    fact,
                    status: FactStatus::Event,
                    superseded_by: None,
                    sources: vec![source],
                })
            }
        }
    }

    /// Forgets every relation matching `criteria`; returns what each forget removed. Refused, with nothing
    /// removed, when no criterion is given, when a given criterion matches nothing on its own,
    /// or when together they match nothing.
    pub fn purge(&mut self, criteria: &PurgeCriteria) -> Result<Vec<Forgotten>, GraphError> {
        self.purge_shown(criteria, &mut |_, _| Vec::new())
    }

    /// [`purge`](Self::purge), each fact's value noted for the replies of the turns
    /// `shown_in` names, as [`forget_shown`](Self::forget_shown) does.
    pub fn purge_shown(
        &mut self,
        criteria: &PurgeCriteria,
        shown_in: ShownIn<'_>,
    ) -> Result<Vec<Forgotten>, GraphError> {
        const OP: &str = "purge";
        let now = now_ms();
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let path = self.path.as_path();
        let ids = purge_targets(&tx, path, criteria)?;
        let mut gone = Vec::with_capacity(ids.len());
        for &id in &ids {
            gone.push(forget_noting_shown(
                &tx,
                path,
                FactId::Relation(id),
                now,
                shown_in,
            )?);
        }
        tx.commit().ctx(OP, path)?;
        self.scrub();
        Ok(gone)
    }

    /// A cold item the user removed from memory takes with it what only it told: each fact
    /// whose every source is that item is forgotten (as by id: tombstone, its words noted as
    /// unsaid), and the item's part in the others — said in other turns too — is dropped from
    /// their provenance, so `why` no longer points at what is gone. Returns the facts
    /// forgotten; none is an answer, not an error (an item that told nothing).
    pub fn forget_cold_item(&mut self, cold_item: i64) -> Result<Vec<Forgotten>, GraphError> {
        self.forget_turn_and_items("", &[cold_item])
    }

    /// A turn the user removed from memory takes with it what only it told, as
    /// [`forget_cold_item`](Self::forget_cold_item) does for one of its items: the facts
    /// distilled from its cold items, and those committed while it was served (a memory tool
    /// the model called in it), which no cold item names. Reads every provenance row: a forget
    /// is rare, and a user's request.
    pub fn forget_turn(&mut self, turn_id: &str) -> Result<Vec<Forgotten>, GraphError> {
        self.forget_turn_and_items(turn_id, &[])
    }

    /// Turn `turn_id` (none: `""`) and its cold items `items` forgotten together, in one
    /// transaction: each item as [`forget_cold_item`](Self::forget_cold_item), then the turn
    /// as [`forget_turn`](Self::forget_turn), so a fact told by two of its items goes with the
    /// second and none is left half forgotten by a failure between them.
    pub fn forget_turn_and_items(
        &mut self,
        turn_id: &str,
        items: &[i64],
    ) -> Result<Vec<Forgotten>, GraphError> {
        const OP: &str = "forget_turn";
        let now = now_ms();
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let path = self.path.as_path();
        let mut gone = Vec::new();
        let mut dropped = 0;
        for &item in items {
            dropped += forget_source(&tx, path, "cold_item", item, now, &mut gone)?;
        }
        if !turn_id.is_empty() {
            dropped += forget_source(&tx, path, "turn_id", turn_id, now, &mut gone)?;
        }
        tx.commit().ctx(OP, path)?;
        // A source that told nothing left nothing to scrub: most turns told no fact.
        if !gone.is_empty() || dropped > 0 {
            self.scrub();
        }
        Ok(gone)
    }
    /// The soft purge: every relation `criteria` select that holds now ends now — kept as past
    /// history with its sources (`why` still explains it, recall shows it as past), never
    /// returned as current. One that has not begun yet (a plan dated later) never held, so it
    /// is forgotten instead. Returns how many ended or went; refused as [`GraphStore::purge`]
    /// is, so a criterion that matches nothing never widens it. Relations already past are
    /// left as they were (0 is an answer, not an error: the criteria matched). `now` is the
    /// end of what held (Unix ms).
    pub fn end_matching(
        &mut self,
        criteria: &PurgeCriteria,
        now: i64,
    ) -> Result<usize, GraphError> {
        const OP: &str = "end_matching";
        let tx = self.conn.transaction().ctx(OP, &self.path)?;
        let path = self.path.as_path();
        let mut ended = 0;
        for id in purge_targets(&tx, path, criteria)? {
            let begins: Option<i64> = tx
                .query_row(
                    "SELECT valid_from_ms FROM relations WHERE id = ?1 \
                     AND valid_to_ms IS NULL AND superseded_ms IS NULL",
                    [id],
                    |r| r.get(0),
                )
                .optional()
                .ctx(OP, path)?;
            match begins {
                None => continue,
                Some(from) if from > now => {
                    forget_in(&tx, path, FactId::Relation(id), now, Words::Unsay)?;
                }
                Some(_) => {
                    tx.execute(
                        "UPDATE relations SET valid_to_ms = ?2 WHERE id = ?1",
                        params![id, now],
                    )
                    .ctx(OP, path)?;
                }
            }
            ended += 1;
        }
        tx.commit().ctx(OP, path)?;
        Ok(ended)
    }
}

/// The facts whose every source has `value` in provenance column `column` (`cold_item` or
/// `turn_id`, also a column of `events`) forgotten into `gone`, and the rest of those sources
/// dropped; how many provenance and event rows went.
fn forget_source(
    tx: &Connection,
    path: &Path,
    column: &str,
    value: impl rusqlite::ToSql + Copy,
    now: i64,
    gone: &mut Vec<Forgotten>,
) -> Result<usize, GraphError> {
    const OP: &str = "forget_turn";
    let only = fact_ids(
        tx,
        path,
        OP,
        &format!(
            "SELECT DISTINCT 'r', p.relation_id FROM provenance p WHERE p.{column} = ?1 \
             AND NOT EXISTS (SELECT 1 FROM provenance o WHERE o.relation_id = p.relation_id \
                 AND o.{column} IS NOT ?1) \
             UNION SELECT 'e', id FROM events WHERE {column} = ?1 AND relation_id IS NULL \
             ORDER BY 1 DESC, 2"
        ),
        value,
    )?;
    for id in only {
        gone.push(forget_in(tx, path, id, now, Words::Unsay)?);
    }
    // What is left of the source elsewhere: its provenance rows, and the dated events it
    // told of facts that stand on other sources.
    let sentences = ids(
        tx,
        path,
        OP,
        &format!(
            "SELECT sentence_id FROM provenance WHERE {column} = ?1 \
             UNION SELECT sentence_id FROM events WHERE {column} = ?1"
        ),
        value,
    )?;
    let subjects = ids(
        tx,
        path,
        OP,
        &format!("SELECT subject_id FROM events WHERE {column} = ?1"),
        value,
    )?;
    let dropped = tx
        .execute(
            &format!("DELETE FROM provenance WHERE {column} = ?1"),
            [value],
        )
        .ctx(OP, path)?
        + tx.execute(&format!("DELETE FROM events WHERE {column} = ?1"), [value])
            .ctx(OP, path)?;
    sweep_orphans(tx, path, &subjects, &sentences)?;
    Ok(dropped)
}

/// The ids of the relations `criteria` select (superseded ones included: a purge leaves no
/// trace of what it names).
fn purge_targets(
    conn: &Connection,
    path: &Path,
    criteria: &PurgeCriteria,
) -> Result<Vec<i64>, GraphError> {
    const OP: &str = "purge";
    let nothing = |criterion: String| GraphError::MatchesNothing { criterion };
    let entity = |field: &str, name: &str| -> Result<i64, GraphError> {
        let display = validate_name(name)?;
        find_entity(conn, path, &normal_form(&display))?
            .ok_or_else(|| nothing(format!("{field} = {name:?}")))
    };
    let subject = criteria
        .subject
        .as_deref()
        .map(|n| entity("subject", n))
        .transpose()?;
    let object = criteria
        .object
        .as_deref()
        .map(|n| entity("object", n))
        .transpose()?;
    let predicate = criteria
        .predicate
        .as_deref()
        .map(validate_predicate)
        .transpose()?;
    if subject.is_none() && object.is_none() && predicate.is_none() && criteria.cold_item.is_none()
    {
        return Err(GraphError::NoCriteria);
    }
    let exists = |sql: &str, value: &dyn rusqlite::ToSql| -> Result<bool, GraphError> {
        conn.query_row(sql, [value], |_| Ok(()))
            .optional()
            .map(|r| r.is_some())
            .ctx(OP, path)
    };
    if let Some(p) = predicate
        && !exists("SELECT 1 FROM relations WHERE predicate = ?1 LIMIT 1", &p)?
    {
        return Err(nothing(format!("predicate = {p:?}")));
    }
    if let Some(c) = criteria.cold_item
        && !exists("SELECT 1 FROM provenance WHERE cold_item = ?1 LIMIT 1", &c)?
    {
        return Err(nothing(format!("cold_item = {c}")));
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT r.id FROM relations r WHERE (?1 IS NULL OR r.subject_id = ?1) \
             AND (?2 IS NULL OR r.predicate = ?2) AND (?3 IS NULL OR r.object_id = ?3) \
             AND (?4 IS NULL OR EXISTS (SELECT 1 FROM provenance p \
                  WHERE p.relation_id = r.id AND p.cold_item = ?4)) ORDER BY r.id",
        )
        .ctx(OP, path)?;
    let ids = stmt
        .query_map(
            params![subject, predicate, object, criteria.cold_item],
            |r| r.get(0),
        )
        .ctx(OP, path)?
        .collect::<Result<Vec<i64>, _>>()
        .ctx(OP, path)?;
    if ids.is_empty() {
        return Err(nothing("the combination of all criteria".to_owned()));
    }
    Ok(ids)
}

/// The fact as one line: `Subject predicate Object` or `Subject: what (phrase)`.
fn describe(conn: &Connection, path: &Path, id: FactId) -> Result<String, GraphError> {
    let found = match id {
        FactId::Relation(rid) => conn.query_row(
            "SELECT e1.name || ' ' || r.predicate || ' ' || e2.name FROM relations r \
             JOIN entities e1 ON e1.id = r.subject_id JOIN entities e2 ON e2.id = r.object_id \
             WHERE r.id = ?1",
            [rid],
            |r| r.get(0),
        ),
        FactId::Event(eid) => conn.query_row(
            "SELECT e1.name || ': ' || e.what FROM events e \
             JOIN entities e1 ON e1.id = e.subject_id WHERE e.id = ?1",
            [eid],
            |r| r.get(0),
        ),
    };
    found
        .optional()
        .ctx("describe", path)?
        .ok_or_else(|| GraphError::NotFound { id: id.to_string() })
}

/// Where a forgotten relation of a single-valued predicate stood in its slot.
struct Slot {
    subject: i64,
    predicate: String,
    valid_from: i64,
    valid_to: Option<i64>,
}

/// The slot of relation `rid` when it is of a single-valued predicate and not superseded;
/// `None` otherwise (a superseded value gave its closes to the correction that replaced it).
fn slot_of(conn: &Connection, path: &Path, rid: i64) -> Result<Option<Slot>, GraphError> {
    conn.query_row(
        "SELECT subject_id, predicate, valid_from_ms, valid_to_ms FROM relations \
         WHERE id = ?1 AND single_valued = 1 AND superseded_ms IS NULL",
        [rid],
        |r| {
            Ok(Slot {
                subject: r.get(0)?,
                predicate: r.get(1)?,
                valid_from: r.get(2)?,
                valid_to: r.get(3)?,
            })
        },
    )
    .optional()
    .ctx("forget_slot", path)
}

/// Undoes the close a forgotten value caused, once it is deleted: the value of the same slot
/// that ended exactly when the forgotten one began — closed because it began, or stored as
/// history up to it when an older dated value was told late — gets the forgotten value's own
/// end (none, when it was current). The slot then reads as if the forgotten value had never
/// been told, and the earlier value's end no longer keeps a forgotten fact's start. Without
/// this the slot was left with a past value and no current one, which no sequence of tells
/// produces: the same write told again found no open row to merge into and stored the value
/// a second time. A value ended by a statement of its own (an `ended` source) stays ended; of
/// several candidates the latest-starting one is restored, and never over another open value.
fn restore_closed_by(conn: &Connection, path: &Path, slot: &Slot) -> Result<(), GraphError> {
    conn.execute(
        "UPDATE relations SET valid_to_ms = ?4 WHERE id = (SELECT r.id FROM relations r \
             WHERE r.subject_id = ?1 AND r.predicate = ?2 AND r.superseded_ms IS NULL \
             AND r.valid_to_ms = ?3 AND NOT EXISTS (SELECT 1 FROM provenance p \
                 WHERE p.relation_id = r.id AND p.role = 'ended') \
             ORDER BY r.valid_from_ms DESC, r.id DESC LIMIT 1) \
         AND (?4 IS NOT NULL OR NOT EXISTS (SELECT 1 FROM relations o WHERE o.subject_id = ?1 \
             AND o.predicate = ?2 AND o.superseded_ms IS NULL AND o.valid_to_ms IS NULL))",
        params![slot.subject, slot.predicate, slot.valid_from, slot.valid_to],
    )
    .ctx("forget_restore", path)
    .map(drop)
}

/// Given a fact about to be forgotten and the cold items it came from, the turns whose reply
/// memory showed either (empty: none known). The graph does not know the memory store's turns;
/// its owner answers.
pub type ShownIn<'a> = &'a mut dyn FnMut(FactId, &[i64]) -> Vec<String>;

/// [`forget_in`], the words noted as unsaid, and the fact's value noted for the replies of the
/// turns `shown_in` names (except where a fact still held was told with the same value,
/// judged once the fact is gone).
fn forget_noting_shown(
    conn: &Connection,
    path: &Path,
    id: FactId,
    now: i64,
    shown_in: ShownIn<'_>,
) -> Result<Forgotten, GraphError> {
    let shown = match (id, value_of(conn, path, id)?) {
        (FactId::Relation(rid), Some(value)) => {
            let items = ids(
                conn,
                path,
                "forget",
                "SELECT DISTINCT cold_item FROM provenance WHERE relation_id = ?1 \
                 AND cold_item IS NOT NULL ORDER BY 1",
                rid,
            )?;
            Some((value, shown_in(id, &items)))
        }
        _ => None,
    };
    let mut out = forget_in(conn, path, id, now, Words::Unsay)?;
    if let Some((value, turns)) = shown {
        for note in note_shown(conn, path, &value, &turns, now)? {
            if out.unsaid.iter().all(|u| u.id != note.id) {
                out.unsaid.push(note);
            }
        }
    }
    Ok(out)
}

/// The value a reply would repeat of fact `id`: a relation's object, unless it is the user
/// (`None` for an event, or when there is no such fact).
fn value_of(conn: &Connection, path: &Path, id: FactId) -> Result<Option<String>, GraphError> {
    let FactId::Relation(rid) = id else {
        return Ok(None);
    };
    let name: Option<String> = conn
        .query_row(
            "SELECT e.name FROM relations r JOIN entities e ON e.id = r.object_id \
             WHERE r.id = ?1",
            [rid],
            |r| r.get(0),
        )
        .optional()
        .ctx("forget", path)?;
    Ok(name.and_then(repeatable))
}

/// A relation's object as a reply would repeat it: its name, unless the object is the user.
fn repeatable(name: String) -> Option<String> {
    (name != crate::distill::USER).then_some(name)
}

/// [`GraphStore::forget`] inside the caller's transaction: the fact goes, and the words it
/// came from that no fact holds any more are noted as unsaid.
fn forget_in(
    conn: &Connection,
    path: &Path,
    id: FactId,
    now: i64,
    words: Words,
) -> Result<Forgotten, GraphError> {
    let mut said = Vec::new();
    let mut out = forget_rows(conn, path, id, now, &mut said)?;
    if words == Words::Unsay {
        (out.unsaid, out.still_said) = note_unsaid(conn, path, &said, now)?;
    }
    Ok(out)
}

/// What a forget does with the words the fact came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Words {
    /// Noted as unsaid: the memory store takes them out of the turns that said them.
    Unsay,
    /// Left where they were said (a correction).
    Keep,
}

/// Deletes the fact's rows (and the dated events told with it), noting in `said` where each of
/// its sentences was said.
fn forget_rows(
    conn: &Connection,
    path: &Path,
    id: FactId,
    now: i64,
    said: &mut Vec<Said>,
) -> Result<Forgotten, GraphError> {
    const OP: &str = "forget";
    let fact = describe(conn, path, id)?;
    let (key, entities, cold, sentences): (String, Vec<i64>, Vec<Option<i64>>, Vec<i64>) = match id
    {
        FactId::Relation(rid) => {
            let (key, s, o, value): (String, i64, i64, String) = conn
                .query_row(
                    "SELECT r.fact_key, r.subject_id, r.object_id, e.name FROM relations r \
                     JOIN entities e ON e.id = r.object_id WHERE r.id = ?1",
                    [rid],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .ctx(OP, path)?;
            let mut stmt = conn
                .prepare_cached(
                    "SELECT p.cold_item, p.sentence_id, s.text, p.turn_id FROM provenance p \
                     JOIN sentences s ON s.id = p.sentence_id WHERE p.relation_id = ?1",
                )
                .ctx(OP, path)?;
            let rows = stmt
                .query_map([rid], |r| {
                    Ok(Said {
                        cold_item: r.get(0)?,
                        sentence_id: r.get(1)?,
                        sentence: r.get(2)?,
                        turn_id: r.get(3)?,
                        echo: repeatable(value.clone()),
                    })
                })
                .ctx(OP, path)?
                .collect::<Result<Vec<_>, _>>()
                .ctx(OP, path)?;
            // The dated events that started or ended this fact are the same memory told
            // with a date: they go with it.
            let linked = ids(
                conn,
                path,
                OP,
                "SELECT id FROM events WHERE relation_id = ?1",
                rid,
            )?;
            for event in linked {
                forget_rows(conn, path, FactId::Event(event), now, said)?;
            }
            crate::scene::drop_relation_refs(conn, path, rid)?;
            let slot = slot_of(conn, path, rid)?;
            conn.execute("DELETE FROM relations WHERE id = ?1", [rid])
                .ctx(OP, path)?;
            if let Some(slot) = slot {
                restore_closed_by(conn, path, &slot)?;
            }
            let (cold, sentences) = rows.iter().map(|r| (r.cold_item, r.sentence_id)).unzip();
            said.extend(rows);
            (key, vec![s, o], cold, sentences)
        }
        FactId::Event(eid) => {
            let (key, s, row): (String, i64, Said) = conn
                .query_row(
                    "SELECT e.event_key, e.subject_id, e.cold_item, e.sentence_id, s.text, \
                     e.turn_id FROM events e JOIN sentences s ON s.id = e.sentence_id \
                     WHERE e.id = ?1",
                    [eid],
                    |r| {
                        Ok((
                            r.get(0)?,
                            r.get(1)?,
                            Said {
                                cold_item: r.get(2)?,
                                sentence_id: r.get(3)?,
                                sentence: r.get(4)?,
                                turn_id: r.get(5)?,
                                // A dated event told with a relation goes with it, and the
                                // relation's value is noted from its own rows.
                                echo: None,
                            },
                        ))
                    },
                )
                .ctx(OP, path)?;
            conn.execute("DELETE FROM events WHERE id = ?1", [eid])
                .ctx(OP, path)?;
            let (c, sentence) = (row.cold_item, row.sentence_id);
            said.push(row);
            (key, vec![s], vec![c], vec![sentence])
        }
    };
    let mut cold_items: Vec<i64> = cold.iter().flatten().copied().collect();
    cold_items.sort_unstable();
    cold_items.dedup();
    let mut tomb = conn
        .prepare_cached(
            "INSERT INTO tombstones (cold_item, fact_key, forgotten_ms) VALUES (?1, ?2, ?3) \
             ON CONFLICT DO NOTHING",
        )
        .ctx(OP, path)?;
    for item in &cold_items {
        tomb.execute(params![item, tombstone_key(&key), now])
            .ctx(OP, path)?;
    }
    sweep_orphans(conn, path, &entities, &sentences)?;
    Ok(Forgotten {
        id,
        fact,
        sources: cold.len(),
        cold_items,
        unsaid: Vec::new(),
        still_said: Vec::new(),
    })
}
