//! Writing statements: merge an open fact asserted again, close a single-valued fact when a new
//! value begins, supersede one a correction replaces, and keep the source of every claim.

use std::path::Path;

use hearth_memory::{Embedder, index_tokens};
use rusqlite::{Connection, OptionalExtension, params};

use super::entities::{predicate_single, predicate_words, sentence_id, upsert_entity};
use super::model::{EventSpec, Fact, FactId, FactMode, FactSource, Statement, TellReport};
use super::{GraphStore, now_ms};
use crate::GraphError;
use crate::error::SqlContext;
use crate::name::{fact_key, tombstone_key, validate_name, validate_predicate};

/// A relation keeps at most this many sentences in its search text; more mentions add
/// provenance rows but no new words.
const MAX_INDEXED_SENTENCES: i64 = 4;

impl GraphStore {
    /// Stores `statements` from `source` in one transaction: all of them or, on error, none.
    /// Telling the same sentence from the same source again changes nothing.
    pub fn tell(
        &mut self,
        statements: &[Statement],
        source: &FactSource,
    ) -> Result<TellReport, GraphError> {
        let now = now_ms();
        let embedder = self.embedder.clone();
        let tx = self.conn.transaction().ctx("tell", &self.path)?;
        let report = tell_in(
            &tx,
            &self.path,
            statements,
            source,
            now,
            embedder.as_deref(),
        )?;
        tx.commit().ctx("tell", &self.path)?;
        Ok(report)
    }
}

/// [`GraphStore::tell`] inside the caller's transaction.
pub(crate) fn tell_in(
    conn: &Connection,
    path: &Path,
    statements: &[Statement],
    source: &FactSource,
    now: i64,
    embedder: Option<&dyn Embedder>,
) -> Result<TellReport, GraphError> {
    let mut report = TellReport::default();
    for statement in statements {
        if statement.facts.is_empty() && statement.events.is_empty() {
            continue;
        }
        let sentence = sentence_id(conn, path, &statement.sentence)?;
        let mut fact_ids = Vec::with_capacity(statement.facts.len());
        for fact in &statement.facts {
            let ctx = Claim {
                conn,
                path,
                sentence,
                text: &statement.sentence,
                source,
                now,
            };
            match ctx.apply(fact, &mut report) {
                Ok(id) => {
                    // A relation stated (not ended) in a turn noted with scenes belongs to them.
                    if let Some(rid) = id
                        && fact.mode != FactMode::Ended
                    {
                        crate::scene::tag_from_turn(conn, path, &source.turn_id, rid, now)?;
                    }
                    fact_ids.push(id);
                }
                Err(e @ (GraphError::InvalidName { .. } | GraphError::InvalidPredicate { .. })) => {
                    report.rejected.push(e.to_string());
                    fact_ids.push(None);
                }
                Err(e) => return Err(e),
            }
        }
        for event in &statement.events {
            let relation = event.fact.and_then(|i| fact_ids.get(i).copied().flatten());
            match add_event(conn, path, event, relation, sentence, source, now) {
                Ok(Added::New(id)) => report.events.push(FactId::Event(id)),
                Ok(Added::Known) => {}
                Ok(Added::Forgotten) => report.forgotten += 1,
                Err(e @ GraphError::InvalidName { .. }) => report.rejected.push(e.to_string()),
                Err(e) => return Err(e),
            }
        }
        // A statement none of whose claims was kept (each forgotten from this source, refused,
        // or ending nothing) leaves no sentence behind: a forgotten fact's words distilled
        // again must not come back into the file as an orphan row.
        super::entities::sweep_orphans(conn, path, &[], &[sentence])?;
    }
    if let Some(embedder) = embedder {
        embed_new(conn, path, embedder, &report.inserted)?;
    }
    Ok(report)
}

/// One claim being applied: the sentence it came from and the transaction it is written in.
struct Claim<'a> {
    conn: &'a Connection,
    path: &'a Path,
    sentence: i64,
    text: &'a str,
    source: &'a FactSource,
    now: i64,
}

/// An open or past relation row, as the write path needs it.
#[derive(Clone, Copy)]
struct Row {
    id: i64,
    object: i64,
    valid_from: i64,
}

impl Claim<'_> {
    /// Applies `fact`; returns the relation it landed on, or `None` when it was forgotten
    /// from this source or ended nothing.
    fn apply(&self, fact: &Fact, report: &mut TellReport) -> Result<Option<i64>, GraphError> {
        let (conn, path) = (self.conn, self.path);
        let subject = validate_name(&fact.subject)?;
        let object = validate_name(&fact.object)?;
        let predicate = validate_predicate(&fact.predicate)?;
        let key = fact_key(&subject, predicate, &object);
        if self.forgotten(&key)? {
            report.forgotten += 1;
            return Ok(None);
        }
        let single = predicate_single(conn, path, predicate)?;
        let s = upsert_entity(conn, path, &subject, fact.subject_kind, self.now)?;
        let o = upsert_entity(conn, path, &object, fact.object_kind, self.now)?;
        let from = fact
            .valid_from
            .as_ref()
            .map_or(self.source.said_ms, |d| d.start_ms);
        let confidence = fact.confidence.clamp(0.05, 1.0);
        let same = self.open_rows(s, predicate, Some(o))?.first().copied();

        if fact.mode == FactMode::Ended {
            let Some(row) = same else { return Ok(None) };
            self.close(row.id, from.max(row.valid_from))?;
            self.provenance(row.id, "ended")?;
            report.closed.push(FactId::Relation(row.id));
            return Ok(Some(row.id));
        }
        if let Some(row) = same {
            if self.provenance(row.id, "asserted")? {
                self.reinforce(row.id, confidence, from)?;
                report.merged.push(FactId::Relation(row.id));
            }
            return Ok(Some(row.id));
        }
        let others = if single {
            self.open_rows(s, predicate, None)?
        } else {
            Vec::new()
        };
        let fields = NewRow {
            subject: s,
            predicate,
            object: o,
            single,
            key: &key,
            confidence,
            tokens: self.tokens(&subject, predicate, &object)?,
        };
        if fact.mode == FactMode::Corrects && !others.is_empty() {
            let from = others.iter().map(|r| r.valid_from).min().unwrap_or(from);
            let id = self.insert(&fields, from, None)?;
            for other in &others {
                self.conn
                    .execute(
                        "UPDATE relations SET superseded_ms = ?2, superseded_by = ?3 WHERE id = ?1",
                        params![other.id, self.now, id],
                    )
                    .ctx("supersede", path)?;
                // The superseded record keeps the sentence that corrected it: "why not Braga?"
                self.provenance(other.id, "corrected")?;
                report.superseded.push(FactId::Relation(other.id));
            }
            self.provenance(id, "asserted")?;
            report.inserted.push(FactId::Relation(id));
            return Ok(Some(id));
        }
        // A value whose start falls inside a recorded past period of the same value is that
        // period told again (a cold item re-distilled, or another source dating it the same):
        // it merges there. Matching on the period rather than only on an exact end (below)
        // keeps a repeat a repeat after the slot changed around it — the open value dated
        // earlier, replaced, or forgotten with an earlier value restored — which otherwise
        // stored the same past value twice.
        if let Some(past) = self.past_row_holding(s, predicate, o, from)? {
            if self.provenance(past.id, "asserted")? {
                self.reinforce(past.id, confidence, from)?;
                report.merged.push(FactId::Relation(past.id));
            }
            return Ok(Some(past.id));
        }
        // A value older than the open one (cold items distilled out of order) is history: it
        // held until the open value began, and the open value stays current.
        if let Some(newer) = others
            .iter()
            .filter(|r| r.valid_from > from)
            .map(|r| r.valid_from)
            .min()
        {
            if let Some(past) = self.past_row(s, predicate, o, newer)? {
                if self.provenance(past.id, "asserted")? {
                    self.reinforce(past.id, confidence, from)?;
                    report.merged.push(FactId::Relation(past.id));
                }
                return Ok(Some(past.id));
            }
            let id = self.insert(&fields, from, Some(newer))?;
            self.provenance(id, "asserted")?;
            report.inserted.push(FactId::Relation(id));
            return Ok(Some(id));
        }
        for other in &others {
            self.close(other.id, from.max(other.valid_from))?;
            report.closed.push(FactId::Relation(other.id));
        }
        let id = self.insert(&fields, from, None)?;
        self.provenance(id, "asserted")?;
        report.inserted.push(FactId::Relation(id));
        Ok(Some(id))
    }

    fn forgotten(&self, key: &str) -> Result<bool, GraphError> {
        let Some(cold) = self.source.cold_item else {
            return Ok(false);
        };
        self.conn
            .query_row(
                "SELECT 1 FROM tombstones WHERE cold_item = ?1 AND fact_key = ?2",
                params![cold, tombstone_key(key)],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
            .ctx("tombstone", self.path)
    }

    /// Open rows of (`s`, `p`), of object `o` when given, else of any other object.
    fn open_rows(&self, s: i64, p: &str, o: Option<i64>) -> Result<Vec<Row>, GraphError> {
        const OP: &str = "open_rows";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, object_id, valid_from_ms FROM relations \
                 WHERE subject_id = ?1 AND predicate = ?2 \
                 AND superseded_ms IS NULL AND valid_to_ms IS NULL \
                 AND (?3 IS NULL OR object_id = ?3)",
            )
            .ctx(OP, self.path)?;
        let rows = stmt
            .query_map(params![s, p, o], |r| {
                Ok(Row {
                    id: r.get(0)?,
                    object: r.get(1)?,
                    valid_from: r.get(2)?,
                })
            })
            .ctx(OP, self.path)?;
        let rows: Vec<Row> = rows.collect::<Result<_, _>>().ctx(OP, self.path)?;
        debug_assert!(o.is_none() || rows.iter().all(|r| Some(r.object) == o));
        Ok(rows)
    }

    /// The past row of (`s`, `p`, `o`) that ended when `until` began.
    fn past_row(&self, s: i64, p: &str, o: i64, until: i64) -> Result<Option<Row>, GraphError> {
        self.conn
            .query_row(
                "SELECT id, object_id, valid_from_ms FROM relations \
                 WHERE subject_id = ?1 AND predicate = ?2 AND object_id = ?3 \
                 AND superseded_ms IS NULL AND valid_to_ms = ?4",
                params![s, p, o, until],
                |r| {
                    Ok(Row {
                        id: r.get(0)?,
                        object: r.get(1)?,
                        valid_from: r.get(2)?,
                    })
                },
            )
            .optional()
            .ctx("past_row", self.path)
    }

    /// The latest-starting past (closed, unsuperseded) row of (`s`, `p`, `o`) whose period
    /// holds `at`.
    fn past_row_holding(
        &self,
        s: i64,
        p: &str,
        o: i64,
        at: i64,
    ) -> Result<Option<Row>, GraphError> {
        self.conn
            .query_row(
                "SELECT id, object_id, valid_from_ms FROM relations \
                 WHERE subject_id = ?1 AND predicate = ?2 AND object_id = ?3 \
                 AND superseded_ms IS NULL AND valid_from_ms <= ?4 AND ?4 < valid_to_ms \
                 ORDER BY valid_from_ms DESC, id DESC LIMIT 1",
                params![s, p, o, at],
                |r| {
                    Ok(Row {
                        id: r.get(0)?,
                        object: r.get(1)?,
                        valid_from: r.get(2)?,
                    })
                },
            )
            .optional()
            .ctx("past_row_holding", self.path)
    }

    fn close(&self, id: i64, at: i64) -> Result<(), GraphError> {
        self.conn
            .execute(
                "UPDATE relations SET valid_to_ms = ?2 WHERE id = ?1",
                params![id, at],
            )
            .ctx("close", self.path)
            .map(drop)
    }

    /// Another mention: confidence moves halfway-weighted toward 1 and the start of validity
    /// moves earlier if this statement dates it earlier.
    fn reinforce(&self, id: i64, confidence: f64, from: i64) -> Result<(), GraphError> {
        const OP: &str = "reinforce";
        self.conn
            .execute(
                "UPDATE relations SET mentions = mentions + 1, \
                 confidence = min(1.0, confidence + (1.0 - confidence) * ?2 * 0.5), \
                 valid_from_ms = CASE WHEN valid_to_ms IS NULL OR ?3 <= valid_to_ms \
                     THEN min(valid_from_ms, ?3) ELSE valid_from_ms END \
                 WHERE id = ?1",
                params![id, confidence, from],
            )
            .ctx(OP, self.path)?;
        let sentences: i64 = self
            .conn
            .query_row(
                "SELECT count(DISTINCT sentence_id) FROM provenance WHERE relation_id = ?1",
                [id],
                |r| r.get(0),
            )
            .ctx(OP, self.path)?;
        if sentences <= MAX_INDEXED_SENTENCES {
            self.conn
                .execute(
                    "UPDATE relations SET tokens = tokens || ' ' || ?2 WHERE id = ?1 \
                     AND instr(tokens, ?2) = 0",
                    params![id, index_tokens(self.text)],
                )
                .ctx(OP, self.path)?;
        }
        Ok(())
    }

    /// Records that this sentence of this source stated (or ended, or corrected) relation
    /// `id`; false when that was already recorded, so a repeated write is not a new mention.
    fn provenance(&self, id: i64, role: &str) -> Result<bool, GraphError> {
        let n = self
            .conn
            .execute(
                "INSERT INTO provenance (relation_id, role, sentence_id, cold_item, turn_id, said_ms) \
                 SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE NOT EXISTS (SELECT 1 FROM provenance \
                 WHERE relation_id = ?1 AND role = ?2 AND sentence_id = ?3 AND cold_item IS ?4)",
                params![
                    id,
                    role,
                    self.sentence,
                    self.source.cold_item,
                    self.source.turn_id,
                    self.source.said_ms
                ],
            )
            .ctx("provenance", self.path)?;
        Ok(n == 1)
    }

    fn tokens(&self, subject: &str, predicate: &str, object: &str) -> Result<String, GraphError> {
        let words = predicate_words(self.conn, self.path, predicate)?;
        Ok(index_tokens(&format!(
            "{subject} {words} {object} {}",
            self.text
        )))
    }

    fn insert(&self, row: &NewRow<'_>, from: i64, to: Option<i64>) -> Result<i64, GraphError> {
        self.conn
            .execute(
                "INSERT INTO relations (subject_id, predicate, object_id, single_valued, fact_key, \
                 confidence, mentions, valid_from_ms, valid_to_ms, recorded_ms, tokens) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8, ?9, ?10)",
                params![
                    row.subject,
                    row.predicate,
                    row.object,
                    row.single,
                    row.key,
                    row.confidence,
                    from,
                    to,
                    self.now,
                    row.tokens
                ],
            )
            .ctx("insert_relation", self.path)?;
        Ok(self.conn.last_insert_rowid())
    }
}

struct NewRow<'a> {
    subject: i64,
    predicate: &'a str,
    object: i64,
    single: bool,
    key: &'a str,
    confidence: f64,
    tokens: String,
}

/// What became of a dated event.
enum Added {
    New(i64),
    /// Already stored from this source.
    Known,
    /// The user forgot it from this source.
    Forgotten,
}

/// Stores a dated event. The same event from the same source is stored once.
fn add_event(
    conn: &Connection,
    path: &Path,
    event: &EventSpec,
    relation: Option<i64>,
    sentence: i64,
    source: &FactSource,
    now: i64,
) -> Result<Added, GraphError> {
    const OP: &str = "add_event";
    let subject = validate_name(&event.subject)?;
    let what = event.what.trim();
    let key = fact_key(&subject, "event", what);
    if let Some(cold) = source.cold_item {
        let gone: Option<i64> = conn
            .query_row(
                "SELECT 1 FROM tombstones WHERE cold_item = ?1 AND fact_key = ?2",
                params![cold, tombstone_key(&key)],
                |r| r.get(0),
            )
            .optional()
            .ctx(OP, path)?;
        if gone.is_some() {
            return Ok(Added::Forgotten);
        }
    }
    let existing: Option<i64> = conn
        .query_row(
            "SELECT id FROM events WHERE event_key = ?1 AND cold_item IS ?2",
            params![key, source.cold_item],
            |r| r.get(0),
        )
        .optional()
        .ctx(OP, path)?;
    if existing.is_some() {
        return Ok(Added::Known);
    }
    let s = upsert_entity(conn, path, &subject, "person", now)?;
    let (start, end) = (
        event.when.start_ms,
        event.when.end_ms.max(event.when.start_ms + 1),
    );
    conn.execute(
        "INSERT INTO events (subject_id, what, event_key, relation_id, start_ms, end_ms, phrase, \
         sentence_id, cold_item, turn_id, said_ms, recorded_ms, tokens) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            s,
            what,
            key,
            relation,
            start,
            end,
            event.when.phrase,
            sentence,
            source.cold_item,
            source.turn_id,
            source.said_ms,
            now,
            index_tokens(&format!("{subject} {what}"))
        ],
    )
    .ctx(OP, path)?;
    Ok(Added::New(conn.last_insert_rowid()))
}

/// Embeds the search text of newly inserted relations in the embedder's space. A failing
/// embedder costs the vectors, not the facts: keyword recall still finds them.
fn embed_new(
    conn: &Connection,
    path: &Path,
    embedder: &dyn Embedder,
    inserted: &[FactId],
) -> Result<(), GraphError> {
    const OP: &str = "embed";
    let mut ids = Vec::new();
    let mut texts = Vec::new();
    for id in inserted {
        let FactId::Relation(id) = *id else { continue };
        let text: String = conn
            .query_row(
                "SELECT e1.name || ' ' || r.predicate || ' ' || e2.name || '. ' || \
                 coalesce((SELECT s.text FROM provenance p JOIN sentences s ON s.id = p.sentence_id \
                 WHERE p.relation_id = r.id ORDER BY p.id LIMIT 1), '') \
                 FROM relations r JOIN entities e1 ON e1.id = r.subject_id \
                 JOIN entities e2 ON e2.id = r.object_id WHERE r.id = ?1",
                [id],
                |r| r.get(0),
            )
            .ctx(OP, path)?;
        ids.push(id);
        texts.push(text);
    }
    if ids.is_empty() {
        return Ok(());
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = match embedder.embed_batch(&refs) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "graph: embedding new facts failed; they are found by keyword only");
            return Ok(());
        }
    };
    let fingerprint = embedder.fingerprint().to_string();
    let mut put = conn
        .prepare_cached(
            "INSERT OR REPLACE INTO relation_vectors (relation_id, fingerprint, vector) VALUES (?1, ?2, ?3)",
        )
        .ctx(OP, path)?;
    for (id, vector) in ids.iter().zip(vectors) {
        let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        put.execute(params![id, fingerprint, blob]).ctx(OP, path)?;
    }
    Ok(())
}
